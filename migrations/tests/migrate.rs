//! The whole migration cycle (up, constraints, down to zero, up again) on SQLite (a fresh file,
//! and in memory) and on PostgreSQL (a fresh database per test, dropped at the end).
//!
//! PostgreSQL: `AM_TEST_PG_URL` (default `postgres://postgres@127.0.0.1:5432/test`) names a
//! database the test user may connect to and create databases from.

// A test reads as one scenario, set-up to last check: the one-sitting bound of production
// functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

use chrono::{DateTime, TimeZone, Utc};
use migration::{Migrator, MigratorTrait};
use sea_orm::sea_query::{Alias, Expr, ExprTrait, Query, Value};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr, SqlErr,
    Statement,
};
use sea_orm_migration::SchemaManager;
use uuid::Uuid;

type TestResult = Result<(), DbErr>;

const TABLES: [&str; 31] = [
    "catalog_meta",
    "applications",
    "hosts",
    "pools",
    "pool_hosts",
    "data_queues",
    "agents",
    "classifiers",
    "classifier_values",
    "launch_settings",
    "schedule_groups",
    "schedule_group_members",
    "nodes",
    "activations",
    "activation_hosts",
    "activation_events",
    "failure_logs",
    "dead_letters",
    "outbox",
    "notifications",
    "breaker_trips",
    "operations",
    "audit_log",
    "users",
    "api_tokens",
    "sessions",
    "broker_topology",
    "host_quarantines",
    "recovery_counts",
    "throughput_minutes",
    "error_types",
];

/// Indexes created by `CREATE INDEX` (unique constraints inside `CREATE TABLE` get
/// backend-specific names on SQLite, so they are checked by behaviour instead).
const INDEXES: [(&str, &str); 14] = [
    ("pool_hosts", "idx_pool_hosts_host_name"),
    ("classifier_values", "idx_classifier_values_label"),
    ("launch_settings", "idx_launch_settings_current_status"),
    ("schedule_groups", "idx_schedule_groups_next_fire_at"),
    ("activation_hosts", "idx_activation_hosts_status_deadline"),
    ("failure_logs", "idx_failure_logs_drill_down"),
    ("dead_letters", "idx_dead_letters_status_park_until"),
    ("audit_log", "idx_audit_log_entity"),
    ("activations", "idx_activations_created_at"),
    ("dead_letters", "idx_dead_letters_message_id"),
    ("dead_letters", "idx_dead_letters_received_at"),
    ("failure_logs", "idx_failure_logs_data_message_id"),
    ("throughput_minutes", "idx_throughput_minutes_minute"),
    ("classifier_values", "idx_classifier_values_position"),
];

// ---------------------------------------------------------------------------------------------
// Backends

/// Removes the temporary directory of a SQLite test, even when the test panics.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("am-mig-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn sqlite_file_cycle() -> TestResult {
    let dir = TempDir::new();
    let url = format!("sqlite://{}/am.sqlite?mode=rwc", dir.0.display());
    let db = Database::connect(url).await?;
    cycle(&db).await?;
    db.close().await
}

#[tokio::test]
async fn sqlite_memory_cycle() -> TestResult {
    let mut opts = ConnectOptions::new("sqlite::memory:");
    opts.max_connections(1).min_connections(1);
    let db = Database::connect(opts).await?;
    cycle(&db).await?;
    db.close().await
}

fn pg_admin_url() -> String {
    std::env::var("AM_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// `url` with its database replaced by `name` (any query string is kept).
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let base = match base[authority_start..].find('/') {
        Some(i) => &base[..authority_start + i],
        None => base,
    };
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

#[tokio::test]
async fn postgres_cycle() -> TestResult {
    let admin_url = pg_admin_url();
    let name = format!("am_mig_{}", Uuid::new_v4().simple());
    let admin = Database::connect(admin_url.as_str()).await?;
    admin
        .execute_unprepared(&format!("CREATE DATABASE {name}"))
        .await?;

    // The test runs in its own task so that a panic still reaches the clean-up below.
    let url = with_database(&admin_url, &name);
    let outcome = tokio::spawn(async move {
        let db = Database::connect(url).await?;
        let result = cycle(&db).await;
        db.close().await?;
        result
    })
    .await;

    let dropped = admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await;
    admin.close().await?;
    match outcome {
        Ok(result) => result?,
        Err(join) => std::panic::resume_unwind(join.into_panic()),
    }
    dropped.map(|_| ())
}

#[test]
fn database_is_replaced_in_urls() {
    assert_eq!(
        with_database("postgres://u@h:5432/test", "x"),
        "postgres://u@h:5432/x"
    );
    assert_eq!(
        with_database("postgres://u@h/test?sslmode=disable", "x"),
        "postgres://u@h/x?sslmode=disable"
    );
    assert_eq!(with_database("postgres://u@h", "x"), "postgres://u@h/x");
}

// ---------------------------------------------------------------------------------------------
// The cycle, the same on every backend

async fn cycle(db: &DatabaseConnection) -> TestResult {
    Migrator::up(db, None).await?;
    assert!(Migrator::get_pending_migrations(db).await?.is_empty());
    assert_eq!(
        Migrator::get_applied_migrations(db).await?.len(),
        Migrator::migrations().len()
    );
    // Up again is a no-op.
    Migrator::up(db, None).await?;
    check_schema(db, true).await?;
    assert_eq!(catalog_revision(db).await?, 0);

    constraints(db).await?;

    let manager = SchemaManager::new(db);
    // One step down: activations keep no trace they began in.
    assert!(manager.has_column("activations", "trace_parent").await?);
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("activations", "trace_parent").await?);
    // One step down: no index of classifier values by their order.
    assert!(
        manager
            .has_index("classifier_values", "idx_classifier_values_position")
            .await?
    );
    Migrator::down(db, Some(1)).await?;
    assert!(
        !manager
            .has_index("classifier_values", "idx_classifier_values_position")
            .await?
    );
    error_types_are_filled(db, &manager).await?;
    // One step down: no per-minute figures.
    assert!(manager.has_table("throughput_minutes").await?);
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_table("throughput_minutes").await?);
    failure_kinds_are_derived(db, &manager).await?;

    // Down one by one: nodes keep no refused changes, then dispatches record no consumed queue.
    for (table, column) in [
        ("nodes", "refused_changes"),
        ("activation_hosts", "consumes"),
    ] {
        assert!(manager.has_column(table, column).await?, "{table}.{column}");
        Migrator::down(db, Some(1)).await?;
        assert!(
            !manager.has_column(table, column).await?,
            "{table}.{column}"
        );
    }

    // One step down: every channel is told every event; groups have no channel of their own.
    for table in ["applications", "launch_settings"] {
        for column in ["webhook_events", "email_events"] {
            assert!(manager.has_column(table, column).await?, "{table}.{column}");
        }
    }
    assert!(manager.has_column("schedule_groups", "webhook_url").await?);
    Migrator::down(db, Some(1)).await?;
    for table in ["applications", "launch_settings", "schedule_groups"] {
        for column in ["webhook_events", "email_events"] {
            assert!(
                !manager.has_column(table, column).await?,
                "{table}.{column}"
            );
        }
    }
    for column in [
        "webhook_url",
        "webhook_secret",
        "webhook_format",
        "notify_email",
    ] {
        assert!(
            !manager.has_column("schedule_groups", column).await?,
            "{column}"
        );
    }
    // One more: no dead man's switch on schedule groups.
    for column in [
        "expect_success_within_ms",
        "last_success_at",
        "watch_from",
        "silence_told_at",
    ] {
        assert!(
            manager.has_column("schedule_groups", column).await?,
            "{column}"
        );
    }
    Migrator::down(db, Some(1)).await?;
    for column in [
        "expect_success_within_ms",
        "last_success_at",
        "watch_from",
        "silence_told_at",
    ] {
        assert!(
            !manager.has_column("schedule_groups", column).await?,
            "{column}"
        );
    }
    // One more: no launch setting asks for every failure to be told.
    assert!(
        manager
            .has_column("launch_settings", "notify_on_failure")
            .await?
    );
    Migrator::down(db, Some(1)).await?;
    assert!(
        !manager
            .has_column("launch_settings", "notify_on_failure")
            .await?
    );
    // One more: sessions without an address or browser.
    assert!(manager.has_column("sessions", "user_agent").await?);
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("sessions", "user_agent").await?);
    assert!(!manager.has_column("sessions", "address").await?);
    // One more: no e-mail addresses to notify.
    assert!(manager.has_column("applications", "notify_email").await?);
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("applications", "notify_email").await?);
    assert!(
        !manager
            .has_column("launch_settings", "notify_email")
            .await?
    );
    // One more: tokens without a role of their own or a last address.
    assert!(manager.has_column("api_tokens", "role").await?);
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("api_tokens", "role").await?);
    assert!(!manager.has_column("api_tokens", "last_used_from").await?);
    // One more: audit entries without an address, and the filter indexes gone.
    assert!(manager.has_column("audit_log", "address").await?);
    assert!(
        manager
            .has_index("audit_log", "idx_audit_log_actor_id")
            .await?
    );
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("audit_log", "address").await?);
    assert!(
        !manager
            .has_index("audit_log", "idx_audit_log_actor_id")
            .await?
    );
    assert!(
        !manager
            .has_index("audit_log", "idx_audit_log_entity_id")
            .await?
    );
    // One more: no webhook format.
    assert!(manager.has_column("applications", "webhook_format").await?);
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("applications", "webhook_format").await?);
    assert!(
        !manager
            .has_column("launch_settings", "webhook_format")
            .await?
    );
    // One more: notifications as first made, no webhook secrets.
    assert!(manager.has_column("notifications", "fold_key").await?);
    assert!(manager.has_column("applications", "webhook_secret").await?);
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("notifications", "fold_key").await?);
    assert!(manager.has_column("notifications", "kind").await?);
    assert!(!manager.has_column("applications", "webhook_secret").await?);
    assert!(
        !manager
            .has_column("launch_settings", "webhook_secret")
            .await?
    );
    // One more: nobody recorded as having disabled anything, no last success.
    for (table, column) in [
        ("launch_settings", "disabled_by"),
        ("launch_settings", "disabled_activation"),
        ("launch_settings", "last_success_at"),
        ("schedule_groups", "disabled_at"),
        ("schedule_groups", "disabled_by"),
        ("schedule_groups", "disabled_activation"),
    ] {
        assert!(manager.has_column(table, column).await?, "{table}.{column}");
    }
    Migrator::down(db, Some(1)).await?;
    assert!(
        !manager
            .has_column("launch_settings", "last_success_at")
            .await?
    );
    assert!(!manager.has_column("schedule_groups", "disabled_at").await?);
    assert!(!manager.has_column("schedule_groups", "disabled_by").await?);
    // One more: no index of runs.
    assert!(
        manager
            .has_index("activations", "idx_activations_status_created_runs")
            .await?
    );
    Migrator::down(db, Some(1)).await?;
    assert!(
        !manager
            .has_index("activations", "idx_activations_status_created_runs")
            .await?
    );
    // One more: dead letters keep no replay outcome.
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("dead_letters", "replay_result").await?);
    assert!(
        !manager
            .has_column("dead_letters", "replay_operation")
            .await?
    );
    assert!(manager.has_table("host_quarantines").await?);
    // One more: no quarantined hosts, no recovery counts.
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_table("host_quarantines").await?);
    assert!(!manager.has_table("recovery_counts").await?);
    assert!(
        manager
            .has_column("launch_settings", "unavailable_for_ms")
            .await?
    );
    // One more: no budget for answers "temporarily unavailable".
    Migrator::down(db, Some(1)).await?;
    assert!(
        !manager
            .has_column("launch_settings", "unavailable_for_ms")
            .await?
    );
    assert!(
        manager
            .has_column("launch_settings", "dead_letter_forward_to")
            .await?
    );
    // One more: no dead-letter forwarding.
    Migrator::down(db, Some(1)).await?;
    assert!(
        !manager
            .has_column("launch_settings", "dead_letter_forward_to")
            .await?
    );
    assert!(
        !manager
            .has_column("dead_letters", "forward_next_at")
            .await?
    );
    assert!(manager.has_column("nodes", "waiting_publication").await?);
    // One more: nodes keep no waiting publication.
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("nodes", "waiting_publication").await?);
    assert!(manager.has_column("nodes", "protocol_version").await?);
    // One more: failure reports lose their ids, nodes their protocol version.
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("failure_logs", "report_id").await?);
    assert!(!manager.has_column("failure_logs", "disposition").await?);
    assert!(!manager.has_column("nodes", "protocol_version").await?);
    assert!(manager.has_table("broker_topology").await?);
    // One more: the broker reconciler's table goes.
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_table("broker_topology").await?);
    // One more: migration 7 added indexes and a nullable column.
    Migrator::down(db, Some(1)).await?;
    assert!(
        !manager
            .has_index("dead_letters", "idx_dead_letters_received_at")
            .await?
    );
    assert!(!manager.has_column("dead_letters", "properties").await?);
    assert!(
        manager
            .has_index("dead_letters", "idx_dead_letters_error_type")
            .await?
    );
    Migrator::up(db, None).await?;
    assert!(
        manager
            .has_index("dead_letters", "idx_dead_letters_received_at")
            .await?
    );
    assert!(manager.has_column("dead_letters", "properties").await?);

    // All the way down, with data still in the tables.
    Migrator::down(db, None).await?;
    check_schema(db, false).await?;
    assert!(Migrator::get_applied_migrations(db).await?.is_empty());

    // And up again from zero.
    Migrator::up(db, None).await?;
    check_schema(db, true).await?;
    assert_eq!(catalog_revision(db).await?, 0);
    constraints(db).await
}

async fn check_schema(db: &DatabaseConnection, present: bool) -> TestResult {
    let manager = SchemaManager::new(db);
    for table in TABLES {
        assert_eq!(manager.has_table(table).await?, present, "table {table}");
    }
    if present {
        for (table, index) in INDEXES {
            assert!(manager.has_index(table, index).await?, "index {index}");
        }
    }
    Ok(())
}

async fn catalog_revision(db: &DatabaseConnection) -> Result<i64, DbErr> {
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT revision FROM catalog_meta WHERE id = 1",
        ))
        .await?
        .ok_or_else(|| DbErr::Custom("catalog_meta has no row 1".to_owned()))?;
    row.try_get("", "revision")
}

/// Inserts fixtures and checks unique keys and foreign keys.
async fn constraints(db: &DatabaseConnection) -> TestResult {
    let now = at(0);
    insert(db, "pools", pool("p1", now)).await?;
    insert(
        db,
        "hosts",
        vec![("name", "h1".into()), ("created_at", now.into())],
    )
    .await?;
    insert(
        db,
        "pool_hosts",
        vec![("pool_id", "p1".into()), ("host_name", "h1".into())],
    )
    .await?;
    insert(db, "applications", application("billing", now)).await?;
    insert(db, "agents", agent("billing", "export", now)).await?;
    insert(db, "launch_settings", launch_setting("ls1", now)).await?;
    insert(db, "launch_settings", launch_setting("ls2", now)).await?;
    insert(db, "schedule_groups", schedule_group("g1", now)).await?;

    // Foreign keys are enforced (SQLite included).
    let orphan = insert(db, "agents", agent("no-such-app", "x", now)).await;
    expect_violation(
        orphan,
        Violation::ForeignKey,
        "agent of an unknown application",
    );
    let bad_host = vec![("pool_id", "p1".into()), ("host_name", "h9".into())];
    let bad_host = insert(db, "pool_hosts", bad_host).await;
    expect_violation(bad_host, Violation::ForeignKey, "pool with an unknown host");

    // Members: one position per group, one membership per launch setting and group.
    insert(db, "schedule_group_members", member("g1", "ls1", 0)).await?;
    let same_position = insert(db, "schedule_group_members", member("g1", "ls2", 0)).await;
    expect_violation(
        same_position,
        Violation::Unique,
        "two members at one position",
    );
    insert(db, "schedule_group_members", member("g1", "ls2", 1)).await?;
    let twice = insert(db, "schedule_group_members", member("g1", "ls1", 2)).await;
    expect_violation(
        twice,
        Violation::Unique,
        "a launch setting twice in a group",
    );

    // A fire is never doubled; activations without a fire key are not limited.
    let fire = "group:g1:2026-01-01T00:00:00Z";
    let group_run = Uuid::new_v4();
    insert(db, "activations", activation(group_run, Some(fire), now)).await?;
    let doubled = insert(
        db,
        "activations",
        activation(Uuid::new_v4(), Some(fire), now),
    )
    .await;
    expect_violation(doubled, Violation::Unique, "a fire key used twice");
    let manual = Uuid::new_v4();
    insert(db, "activations", activation(manual, None, now)).await?;
    insert(db, "activations", activation(Uuid::new_v4(), None, now)).await?;

    // A member run points at its group run.
    let mut member_run = activation(Uuid::new_v4(), None, now);
    member_run.push(("parent_id", group_run.into()));
    member_run.push(("position", 0i32.into()));
    insert(db, "activations", member_run).await?;

    for attempt in 1..=2 {
        insert(
            db,
            "activation_hosts",
            activation_host(manual, attempt, now),
        )
        .await?;
    }
    let same_attempt = insert(db, "activation_hosts", activation_host(manual, 2, now)).await;
    expect_violation(same_attempt, Violation::Unique, "an attempt recorded twice");
    insert(db, "activation_events", event(manual, now)).await?;

    // Cascades.
    assert_eq!(count(db, "activation_hosts").await?, 2);
    delete(db, "activations", "id", manual.into()).await?;
    assert_eq!(count(db, "activation_hosts").await?, 0);
    assert_eq!(count(db, "activation_events").await?, 0);

    assert_eq!(count(db, "activations").await?, 3);
    delete(db, "activations", "id", group_run.into()).await?;
    assert_eq!(
        count(db, "activations").await?,
        1,
        "member runs go with their group run"
    );

    assert_eq!(count(db, "schedule_group_members").await?, 2);
    delete(db, "schedule_groups", "id", "g1".into()).await?;
    assert_eq!(count(db, "schedule_group_members").await?, 0);
    assert_eq!(
        count(db, "activations").await?,
        0,
        "group runs go with their group"
    );

    // A launch setting's quarantined hosts and recovery counts: one row per host and per
    // kind, gone with the launch setting.
    let quarantine = |host: &str| -> Row {
        vec![
            ("launch_setting_id", "ls2".into()),
            ("host", host.into()),
            ("since", now.into()),
            ("cause", "breaker tripped".into()),
        ]
    };
    insert(db, "host_quarantines", quarantine("h1")).await?;
    let again = insert(db, "host_quarantines", quarantine("h1")).await;
    expect_violation(again, Violation::Unique, "a host quarantined twice");
    let counted = |kind: &str| -> Row {
        vec![
            ("launch_setting_id", "ls2".into()),
            ("kind", kind.into()),
            ("count", 1i64.into()),
        ]
    };
    insert(db, "recovery_counts", counted("lost")).await?;
    let again = insert(db, "recovery_counts", counted("lost")).await;
    expect_violation(again, Violation::Unique, "one kind counted in two rows");
    let unknown = insert(
        db,
        "recovery_counts",
        vec![
            ("launch_setting_id", "nope".into()),
            ("kind", "lost".into()),
            ("count", 1i64.into()),
        ],
    )
    .await;
    expect_violation(
        unknown,
        Violation::ForeignKey,
        "counts of no launch setting",
    );
    delete(db, "launch_settings", "id", "ls2".into()).await?;
    assert_eq!(count(db, "host_quarantines").await?, 0);
    assert_eq!(count(db, "recovery_counts").await?, 0);

    // Launch settings still use p1: deleting it is refused and its hosts stay.
    let in_use = delete(db, "pools", "id", "p1".into()).await;
    expect_violation(in_use, Violation::ForeignKey, "deleting a pool in use");
    assert_eq!(count(db, "pool_hosts").await?, 1);

    insert(db, "users", user("ann", now)).await?;
    let same_name = insert(db, "users", user("ann", now)).await;
    expect_violation(same_name, Violation::Unique, "two users with one name");
    let user_id = scalar_i64(db, "SELECT id FROM users WHERE name = 'ann'").await?;
    insert(db, "api_tokens", token(user_id, "hash-1", now)).await?;
    let same_hash = insert(db, "api_tokens", token(user_id, "hash-1", now)).await;
    expect_violation(same_hash, Violation::Unique, "two tokens with one hash");
    insert(db, "sessions", session("s1", user_id, now)).await?;
    delete(db, "users", "id", user_id.into()).await?;
    assert_eq!(count(db, "api_tokens").await?, 0);
    assert_eq!(count(db, "sessions").await?, 0);

    insert(db, "dead_letters", dead_letter("dl-1", now)).await?;
    let same_key = insert(db, "dead_letters", dead_letter("dl-1", now)).await;
    expect_violation(same_key, Violation::Unique, "a dead letter stored twice");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Helpers

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Violation {
    Unique,
    ForeignKey,
}

fn expect_violation(result: TestResult, expected: Violation, what: &str) {
    let err = match result {
        Ok(()) => panic!("{what}: accepted, expected a {expected:?} violation"),
        Err(err) => err,
    };
    let actual = match err.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(_)) => Some(Violation::Unique),
        Some(SqlErr::ForeignKeyConstraintViolation(_)) => Some(Violation::ForeignKey),
        _ => None,
    };
    assert_eq!(actual, Some(expected), "{what}: {err}");
}

type Row = Vec<(&'static str, Value)>;

/// One step down and up again: failure reports stored before the kind column get the kind
/// their `temporary` and `disposition` say; then down for good (the steps below).
/// Steps down past `error_types` and up again over stored failure logs: the table is filled
/// with each launch setting's error types and the latest time each occurred. Leaves the
/// database one step down.
async fn error_types_are_filled(
    db: &DatabaseConnection,
    manager: &SchemaManager<'_>,
) -> TestResult {
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_table("error_types").await?);
    for (id, ls, error_type) in [(1, "a", "E"), (2, "a", "E"), (3, "a", "F"), (4, "b", "E")] {
        insert(
            db,
            "failure_logs",
            vec![
                ("id", Value::BigInt(Some(id))),
                ("launch_setting_id", ls.into()),
                ("activation_id", Uuid::nil().into()),
                ("host", "h".into()),
                ("application_id", "app".into()),
                ("agent_id", "agent".into()),
                ("error_type", error_type.into()),
                ("message", "m".into()),
                ("occurred_at", at(id).into()),
                ("temporary", false.into()),
            ],
        )
        .await?;
    }
    Migrator::up(db, Some(1)).await?;
    let backend = db.get_database_backend();
    let rows = db
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT launch_setting_id, error_type, last_seen FROM error_types \
             ORDER BY launch_setting_id, error_type",
        ))
        .await?;
    let mut got = Vec::new();
    for row in rows {
        let ls: String = row.try_get_by_index(0)?;
        let error_type: String = row.try_get_by_index(1)?;
        let last_seen: DateTime<Utc> = row.try_get_by_index(2)?;
        got.push((ls, error_type, last_seen));
    }
    let want: Vec<(String, String, DateTime<Utc>)> =
        [("a", "E", at(2)), ("a", "F", at(3)), ("b", "E", at(4))]
            .into_iter()
            .map(|(ls, t, when)| (ls.to_owned(), t.to_owned(), when))
            .collect();
    assert_eq!(got, want);
    delete(db, "failure_logs", "host", "h".into()).await?;
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_table("error_types").await?);
    Ok(())
}

async fn failure_kinds_are_derived(
    db: &DatabaseConnection,
    manager: &SchemaManager<'_>,
) -> TestResult {
    assert!(manager.has_column("failure_logs", "kind").await?);
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("failure_logs", "kind").await?);
    let activation = Uuid::nil();
    for (id, temporary, disposition) in [
        (1, true, Some("retry")),
        (2, false, Some("retry")),
        (3, false, Some("dead-letter")),
        (4, false, None),
    ] {
        insert(
            db,
            "failure_logs",
            vec![
                ("id", Value::BigInt(Some(id))),
                ("launch_setting_id", "ls".into()),
                ("activation_id", activation.into()),
                ("host", "h".into()),
                ("application_id", "app".into()),
                ("agent_id", "agent".into()),
                ("error_type", "E".into()),
                ("message", "m".into()),
                ("occurred_at", at(id).into()),
                ("temporary", temporary.into()),
                ("disposition", disposition.map(str::to_owned).into()),
            ],
        )
        .await?;
    }
    Migrator::up(db, Some(1)).await?;
    for (id, kind) in [
        (1, "unavailable"),
        (2, "retried"),
        (3, "failed"),
        (4, "failed"),
    ] {
        let backend = db.get_database_backend();
        let row = db
            .query_one_raw(Statement::from_sql_and_values(
                backend,
                match backend {
                    DbBackend::Postgres => "SELECT kind FROM failure_logs WHERE id = $1",
                    _ => "SELECT kind FROM failure_logs WHERE id = ?",
                },
                [Value::BigInt(Some(id))],
            ))
            .await?
            .ok_or_else(|| DbErr::Custom(format!("failure {id} gone")))?;
        let got: String = row.try_get_by_index(0)?;
        assert_eq!(got, kind, "failure {id}");
    }
    delete(db, "failure_logs", "launch_setting_id", "ls".into()).await?;
    Migrator::down(db, Some(1)).await?;
    assert!(!manager.has_column("failure_logs", "kind").await?);
    Ok(())
}

fn at(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_790_000_000 + seconds, 0)
        .single()
        .expect("valid timestamp")
}

fn json(v: serde_json::Value) -> Value {
    Value::Json(Some(Box::new(v)))
}

async fn insert(db: &DatabaseConnection, table: &'static str, row: Row) -> TestResult {
    let (cols, values): (Vec<_>, Vec<_>) = row.into_iter().unzip();
    let mut stmt = Query::insert();
    stmt.into_table(Alias::new(table))
        .columns(cols.into_iter().map(Alias::new))
        .values(values.into_iter().map(Into::into))
        .map_err(|e| DbErr::Custom(e.to_string()))?;
    db.execute(&stmt).await.map(|_| ())
}

async fn delete(db: &DatabaseConnection, table: &str, col: &str, value: Value) -> TestResult {
    let stmt = Query::delete()
        .from_table(Alias::new(table))
        .and_where(Expr::col(Alias::new(col)).eq(value))
        .to_owned();
    db.execute(&stmt).await.map(|_| ())
}

async fn scalar_i64(db: &DatabaseConnection, sql: &str) -> Result<i64, DbErr> {
    let backend: DbBackend = db.get_database_backend();
    let row = db
        .query_one_raw(Statement::from_string(backend, sql))
        .await?
        .ok_or_else(|| DbErr::Custom(format!("no row: {sql}")))?;
    row.try_get_by_index(0)
}

async fn count(db: &DatabaseConnection, table: &str) -> Result<i64, DbErr> {
    scalar_i64(db, &format!("SELECT COUNT(*) FROM {table}")).await
}

fn pool(id: &str, now: DateTime<Utc>) -> Row {
    vec![
        ("id", id.into()),
        ("title", "Pool".into()),
        ("created_at", now.into()),
        ("updated_at", now.into()),
    ]
}

fn application(id: &str, now: DateTime<Utc>) -> Row {
    vec![
        ("id", id.into()),
        ("default_pool_id", "p1".into()),
        ("created_at", now.into()),
        ("updated_at", now.into()),
    ]
}

fn agent(app: &str, id: &str, now: DateTime<Utc>) -> Row {
    vec![
        ("application_id", app.into()),
        ("id", id.into()),
        ("title", "Export".into()),
        ("input_kind", "standalone".into()),
        ("concurrency", "ANY".into()),
        ("overlap_policy", "skip".into()),
        ("parameter_schema", json(serde_json::json!([]))),
        ("declared_by", "operator".into()),
        ("created_at", now.into()),
        ("updated_at", now.into()),
    ]
}

fn launch_setting(id: &str, now: DateTime<Utc>) -> Row {
    vec![
        ("id", id.into()),
        ("title", "Nightly".into()),
        ("application_id", "billing".into()),
        ("agent_id", "export".into()),
        ("kind", "scheduled".into()),
        ("enabled", true.into()),
        ("pool_id", "p1".into()),
        ("parameters", json(serde_json::json!({"day": "2026-01-01"}))),
        ("failure_threshold", 10i32.into()),
        ("retry_initial_delay_ms", 1000i64.into()),
        ("retry_multiplier", 2.0f64.into()),
        ("retry_max_delay_ms", 300_000i64.into()),
        ("max_deliveries", 10i32.into()),
        ("dead_letter_policy", "dead-letter".into()),
        ("park_cooldown_ms", 60_000i64.into()),
        ("start_timeout_ms", 30_000i64.into()),
        ("work_timeout_ms", 60_000i64.into()),
        ("on_lost", "restart".into()),
        ("created_at", now.into()),
        ("updated_at", now.into()),
    ]
}

fn schedule_group(id: &str, now: DateTime<Utc>) -> Row {
    vec![
        ("id", id.into()),
        ("application_id", "billing".into()),
        ("cron", "0 2 * * *".into()),
        ("time_zone", "Europe/Paris".into()),
        ("misfire_policy", "fire-once-now".into()),
        ("enabled", true.into()),
        ("created_at", now.into()),
        ("updated_at", now.into()),
    ]
}

fn member(group: &str, ls: &str, position: i32) -> Row {
    vec![
        ("group_id", group.into()),
        ("launch_setting_id", ls.into()),
        ("position", position.into()),
    ]
}

fn activation(id: Uuid, fire_key: Option<&str>, now: DateTime<Utc>) -> Row {
    vec![
        ("id", id.into()),
        ("launch_setting_id", "ls1".into()),
        ("group_id", "g1".into()),
        ("trigger", "schedule".into()),
        ("fire_key", fire_key.map(str::to_owned).into()),
        ("status", "pending".into()),
        ("created_at", now.into()),
    ]
}

fn activation_host(activation: Uuid, attempt: i32, now: DateTime<Utc>) -> Row {
    vec![
        ("activation_id", activation.into()),
        ("host", "h1".into()),
        ("application_id", "billing".into()),
        ("fencing_token", i64::from(attempt).into()),
        ("status", "dispatched".into()),
        ("attempt", attempt.into()),
        ("dispatched_at", now.into()),
        ("recovery_deadline", at(30).into()),
    ]
}

fn event(activation: Uuid, now: DateTime<Utc>) -> Row {
    vec![
        ("activation_id", activation.into()),
        ("host", "h1".into()),
        ("at", now.into()),
        ("kind", "dispatched".into()),
    ]
}

fn user(name: &str, now: DateTime<Utc>) -> Row {
    vec![
        ("name", name.into()),
        ("password_hash", "$argon2id$...".into()),
        ("role", "admin".into()),
        ("created_at", now.into()),
    ]
}

fn token(user_id: i64, hash: &str, now: DateTime<Utc>) -> Row {
    vec![
        ("user_id", user_id.into()),
        ("name", "ci".into()),
        ("token_hash", hash.into()),
        ("prefix", "am_1234".into()),
        ("created_at", now.into()),
    ]
}

fn session(id: &str, user_id: i64, now: DateTime<Utc>) -> Row {
    vec![
        ("id", id.into()),
        ("user_id", user_id.into()),
        ("created_at", now.into()),
        ("expires_at", at(3600).into()),
        ("last_seen_at", now.into()),
    ]
}

fn dead_letter(key: &str, now: DateTime<Utc>) -> Row {
    vec![
        ("dedupe_key", key.into()),
        ("launch_setting_id", "ls1".into()),
        ("headers", json(serde_json::json!({"x-attempts": 10}))),
        ("body", b"{\"poison\": true}".to_vec().into()),
        ("attempts", 10i32.into()),
        ("received_at", now.into()),
        ("status", "dead".into()),
    ]
}
