//! Login sessions: each user lists and revokes their own, a session ends when idle and at its
//! absolute age however busy, and a changed password ends the user's other sessions.

use super::actor;
use crate::on_both_backends;
use am_domain::read::audit::AuditFilter;
use am_domain::roles::Role;
use am_services::{
    ServiceError, Services, Settings,
    accounts::{self, people, sessions},
    audit,
    entity::sessions as rows,
    health::BrokerStatus,
};
use chrono::{Duration, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, sea_query::Expr};

on_both_backends!(
    own_sessions_are_listed_and_revoked_and_nobody_elses,
    a_session_ends_when_idle_and_at_its_absolute_age,
    a_changed_password_ends_the_other_sessions,
);

const PW: &str = "correct horse battery";

async fn setup(db: &DatabaseConnection) -> Services {
    let admin = actor(Role::Admin);
    for (name, role) in [("dora", Role::Operator), ("eve", Role::Viewer)] {
        accounts::create_user(db, &admin, name, PW, role)
            .await
            .expect("a user");
    }
    Services::new(db.clone(), BrokerStatus::default(), Settings::default())
}

async fn login(
    s: &Services,
    name: &str,
    from: &str,
    browser: &str,
) -> (accounts::Principal, String) {
    let p = accounts::authenticate(s, name, PW, from)
        .await
        .expect("login");
    let secret = accounts::create_session(s, &p, Some(browser))
        .await
        .expect("a session");
    (p, secret)
}

async fn live(s: &Services, secret: &str) -> bool {
    accounts::resolve_session(s, secret)
        .await
        .expect("reads")
        .is_some()
}

async fn own_sessions_are_listed_and_revoked_and_nobody_elses(db: &DatabaseConnection) {
    let s = setup(db).await;
    let (dora, laptop) = login(&s, "dora", "10.0.0.1", "Firefox on the laptop").await;
    let (_, phone) = login(&s, "dora", "10.0.0.2", "Safari on the phone").await;
    let (eve, eves) = login(&s, "eve", "10.0.0.9", "curl").await;

    let mine = sessions::list_own(&s, &dora, Some(&laptop))
        .await
        .expect("lists");
    assert_eq!(mine.len(), 2, "only her own: {mine:?}");
    let current: Vec<bool> = mine.iter().map(|m| m.current).collect();
    assert_eq!(current.iter().filter(|c| **c).count(), 1);
    let this = mine.iter().find(|m| m.current).expect("this one");
    assert_eq!(this.address.as_deref(), Some("10.0.0.1"));
    assert_eq!(this.user_agent.as_deref(), Some("Firefox on the laptop"));
    let other = mine.iter().find(|m| !m.current).expect("the phone").clone();
    assert_eq!(other.address.as_deref(), Some("10.0.0.2"));
    assert!(
        !other.handle.is_empty()
            && !laptop.contains(&other.handle)
            && !phone.contains(&other.handle),
        "a handle is no part of a secret"
    );

    // Eve cannot end Dora's session, whatever handle she sends.
    let e = sessions::revoke_own(db, &eve, &other.handle)
        .await
        .expect_err("not hers");
    assert!(matches!(e, ServiceError::NotFound(_)), "{e:?}");
    assert!(live(&s, &phone).await);

    sessions::revoke_own(db, &dora, &other.handle)
        .await
        .expect("revoked");
    assert!(!live(&s, &phone).await, "the phone is signed out");
    assert!(live(&s, &laptop).await && live(&s, &eves).await);
    let entries = audit::list(
        db,
        &actor(Role::Admin),
        &AuditFilter {
            action: Some("revoke_session".into()),
            ..Default::default()
        },
        None,
        10,
    )
    .await
    .expect("audit");
    assert_eq!(entries.entries.len(), 1);
    assert_eq!(entries.entries[0].actor, "dora");
}

async fn a_session_ends_when_idle_and_at_its_absolute_age(db: &DatabaseConnection) {
    let s = setup(db).await;
    let (_, idle) = login(&s, "dora", "10.0.0.1", "a").await;
    let (_, old) = login(&s, "dora", "10.0.0.1", "b").await;
    let (dora, fresh) = login(&s, "dora", "10.0.0.1", "c").await;
    let now = Utc::now();
    let sessions_of = |agent: &str| {
        rows::Entity::update_many().filter(rows::Column::UserAgent.eq(agent.to_owned()))
    };
    // Not used for longer than the idle time.
    sessions_of("a")
        .col_expr(
            rows::Column::ExpiresAt,
            Expr::value(now - Duration::minutes(1)),
        )
        .exec(db)
        .await
        .expect("ages");
    // Used a minute ago, but started longer ago than the absolute age.
    sessions_of("b")
        .col_expr(
            rows::Column::CreatedAt,
            Expr::value(now - s.settings.session_max_age - Duration::minutes(1)),
        )
        .col_expr(
            rows::Column::LastSeenAt,
            Expr::value(now - Duration::minutes(2)),
        )
        .exec(db)
        .await
        .expect("ages");
    assert!(!live(&s, &idle).await, "idle too long");
    assert!(!live(&s, &old).await, "too old, however busy");
    assert!(live(&s, &fresh).await);
    let listed = sessions::list_own(&s, &dora, None).await.expect("lists");
    assert_eq!(
        listed
            .iter()
            .map(|l| l.user_agent.as_deref())
            .collect::<Vec<_>>(),
        [Some("c")],
        "neither the idle one nor the old one is listed"
    );
    assert!(listed[0].expires_at <= listed[0].created_at + s.settings.session_max_age);
}

async fn a_changed_password_ends_the_other_sessions(db: &DatabaseConnection) {
    let s = setup(db).await;
    let (dora, here) = login(&s, "dora", "10.0.0.1", "here").await;
    let (_, there) = login(&s, "dora", "10.0.0.2", "there").await;
    people::change_own_password(&s, &dora, PW, "a brand new passphrase", Some(&here))
        .await
        .expect("changed");
    assert!(live(&s, &here).await, "the session that asked goes on");
    assert!(!live(&s, &there).await, "every other one is signed out");
}
