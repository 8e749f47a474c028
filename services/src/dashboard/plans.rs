//! The query plans of the dashboard's statements over the big tables, so tests and benchmarks
//! check that each reads through an index.

use super::*;

/// The plans of the statements that read the big tables, as `(statement, plan)`, for tests and
/// benchmarks to check that each reads through an index.
pub async fn explain(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> ServiceResult<Vec<(String, String)>> {
    let backend = db.get_database_backend();
    let (from, to) = chart_window(now);
    let statements = [
        (
            "activations by status",
            status_counts_statement(backend, now - Duration::hours(WINDOW_HOURS)),
        ),
        (
            "failures per hour",
            hourly_failures_statement(backend, from, to),
        ),
        (
            "failures of the last hour by kind",
            kinds_statement(backend, now - Duration::hours(1)),
        ),
        (
            "failing launch settings",
            failing_statement(backend, now - Duration::hours(1)),
        ),
    ];
    let prefix = match backend {
        DbBackend::Postgres => "EXPLAIN ",
        _ => "EXPLAIN QUERY PLAN ",
    };
    let mut out = Vec::new();
    for (name, stmt) in statements {
        let rows = db
            .query_all_raw(Statement {
                sql: format!("{prefix}{}", stmt.sql),
                ..stmt.clone()
            })
            .await?;
        let plan: Vec<String> = rows
            .iter()
            .filter_map(|r| match backend {
                DbBackend::Postgres => r.try_get_by_index::<String>(0).ok(),
                _ => r.try_get_by_index::<String>(3).ok(),
            })
            .collect();
        out.push((format!("{name}: {}", stmt.sql), plan.join("\n")));
    }
    Ok(out)
}
