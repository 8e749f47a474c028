//! P2: many schedule groups due in the same second, from the fire time to the broker's
//! confirmation of every launch command.

use crate::support::{
    APP, Round, amqp_url, count, env_or, hosts, memory, ms, percentile, publish_all, publisher,
    queue_depth, reset_peak, start_manager, stop_manager,
};
use am_domain::{
    catalog::Catalog,
    validate::validate_catalog,
    wire::{self, Heartbeat, ToManager},
};
use am_services::{
    Principal, catalog, db,
    entity::{activations, outbox},
    registry,
};
use anyhow::{Context, Result};
use chrono::{DateTime, Duration as ChronoDuration, Timelike, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect,
};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn p2_catalog(groups: usize, hosts: &[String]) -> Result<Catalog> {
    let settings: Vec<Value> = (0..groups)
        .map(|i| {
            json!({
                "id": format!("{APP}.job.{i}"), "application": APP, "agent": "job",
                "kind": "scheduled", "parameters": { "n": i }
            })
        })
        .collect();
    // A yearly placeholder: the real fire time is set once everything else is ready.
    let schedule_groups: Vec<Value> = (0..groups)
        .map(|i| {
            json!({
                "id": format!("{APP}.g{i}"), "application": APP, "cron": "0 0 0 1 1 *",
                "time_zone": "UTC", "members": [format!("{APP}.job.{i}")]
            })
        })
        .collect();
    Ok(serde_json::from_value(json!({
        "version": 1,
        "applications": [{ "id": APP, "title": "Benchmark", "default_pool": "bench-pool" }],
        "pools": [{ "id": "bench-pool", "title": "Benchmark hosts", "hosts": hosts }],
        "agents": [{
            "application": APP, "id": "job", "title": "Job", "input": "standalone",
            "concurrency": "ANY", "overlap": "allow",
            "parameters": [{ "name": "n", "title": "N", "type": "integer" }]
        }],
        "launch_settings": settings,
        "schedule_groups": schedule_groups,
    }))?)
}

fn heartbeat(host: &str) -> Heartbeat {
    Heartbeat {
        application: APP.into(),
        host: host.into(),
        capacity: 1000,
        running: Vec::new(),
        load: Some(0.1),
        dropped_reports: 0,
        quarantined: 0,
        at: Utc::now(),
    }
}

/// What the sampler saw, every few milliseconds, on its own connection.
#[derive(Default)]
struct Timeline {
    /// Commit time (first sample that saw it) of each fire, in order of appearance.
    committed: Vec<DateTime<Utc>>,
    first_sent: Option<DateTime<Utc>>,
    all_sent: Option<DateTime<Utc>>,
}

/// The manager's database, as `db::connect` opens it; with `BENCH_SQL_LOG` set, every
/// statement is logged with its duration (`RUST_LOG=sqlx::query=info`).
async fn manager_db(url: &str) -> Result<DatabaseConnection> {
    if std::env::var_os("BENCH_SQL_LOG").is_none() {
        return Ok(db::connect(url).await?);
    }
    let mut opts = sea_orm::ConnectOptions::new(url.to_owned());
    opts.max_connections(4)
        .min_connections(1)
        .sqlx_logging(true)
        .sqlx_logging_level(tracing::log::LevelFilter::Info);
    opts.map_sqlx_sqlite_opts(|o| {
        o.foreign_keys(true)
            .busy_timeout(Duration::from_secs(10))
            .journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
    });
    Ok(sea_orm::Database::connect(opts).await?)
}

pub async fn run() -> Result<Value> {
    let groups: usize = env_or("BENCH_GROUPS", 10_000);
    let lead: i64 = env_or("BENCH_LEAD_SECS", 30);
    let hosts = hosts(env_or("BENCH_HOSTS", 4));
    let round = Round::new()?;
    let conn = manager_db(&round.url).await?;
    db::migrate(&conn).await?;
    let (rss_empty_mb, _) = memory();

    // The catalog, through the import path operators use.
    let doc = p2_catalog(groups, &hosts)?;
    let t = Instant::now();
    validate_catalog(&doc).map_err(|e| anyhow::anyhow!("invalid catalog: {e:?}"))?;
    let validate_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    catalog::import(&conn, &Principal::cli(), doc)
        .await
        .map_err(|e| anyhow::anyhow!("import: {e}"))?;
    let import_ms = t.elapsed().as_secs_f64() * 1000.0;

    // Live nodes with their control queues, so launches are really stored by the broker.
    for h in &hosts {
        registry::record_heartbeat(&conn, &heartbeat(h), Utc::now()).await?;
    }
    let (node_conn, node_channel) = publisher(&amqp_url()).await?;
    for h in &hosts {
        round.topology.declare_node(&node_channel, APP, h).await?;
    }
    let (_, setup_peak_mb) = memory();

    // The fire time: `lead` seconds from now, on a whole second.
    let now = Utc::now();
    let fire_at = (now + ChronoDuration::seconds(lead + 1))
        .with_nanosecond(0)
        .context("whole second")?;
    let cron = format!(
        "{} {} {} * * *",
        fire_at.second(),
        fire_at.minute(),
        fire_at.hour()
    );
    conn.execute_unprepared(&format!(
        "UPDATE schedule_groups SET cron = '{cron}', next_fire_at = NULL"
    ))
    .await?;

    reset_peak();
    let (rss_start_mb, _) = memory();
    let stop = CancellationToken::new();
    let started = Instant::now();
    let (broker, tasks) = start_manager(&round, &conn, &stop);

    // Nodes keep heartbeating through the reports queue, as real ones do.
    let beat_stop = stop.child_token();
    let beat_channel = node_channel.clone();
    let reports_queue = round.topology.names().reports_queue();
    let beat_hosts = hosts.clone();
    let beats = tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            tokio::select! {
                _ = every.tick() => {}
                () = beat_stop.cancelled() => return,
            }
            let beat = |i: usize| wire::encode(&ToManager::Heartbeat(heartbeat(&beat_hosts[i])));
            if let Err(e) = publish_all(&beat_channel, &reports_queue, beat_hosts.len(), beat).await
            {
                tracing::warn!(error = %e, "heartbeat not published");
            }
        }
    });

    // Sample on a connection of its own, so the runtime's pool is not shared.
    let probe = db::connect(&round.url).await?;
    let mut armed_ms = f64::NAN;
    loop {
        let armed = count(
            &probe,
            "SELECT count(*) FROM schedule_groups WHERE next_fire_at IS NOT NULL",
        )
        .await?;
        if armed as usize >= groups {
            armed_ms = started.elapsed().as_secs_f64() * 1000.0;
            break;
        }
        if Utc::now() >= fire_at {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let slack_ms = ms(fire_at - Utc::now());

    let mut timeline = Timeline::default();
    let deadline = fire_at + ChronoDuration::seconds(120);
    let expected = groups as i64;
    let mut peak_rss = 0.0_f64;
    let trace = std::env::var_os("BENCH_TRACE").is_some();
    let mut last = (0, 0);
    loop {
        let fired = count(
            &probe,
            "SELECT count(*) FROM activations WHERE fire_key IS NOT NULL",
        )
        .await?;
        let sent = count(
            &probe,
            "SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL",
        )
        .await?;
        let seen = Utc::now();
        let rss = memory().0;
        peak_rss = peak_rss.max(rss);
        if trace && (fired, sent) != last {
            last = (fired, sent);
            eprintln!(
                "t={:>6.0} ms fired={fired:>6} confirmed={sent:>6} rss={rss:.0} MB",
                ms(seen - fire_at)
            );
        }
        while (timeline.committed.len() as i64) < fired {
            timeline.committed.push(seen);
        }
        if sent > 0 && timeline.first_sent.is_none() {
            timeline.first_sent = Some(seen);
        }
        if fired >= expected && sent >= expected {
            timeline.all_sent = Some(seen);
            break;
        }
        if seen > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(if seen < fire_at { 50 } else { 10 })).await;
    }
    let (_, peak_mb) = memory();

    // Lags from the database: when each fire was recorded, when each command was confirmed.
    let created: Vec<DateTime<Utc>> = activations::Entity::find()
        .select_only()
        .column(activations::Column::CreatedAt)
        .filter(activations::Column::FireKey.is_not_null())
        .into_tuple()
        .all(&probe)
        .await?;
    let sent_at: Vec<Option<DateTime<Utc>>> = outbox::Entity::find()
        .select_only()
        .column(outbox::Column::SentAt)
        .into_tuple()
        .all(&probe)
        .await?;
    let mut created_lag: Vec<f64> = created.iter().map(|c| ms(*c - fire_at)).collect();
    created_lag.sort_by(f64::total_cmp);
    let mut committed_lag: Vec<f64> = timeline
        .committed
        .iter()
        .map(|c| ms(*c - fire_at))
        .collect();
    committed_lag.sort_by(f64::total_cmp);
    let confirmed: Vec<DateTime<Utc>> = sent_at.iter().flatten().copied().collect();
    let last_confirmed = confirmed.iter().max().map(|t| ms(*t - fire_at));
    let unsent = sent_at.len() - confirmed.len();
    let mut stored = 0;
    for h in &hosts {
        stored += queue_depth(&node_channel, &round.topology.names().node_queue(APP, h)).await?;
    }

    beats.abort();
    stop_manager(&stop, broker, tasks).await;
    round.cleanup(&node_conn, &hosts).await;
    let _ = node_conn.close(200, "bench done".into()).await;

    Ok(json!({
        "groups": groups,
        "validate_ms": validate_ms.round(),
        "import_ms": import_ms.round(),
        "setup_peak_mb": setup_peak_mb.round(),
        "armed_ms": armed_ms.round(),
        "slack_before_fire_ms": slack_ms.round(),
        "fired": created.len(),
        "recorded_p50_ms": percentile(&created_lag, 50.0).round(),
        "recorded_p99_ms": percentile(&created_lag, 99.0).round(),
        "recorded_max_ms": percentile(&created_lag, 100.0).round(),
        "committed_p50_ms": percentile(&committed_lag, 50.0).round(),
        "committed_p99_ms": percentile(&committed_lag, 99.0).round(),
        "committed_max_ms": percentile(&committed_lag, 100.0).round(),
        "first_confirmed_ms": timeline.first_sent.map_or(f64::NAN, |t| ms(t - fire_at)).round(),
        "all_confirmed_ms": last_confirmed.unwrap_or(f64::NAN).round(),
        "all_confirmed_seen_ms": timeline.all_sent.map_or(f64::NAN, |t| ms(t - fire_at)).round(),
        "commands": sent_at.len(),
        "unsent": unsent,
        "stored_in_node_queues": stored,
        "rss_empty_db_mb": rss_empty_mb.round(),
        "rss_start_mb": rss_start_mb.round(),
        "rss_peak_mb": peak_mb.max(peak_rss).round(),
    }))
}
