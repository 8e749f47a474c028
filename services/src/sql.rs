//! Small pieces of hand-written SQL that differ between the backends, for the statements the
//! query builder cannot express (grouping timestamps into buckets).

use sea_orm::{DbBackend, Value};

/// Rows per multi-row statement: far below every backend's bound-parameter limit even for the
/// widest table.
pub(crate) const CHUNK: usize = 400;

/// Appends a placeholder for the next bound value in the backend's syntax.
pub(crate) fn placeholder(
    backend: DbBackend,
    text: &mut String,
    values: &mut Vec<Value>,
    v: Value,
) {
    values.push(v);
    match backend {
        DbBackend::Postgres => {
            text.push('$');
            text.push_str(&values.len().to_string());
        }
        _ => text.push('?'),
    }
}

/// An expression of timestamp `column`'s bucket of `seconds` (hours: 3600), counted from the
/// Unix epoch. SQLite stores `DateTime<Utc>` as RFC 3339 text (which `strftime` reads),
/// PostgreSQL as `timestamptz`.
pub(crate) fn epoch_bucket(backend: DbBackend, column: &str, seconds: u32) -> String {
    match backend {
        DbBackend::Postgres => {
            format!("CAST(FLOOR(EXTRACT(EPOCH FROM {column}) / {seconds}) AS BIGINT)")
        }
        _ => format!("CAST(strftime('%s', {column}) AS INTEGER) / {seconds}"),
    }
}

/// A `COUNT(*)` (or `SUM`) read back as `BIGINT`, as the unsigned count it is.
pub(crate) fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}
