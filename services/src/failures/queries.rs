//! The SQL of the failure drill-down, written by hand: each statement is shaped after one index
//! of `failure_logs` (see the table in the module above), which a query builder would hide.
//! Placeholders follow the backend (`?` on SQLite, `$n` on PostgreSQL), so the same text runs
//! on both.

use super::Scope;
use am_domain::dashboard::failure_kind;
use chrono::{DateTime, Utc};
use sea_orm::{DbBackend, Statement, Value};
use uuid::Uuid;

struct Sql {
    backend: DbBackend,
    text: String,
    values: Vec<Value>,
}

impl Sql {
    fn new(backend: DbBackend, text: &str) -> Self {
        Self {
            backend,
            text: text.to_owned(),
            values: Vec::new(),
        }
    }

    fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// Appends a placeholder bound to `value`.
    fn bind(&mut self, value: impl Into<Value>) -> &mut Self {
        self.values.push(value.into());
        match self.backend {
            DbBackend::Postgres => {
                self.text.push('$');
                self.text.push_str(&self.values.len().to_string());
            }
            _ => self.text.push('?'),
        }
        self
    }

    /// Appends `(?, ?, ...)` bound to `values`.
    fn list<V: Into<Value>>(&mut self, values: impl IntoIterator<Item = V>) -> &mut Self {
        self.push("(");
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.bind(v);
        }
        self.push(")")
    }

    /// Appends ` AND <condition>` for every filter of `scope` except those in `skip`.
    fn conditions(&mut self, scope: &Scope, skip: Skip) -> &mut Self {
        if !skip.launch_setting
            && let Some(ls) = &scope.launch_setting
        {
            self.push(" AND launch_setting_id = ").bind(ls.clone());
        }
        if !skip.activation
            && let Some(a) = scope.activation
        {
            self.push(" AND activation_id = ").bind(a);
        }
        if let Some(a) = &scope.application {
            self.push(" AND application_id = ").bind(a.clone());
        }
        if let Some(h) = &scope.host {
            self.push(" AND host = ").bind(h.clone());
        }
        if let Some(e) = &scope.error_type {
            self.push(" AND error_type = ").bind(e.clone());
        }
        if let Some(t) = scope.from {
            self.push(" AND occurred_at >= ").bind(t);
        }
        if let Some(t) = scope.to {
            self.push(" AND occurred_at < ").bind(t);
        }
        if let Some(k) = scope.kind {
            self.push(" AND kind = ").bind(k);
        }
        self
    }

    fn build(self) -> Statement {
        Statement::from_sql_and_values(self.backend, self.text, self.values)
    }
}

/// Filters [`Sql::conditions`] leaves out because the statement states them itself.
#[derive(Debug, Clone, Copy)]
struct Skip {
    launch_setting: bool,
    activation: bool,
}

const SKIP_NONE: Skip = Skip {
    launch_setting: false,
    activation: false,
};
const SKIP_LS: Skip = Skip {
    launch_setting: true,
    activation: false,
};
const SKIP_BOTH: Skip = Skip {
    launch_setting: true,
    activation: true,
};

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `error_type, n`: counts by error type of the failures in `scope`.
pub(super) fn type_counts(backend: DbBackend, scope: &Scope) -> Statement {
    let mut q = Sql::new(
        backend,
        "SELECT error_type, COUNT(*) AS n FROM failure_logs WHERE 1 = 1",
    );
    q.conditions(scope, SKIP_NONE).push(" GROUP BY error_type");
    q.build()
}

/// `scope` with reports of every kind: what the counts by kind read.
fn every_kind(scope: &Scope) -> Scope {
    Scope {
        kind: None,
        ..scope.clone()
    }
}

/// `kind, n`: counts by kind of the reports in `scope`, whatever its kind filter.
pub(super) fn kind_counts(backend: DbBackend, scope: &Scope) -> Statement {
    let mut q = Sql::new(
        backend,
        "SELECT kind, COUNT(*) AS n FROM failure_logs WHERE 1 = 1",
    );
    q.conditions(&every_kind(scope), SKIP_NONE)
        .push(" GROUP BY kind");
    q.build()
}

/// `kind, n`: counts by kind of the reports of the launch settings `ids` in `scope`, whatever
/// its kind filter; one `GROUP BY` per launch setting, as [`launch_setting_counts`].
pub(super) fn launch_setting_kind_counts(
    backend: DbBackend,
    scope: &Scope,
    ids: &[String],
) -> Statement {
    let scope = every_kind(scope);
    let mut q = Sql::new(backend, "");
    for (i, ls) in ids.iter().enumerate() {
        if i > 0 {
            q.push(" UNION ALL ");
        }
        q.push("SELECT kind, COUNT(*) AS n FROM failure_logs WHERE launch_setting_id = ")
            .bind(ls.clone())
            .conditions(&scope, SKIP_LS)
            .push(" GROUP BY kind");
    }
    q.build()
}

/// `kind, n`: counts by kind of the reports of several activations.
pub(super) fn kind_counts_of(backend: DbBackend, activations: &[Uuid]) -> Statement {
    let mut q = Sql::new(
        backend,
        "SELECT kind, COUNT(*) AS n FROM failure_logs WHERE activation_id IN ",
    );
    q.list(activations.iter().copied()).push(" GROUP BY kind");
    q.build()
}

/// `error_type, n`: counts by error type of the real failures of several activations.
pub(super) fn type_counts_of(backend: DbBackend, activations: &[Uuid]) -> Statement {
    let mut q = Sql::new(
        backend,
        "SELECT error_type, COUNT(*) AS n FROM failure_logs WHERE activation_id IN ",
    );
    q.list(activations.iter().copied())
        .push(" AND kind = ")
        .bind(failure_kind::FAILED)
        .push(" GROUP BY error_type");
    q.build()
}

/// `id`: up to `n` launch-setting ids with failures after `cursor`, in order. A loose index
/// scan: one seek per id, however many failures each has.
pub(super) fn next_launch_settings(backend: DbBackend, cursor: &str, n: u64) -> Statement {
    let mut q = Sql::new(
        backend,
        "WITH RECURSIVE t(ls, n) AS (\
         SELECT MIN(launch_setting_id), 1 FROM failure_logs WHERE launch_setting_id > ",
    );
    q.bind(cursor.to_owned())
        .push(
            " UNION ALL SELECT (SELECT MIN(f.launch_setting_id) FROM failure_logs f \
             WHERE f.launch_setting_id > t.ls), t.n + 1 FROM t \
             WHERE t.ls IS NOT NULL AND t.n < ",
        )
        .bind(int(n))
        .push(") SELECT ls AS id FROM t WHERE ls IS NOT NULL");
    q.build()
}

/// `key, error_type, n`: counts by launch setting and error type of the launch settings `ids`,
/// one `GROUP BY` per launch setting: each reads one range of an index (with a time range,
/// PostgreSQL would otherwise walk the whole range of `idx_failure_logs_occurred_at` for an
/// `IN` list and fetch every row of it).
pub(super) fn launch_setting_counts(
    backend: DbBackend,
    scope: &Scope,
    ids: &[String],
) -> Statement {
    let mut q = Sql::new(backend, "");
    for (i, ls) in ids.iter().enumerate() {
        if i > 0 {
            q.push(" UNION ALL ");
        }
        q.push(
            "SELECT launch_setting_id AS key, error_type, COUNT(*) AS n FROM failure_logs \
             WHERE launch_setting_id = ",
        )
        .bind(ls.clone())
        .conditions(scope, SKIP_LS)
        .push(" GROUP BY launch_setting_id, error_type");
    }
    q.build()
}

/// `key, first_at, last_at` of each launch setting of `ids`: two index seeks each.
pub(super) fn launch_setting_spans(backend: DbBackend, scope: &Scope, ids: &[String]) -> Statement {
    let mut q = Sql::new(backend, "");
    for (i, ls) in ids.iter().enumerate() {
        if i > 0 {
            q.push(" UNION ALL ");
        }
        q.push("SELECT ").bind(ls.clone()).push(" AS key");
        for (agg, alias) in [("MIN", "first_at"), ("MAX", "last_at")] {
            q.push(", (SELECT ")
                .push(agg)
                .push("(occurred_at) FROM failure_logs WHERE launch_setting_id = ")
                .bind(ls.clone())
                .conditions(scope, SKIP_LS)
                .push(") AS ")
                .push(alias);
        }
    }
    q.build()
}

/// `activation_id, n, first_at, last_at, groups`: one page of the activations of a launch
/// setting, the most recently failing first; `groups` is the number of activations in all.
pub(super) fn activation_groups(
    backend: DbBackend,
    scope: &Scope,
    ls: &str,
    limit: u64,
    offset: u64,
) -> Statement {
    let mut q = Sql::new(
        backend,
        "SELECT activation_id, COUNT(*) AS n, MIN(occurred_at) AS first_at, \
         MAX(occurred_at) AS last_at, COUNT(*) OVER () AS groups FROM failure_logs \
         WHERE launch_setting_id = ",
    );
    q.bind(ls.to_owned())
        .conditions(scope, SKIP_LS)
        .push(" GROUP BY activation_id ORDER BY last_at DESC, activation_id DESC LIMIT ")
        .bind(int(limit))
        .push(" OFFSET ")
        .bind(int(offset));
    q.build()
}

/// `activation_id, host, error_type, n` of the activations `ids`.
pub(super) fn activation_breakdown(backend: DbBackend, scope: &Scope, ids: &[Uuid]) -> Statement {
    let mut q = Sql::new(
        backend,
        "SELECT activation_id, host, error_type, COUNT(*) AS n FROM failure_logs \
         WHERE activation_id IN ",
    );
    q.list(ids.iter().copied())
        .conditions(scope, SKIP_BOTH)
        .push(" GROUP BY activation_id, host, error_type");
    q.build()
}

/// `key (host), error_type, n` of one activation.
pub(super) fn host_counts(backend: DbBackend, scope: &Scope, activation: Uuid) -> Statement {
    let mut q = Sql::new(
        backend,
        "SELECT host AS key, error_type, COUNT(*) AS n FROM failure_logs WHERE activation_id = ",
    );
    q.bind(activation)
        .conditions(scope, SKIP_BOTH)
        .push(" GROUP BY host, error_type");
    q.build()
}

/// `key (host), first_at, last_at` of one activation of launch setting `ls`.
pub(super) fn host_spans(
    backend: DbBackend,
    scope: &Scope,
    ls: &str,
    activation: Uuid,
) -> Statement {
    let mut q = Sql::new(
        backend,
        "SELECT host AS key, MIN(occurred_at) AS first_at, MAX(occurred_at) AS last_at \
         FROM failure_logs WHERE launch_setting_id = ",
    );
    q.bind(ls.to_owned())
        .push(" AND activation_id = ")
        .bind(activation)
        .conditions(scope, SKIP_BOTH)
        .push(" GROUP BY host");
    q.build()
}

/// Whole rows of the failures in `scope`, newest first, `limit` of them after the failure
/// `after` (its time and id): the time range lets the index scan start at the cursor.
pub(super) fn entries(
    backend: DbBackend,
    scope: &Scope,
    after: Option<(DateTime<Utc>, i64)>,
    limit: u64,
) -> Statement {
    let mut q = Sql::new(backend, "SELECT * FROM failure_logs WHERE 1 = 1");
    q.conditions(scope, SKIP_NONE);
    if let Some((at, id)) = after {
        q.push(" AND occurred_at <= ")
            .bind(at)
            .push(" AND NOT (occurred_at = ")
            .bind(at)
            .push(" AND id >= ")
            .bind(id)
            .push(")");
    }
    q.push(" ORDER BY occurred_at DESC, id DESC LIMIT ")
        .bind(int(limit));
    q.build()
}

/// The statement to show the plan of `stmt` with.
pub(super) fn explain(stmt: &Statement) -> Statement {
    let prefix = match stmt.db_backend {
        DbBackend::Postgres => "EXPLAIN ",
        _ => "EXPLAIN QUERY PLAN ",
    };
    Statement {
        sql: format!("{prefix}{}", stmt.sql),
        ..stmt.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_follow_the_backend() {
        let scope = Scope {
            host: Some("h".into()),
            error_type: Some("E".into()),
            ..Scope::default()
        };
        let pg = launch_setting_counts(DbBackend::Postgres, &scope, &["a".into(), "b".into()]);
        assert!(
            pg.sql.ends_with(
                "WHERE launch_setting_id = $4 AND host = $5 AND error_type = $6 \
                 GROUP BY launch_setting_id, error_type"
            ),
            "{}",
            pg.sql
        );
        assert_eq!(pg.values.map(|v| v.0.len()), Some(6));
        let lite = activation_breakdown(DbBackend::Sqlite, &scope, &[Uuid::nil(), Uuid::nil()]);
        assert!(
            lite.sql.ends_with(
                "IN (?, ?) AND host = ? AND error_type = ? GROUP BY activation_id, host, error_type"
            ),
            "{}",
            lite.sql
        );
    }
}
