//! The failure-log drill-down (docs/concepts.md, Failure logs): launch settings with failures →
//! their activations → the hosts of one activation → the failures themselves, with counts by
//! error type at every level and the same filters (error type, host, time range) throughout.
//!
//! Failure logs grow to millions of rows, so every level reads through one of the indexes of
//! `failure_logs` and counts with `GROUP BY`, never by loading rows:
//!
//! | level | query | index |
//! |---|---|---|
//! | launch settings | next ids after the cursor, one index seek each | `idx_failure_logs_ls_error_type` |
//! | | counts by error type of each launch setting of the page (one `GROUP BY` each) | `idx_failure_logs_ls_error_type` (covering) |
//! | | first and last failure of each | `idx_failure_logs_ls_occurred_at` (one seek each) |
//! | activations of a launch setting | counts, first and last failure by activation | `idx_failure_logs_drill_down` (covering) |
//! | | counts by (host, error type) of one page of activations | `idx_failure_logs_activation_host_error_type` (covering) |
//! | | counts by error type of the launch setting | `idx_failure_logs_ls_error_type` (covering) |
//! | hosts of an activation | counts by (host, error type) | `idx_failure_logs_activation_host_error_type` (covering) |
//! | | first and last failure by host | `idx_failure_logs_drill_down` (covering) |
//! | failures | newest first, keyset pagination on (time, id) | `idx_failure_logs_drill_down`, `_ls_occurred_at` or `_occurred_at` |
//!
//! With a time range the statements keyed by launch setting read `idx_failure_logs_ls_occurred_at`
//! instead, and those keyed by activation filter their index range by time.
//!
//! The cost of a level is therefore bounded by the failures of what it shows (one page of
//! launch settings, one launch setting, one activation), not by the size of the table. Only
//! the unscoped list ([`list`] without a launch setting or activation) counts by error type
//! over everything its other filters select.

mod entries;
pub(crate) mod error_types;
pub(crate) mod kinds;
mod levels;
mod queries;

pub(crate) use entries::of_activations;
pub use entries::{explain, list};
pub use levels::{activations, hosts, launch_settings};

use crate::{
    error::{ServiceError, ServiceResult},
    filters,
};
use am_domain::{
    dashboard::failure_kind,
    failing::KindCounts,
    read::failures::{
        ActivationFailures, ActivationFailuresPage, ActivationHostFailures, ErrorTypeCount,
        FailureEntry, FailureFilter, FailureList, HostCount, HostFailures, LaunchSettingFailures,
        LaunchSettingFailuresPage,
    },
};
use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, FromQueryResult};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Launch settings per page of the first level unless asked otherwise.
pub const LAUNCH_SETTINGS_PAGE: u64 = 20;
/// Activations per page of the second level unless asked otherwise.
pub const ACTIVATIONS_PAGE: u64 = 20;
/// Failures per page unless asked otherwise.
pub const ENTRIES_PAGE: u64 = 50;
/// Largest page of any level.
pub const MAX_PAGE: u64 = 200;

/// A parsed [`FailureFilter`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scope {
    pub launch_setting: Option<String>,
    pub application: Option<String>,
    pub activation: Option<Uuid>,
    pub host: Option<String>,
    pub error_type: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    /// A [`failure_kind`] word; `None` for reports of every kind.
    pub kind: Option<&'static str>,
}

impl Scope {
    /// Whether anything beyond launch setting and activation narrows the failures.
    fn narrowed(&self) -> bool {
        self.kind.is_some()
            || self.application.is_some()
            || self.host.is_some()
            || self.error_type.is_some()
            || self.from.is_some()
            || self.to.is_some()
    }
}

impl Scope {
    /// The scope a filter selects, or which of its fields is malformed.
    pub(crate) fn of(filter: &FailureFilter) -> ServiceResult<Scope> {
        let activation = match filters::text(&filter.activation) {
            None => None,
            Some(a) => Some(Uuid::parse_str(&a).map_err(|_| {
                ServiceError::invalid(
                    "activation",
                    format!("`{a}` is not an activation id (a UUID)"),
                )
            })?),
        };
        let (from, to) = filters::range(&filter.from, &filter.to)?;
        let kind = match filters::text(&filter.kind).as_deref() {
            None => Some(failure_kind::FAILED),
            Some(failure_kind::ANY) => None,
            Some(k) => Some(failure_kind::named(k).ok_or_else(|| {
                ServiceError::invalid(
                    "kind",
                    format!(
                        "`{k}` is no kind of failure report; use {}, {}, {} or {}",
                        failure_kind::FAILED,
                        failure_kind::RETRIED,
                        failure_kind::UNAVAILABLE,
                        failure_kind::ANY
                    ),
                )
            })?),
        };
        Ok(Scope {
            kind,
            launch_setting: filters::text(&filter.launch_setting),
            application: filters::text(&filter.application),
            activation,
            host: filters::text(&filter.host),
            error_type: filters::text(&filter.error_type),
            from,
            to,
        })
    }
}

/// The entry of a stored failure, with the dead letter of its data message if known.
pub(crate) fn entry(
    r: crate::entity::failure_logs::Model,
    dead_letter: Option<i64>,
) -> FailureEntry {
    FailureEntry {
        id: r.id,
        launch_setting: r.launch_setting_id,
        activation: r.activation_id,
        host: r.host,
        application: r.application_id,
        agent: r.agent_id,
        error_type: r.error_type,
        message: r.message,
        details: r.details,
        data_message_id: r.data_message_id,
        attempt: r.attempt,
        occurred_at: r.occurred_at,
        dead_letter,
        temporary: r.temporary,
        disposition: r.disposition,
    }
}

#[derive(Debug, FromQueryResult)]
struct KeyCount {
    key: String,
    error_type: String,
    n: i64,
}

#[derive(Debug, FromQueryResult)]
struct TypeCount {
    error_type: String,
    n: i64,
}

#[derive(Debug, FromQueryResult)]
struct Span {
    key: String,
    first_at: Option<DateTime<Utc>>,
    last_at: Option<DateTime<Utc>>,
}

#[derive(Debug, FromQueryResult)]
struct ActivationGroup {
    activation_id: Uuid,
    n: i64,
    first_at: Option<DateTime<Utc>>,
    last_at: Option<DateTime<Utc>>,
    groups: i64,
}

#[derive(Debug, FromQueryResult)]
struct ActivationHostType {
    activation_id: Uuid,
    host: String,
    error_type: String,
    n: i64,
}

#[derive(Debug, FromQueryResult)]
struct Id {
    id: String,
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Counts by error type, most frequent first (then by name).
fn sorted(counts: BTreeMap<String, u64>) -> Vec<ErrorTypeCount> {
    let mut out: Vec<ErrorTypeCount> = counts
        .into_iter()
        .map(|(error_type, count)| ErrorTypeCount { error_type, count })
        .collect();
    out.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.error_type.cmp(&b.error_type))
    });
    out
}

fn total(counts: &[ErrorTypeCount]) -> u64 {
    counts.iter().map(|c| c.count).sum()
}

fn merge(into: &mut BTreeMap<String, u64>, counts: &[ErrorTypeCount]) {
    for c in counts {
        *into.entry(c.error_type.clone()).or_default() += c.count;
    }
}

#[derive(Debug, FromQueryResult)]
struct KindCount {
    kind: String,
    n: i64,
}

/// Counts by kind of the reports `stmt` selects (`kind, n`).
async fn kind_counts(
    db: &impl ConnectionTrait,
    stmt: sea_orm::Statement,
) -> ServiceResult<KindCounts> {
    let mut out = KindCounts::default();
    for r in KindCount::find_by_statement(stmt).all(db).await? {
        out.add(&r.kind, count(r.n));
    }
    Ok(out)
}

/// Counts by error type of the failures `stmt` selects (`error_type, n`).
async fn type_counts(
    db: &impl ConnectionTrait,
    stmt: sea_orm::Statement,
) -> ServiceResult<Vec<ErrorTypeCount>> {
    let rows = TypeCount::find_by_statement(stmt).all(db).await?;
    Ok(sorted(
        rows.into_iter()
            .map(|r| (r.error_type, count(r.n)))
            .collect(),
    ))
}
