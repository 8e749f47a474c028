//! P3: failure reports from the reports queue into `failure_logs`, nothing lost or doubled.

use crate::support::{
    APP, Round, amqp_url, count, env_or, hosts, memory, publish_all, publisher, queue_depth,
    reset_peak, start_manager, stop_manager,
};
use am_domain::wire::{self, ActivationId, FailureReport, ToManager};
use am_services::db;
use anyhow::{Result, bail};
use chrono::Utc;
use lapin::{options::QueueDeclareOptions, types::FieldTable};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn failure_report(i: usize, hosts: &[String]) -> Vec<u8> {
    // Fifty reports per activation, as a busy message agent failing on many messages.
    let activation = uuid::Uuid::from_u128(0xbe9c_0000_0000_0000 + (i / 50) as u128);
    let mut details =
        String::from("java.lang.IllegalStateException: invoice total does not match its lines\n");
    for frame in 0..14 {
        details.push_str(&format!(
            "\tat com.example.billing.export.InvoiceExporter.step{frame}(InvoiceExporter.java:{})\n",
            100 + frame
        ));
    }
    wire::encode(&ToManager::Failure(FailureReport {
        application: APP.into(),
        host: hosts[i % hosts.len()].clone(),
        activation_id: ActivationId(activation.to_string()),
        launch_setting: format!("{APP}.invoice-export.{}", i % 20),
        agent: "invoice-export".into(),
        error_type: "java.lang.IllegalStateException".into(),
        message: format!(
            "invoice {i:08} of customer 4711: total 1520.00 does not match the sum of its lines 1519.99"
        ),
        details,
        data_message_id: Some(format!("msg-{i:08}")),
        attempt: 1 + (i % 3) as u32,
        temporary: false,
        disposition: Some("retry".into()),
        at: Utc::now(),
        report_id: Some(uuid::Uuid::new_v4().to_string()),
        replay: None,
    }))
}

pub async fn run(live: bool) -> Result<Value> {
    let n: usize = env_or("BENCH_REPORTS", 50_000);
    let hosts = hosts(4);
    let round = Round::new()?;
    let conn = db::connect(&round.url).await?;
    db::migrate(&conn).await?;
    let probe = db::connect(&round.url).await?;
    let (pub_conn, channel) = publisher(&amqp_url()).await?;
    round.topology.declare_manager_side(&channel).await?;
    let queue = round.topology.names().reports_queue();
    let report_bytes = failure_report(0, &hosts).len();

    reset_peak();
    let stop = CancellationToken::new();
    let mut publish_ms = f64::NAN;
    let (started, broker, tasks, publishing) = if live {
        let (broker, tasks) = start_manager(&round, &conn, &stop);
        // Wait for the consumer before the clock starts.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let q = channel
                .queue_declare(
                    queue.as_str().into(),
                    QueueDeclareOptions {
                        passive: true,
                        ..QueueDeclareOptions::default()
                    },
                    FieldTable::default(),
                )
                .await?;
            if q.consumer_count() > 0 {
                break;
            }
            if Instant::now() > deadline {
                bail!("the report consumer did not start");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let started = Instant::now();
        let ch = channel.clone();
        let q = queue.clone();
        let publishing = tokio::spawn(async move {
            let t = Instant::now();
            publish_all(&ch, &q, n, |i| failure_report(i, &hosts))
                .await
                .map(|()| t.elapsed())
        });
        (started, broker, tasks, Some(publishing))
    } else {
        let t = Instant::now();
        publish_all(&channel, &queue, n, |i| failure_report(i, &hosts)).await?;
        publish_ms = t.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        let (broker, tasks) = start_manager(&round, &conn, &stop);
        (started, broker, tasks, None)
    };

    let deadline = Instant::now() + Duration::from_secs(600);
    let mut first_row = None;
    let mut done = None;
    loop {
        let stored = count(&probe, "SELECT count(*) FROM failure_logs").await?;
        if stored > 0 && first_row.is_none() {
            first_row = Some(started.elapsed());
        }
        if stored as usize >= n {
            done = Some(started.elapsed());
            break;
        }
        if Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if let Some(p) = publishing {
        publish_ms = p.await??.as_secs_f64() * 1000.0;
    }
    // Anything doubled would arrive within the next batches: give them time, then check.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, peak_mb) = memory();
    let stored = count(&probe, "SELECT count(*) FROM failure_logs").await?;
    let distinct = count(
        &probe,
        "SELECT count(DISTINCT data_message_id) FROM failure_logs",
    )
    .await?;
    let left = queue_depth(&channel, &queue).await?;
    stop_manager(&stop, broker, tasks).await;
    round.cleanup(&pub_conn, &[]).await;
    let _ = pub_conn.close(200, "bench done".into()).await;

    let secs = done.map_or(f64::NAN, |d| d.as_secs_f64());
    let from_first = match (done, first_row) {
        (Some(d), Some(f)) => (d - f).as_secs_f64(),
        _ => f64::NAN,
    };
    Ok(json!({
        "reports": n,
        "report_bytes": report_bytes,
        "publish_ms": publish_ms.round(),
        "publish_per_s": (n as f64 / (publish_ms / 1000.0)).round(),
        "stored_ms": (secs * 1000.0).round(),
        "stored_per_s": (n as f64 / secs).round(),
        "first_row_ms": first_row.map_or(f64::NAN, |f| f.as_secs_f64() * 1000.0).round(),
        "stored_per_s_from_first_row": (n as f64 / from_first).round(),
        "stored": stored,
        "distinct": distinct,
        "lost": n as i64 - distinct,
        "doubled": stored - distinct,
        "left_in_queue": left,
        "rss_peak_mb": peak_mb.round(),
    }))
}
