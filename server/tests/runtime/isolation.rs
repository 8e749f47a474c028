//! Two managers with different prefixes on one broker, whose catalogs name the same data
//! exchange (the same catalog imported twice, a staging beside a production): the first one's
//! exchange is never replaced, deleted or rebound by the second, which reports the conflict
//! instead; each keeps only its own messages.

use crate::topology::Fixture;
use am_domain::notify::Event;
use am_domain::read::notifications::NotificationFilter;
use am_services::{Principal, notifications, testing::Backend};
use lapin::{options::ExchangeDeclareOptions, types::FieldTable};
use serde_json::json;
use server::runtime::topology::pass;

async fn exchange_exists(f: &Fixture, name: &str) -> bool {
    let ch = f.conn.create_channel().await.expect("channel");
    let found = ch
        .exchange_declare(
            name.into(),
            lapin::ExchangeKind::Headers,
            ExchangeDeclareOptions {
                passive: true,
                ..ExchangeDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .is_ok();
    let _ = ch.close(200, "".into()).await;
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_manager_never_touches_the_first_ones_exchange() {
    let a = Fixture::new(Backend::Sqlite).await;
    let b = Fixture::new(Backend::Sqlite).await;
    // Both catalogs give their data queue `events` the same address.
    let shared = a.exchange("shared");
    let catalog = |f: &Fixture, address: &str| {
        let mut c = f.catalog().ls("t.s", "echo", "stream", json!({})).build();
        c.data_queues[0].address = Some(address.to_owned());
        c
    };
    a.seed(catalog(&a, &shared)).await;
    a.reconcile().await;
    a.publish(&shared, 0, 3, &[]).await;
    a.expect_depth(&a.sub("t.s"), 3).await;

    // The second manager meets an exchange of that name that is not its own: it reports the
    // conflict and leaves it alone (no replace, so the first keeps its bindings). Its
    // application has a webhook, which is told once.
    let mut second = catalog(&b, &shared);
    second.applications[0].channels.webhook_url = Some("http://127.0.0.1:9/hook".into());
    b.seed(second.clone()).await;
    let report = pass(&b.w.db, &b.conn, &b.topology, "b", false)
        .await
        .expect("pass")
        .expect("lease");
    assert!(
        report
            .errors
            .iter()
            .any(|e| e.contains(&shared) && e.contains("not this manager's")),
        "{:?}",
        report.errors
    );
    // Recorded for the Broker page and /readyz's detail.
    let conflicts = am_services::topology::conflicts(&b.w.db)
        .await
        .expect("conflicts");
    assert_eq!(conflicts, [format!("exchange `{shared}`")]);
    let told = || async {
        let filter = NotificationFilter {
            event: Some("broker_conflict".into()),
            ..NotificationFilter::default()
        };
        notifications::list(&b.w.db, &Principal::system("test"), &filter, None, None)
            .await
            .expect("notifications")
            .items
    };
    let first = told().await;
    assert_eq!(first.len(), 1, "{first:?}");
    let notice = &first[0].payload;
    assert_eq!(notice.event, Event::BrokerConflict);
    assert_eq!(
        notice.data_queue.as_deref(),
        Some(second.data_queues[0].id.as_str())
    );
    assert_eq!(
        notice.application.as_deref(),
        Some(second.applications[0].id.as_str())
    );
    assert!(notice.summary.contains(&shared), "{}", notice.summary);
    // The next pass meets the same conflict: still reported, not told again.
    let again = pass(&b.w.db, &b.conn, &b.topology, "b", true)
        .await
        .expect("pass")
        .expect("lease");
    assert!(again.errors.iter().any(|e| e.contains(&shared)));
    let after = told().await;
    assert_eq!((after.len(), after[0].count), (1, 1), "{after:?}");
    a.publish(&shared, 3, 3, &[]).await;
    a.expect_depth(&a.sub("t.s"), 6).await;
    // Nothing of the second's is bound to it: it gets no copy.
    assert_eq!(b.depth(&b.sub("t.s")).await.unwrap_or(0), 0);

    // The second moves its data queue to an address of its own (or deletes it): the exchange
    // it never owned is not deleted, and the first still gets every message.
    let own = b.exchange("own");
    b.seed(catalog(&b, &own)).await;
    b.reconcile().await;
    assert!(
        exchange_exists(&a, &shared).await,
        "the first's exchange was deleted"
    );
    a.publish(&shared, 6, 2, &[]).await;
    a.expect_depth(&a.sub("t.s"), 8).await;
    b.publish(&own, 100, 2, &[]).await;
    b.expect_depth(&b.sub("t.s"), 2).await;
    assert_eq!(a.depth(&a.sub("t.s")).await, Some(8));
    // Each deletes what it applied: the second its own exchange, the first the shared one.
    b.finish().await;
    a.finish().await;
}
