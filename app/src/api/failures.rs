//! Server function of the failure-log drill-down: one call per page, the level chosen by how
//! deep the URL goes (launch settings → activations → hosts → failures).

use crate::error::UiError;
use am_domain::read::failures::{
    ActivationFailures, ErrorTypeCount, FailureEntry, HostFailures, LaunchSettingFailures,
};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// Where the drill-down is and what it filters, as the URL carries it:
/// `/failures[/{launch_setting}[/{activation}[/{host}]]]?error_type=&host=&from=&to=&after=
/// &page=&view=failures`. Empty means no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailuresQuery {
    /// The launch setting drilled into (path).
    pub launch_setting: String,
    /// The first level's filter to one launch setting (`?launch_setting=`).
    pub only_launch_setting: String,
    /// Only launch settings of this application.
    pub application: String,
    pub activation: String,
    /// The host drilled into (the last path segment).
    pub at_host: String,
    pub error_type: String,
    /// The host filter of the levels above the host.
    pub host: String,
    pub from: String,
    pub to: String,
    /// `failed` (empty: the real failures), `retried`, `unavailable` or `any`
    /// (am_domain::dashboard::failure_kind).
    #[serde(default)]
    pub kind: String,
    /// Keyset cursor of the launch-settings level and of failure lists.
    pub after: String,
    /// Page of the activations level, one-based.
    pub page: u64,
    /// The failures themselves at this level instead of the next level's groups.
    pub list: bool,
}

/// What one level shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    LaunchSettings {
        rows: Vec<LaunchSettingFailures>,
        next: Option<String>,
    },
    Activations {
        /// Activations with matching failures.
        activations: u64,
        rows: Vec<ActivationFailures>,
        page: u64,
        has_more: bool,
    },
    Hosts {
        activation_status: Option<String>,
        rows: Vec<HostFailures>,
    },
    Failures {
        rows: Vec<FailureEntry>,
        next: Option<i64>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailuresView {
    pub level: Level,
    /// Failures matching the filters at this level (for the launch-settings level: of the
    /// launch settings on the page).
    pub total: u64,
    pub by_error_type: Vec<ErrorTypeCount>,
    /// Reports of each kind the other filters match (for the launch-settings level: of the
    /// launch settings on the page).
    pub kinds: am_domain::failing::KindCounts,
    /// Time filters one click away: (label, `from` value).
    pub quick_ranges: Vec<(String, String)>,
    /// When the server read the page: the base of its relative times.
    pub now: chrono::DateTime<chrono::Utc>,
}

/// The page of the drill-down `query` points at.
#[server(prefix = "/ui", endpoint = "failure_logs", input = Json)]
pub async fn failure_logs(query: FailuresQuery) -> Result<FailuresView, UiError> {
    use super::ssr::*;
    use am_domain::read::failures::FailureFilter;
    use am_services::failures;
    let who = require(Operation::Read)?;
    let s = services()?;
    let db = &s.db;
    let some = |v: &str| (!v.trim().is_empty()).then(|| v.trim().to_owned());
    let host = if query.at_host.is_empty() {
        some(&query.host)
    } else {
        some(&query.at_host)
    };
    let filter = FailureFilter {
        launch_setting: some(&query.launch_setting).or_else(|| some(&query.only_launch_setting)),
        application: some(&query.application),
        activation: some(&query.activation),
        host,
        error_type: some(&query.error_type),
        from: some(&query.from),
        to: some(&query.to),
        kind: some(&query.kind),
    };
    let deepest = !query.at_host.is_empty();
    let (level, total, by_error_type, kinds) = if query.list || deepest {
        let after = match some(&query.after) {
            None => None,
            Some(a) => Some(a.parse::<i64>().map_err(|_| {
                UiError::Invalid(vec![am_domain::FieldError::new(
                    "after",
                    "not a failure id",
                )])
            })?),
        };
        let l = failures::list(db, &who, &filter, after, None).await?;
        (
            Level::Failures {
                rows: l.entries,
                next: l.next,
            },
            l.total,
            l.by_error_type,
            l.kinds,
        )
    } else if !query.activation.is_empty() {
        let h = failures::hosts(db, &who, &query.activation, &filter).await?;
        (
            Level::Hosts {
                activation_status: h.activation_status,
                rows: h.items,
            },
            h.total,
            h.by_error_type,
            h.kinds,
        )
    } else if !query.launch_setting.is_empty() {
        let a = failures::activations(
            db,
            &who,
            &query.launch_setting,
            &filter,
            Some(query.page.max(1)),
            None,
        )
        .await?;
        (
            Level::Activations {
                activations: a.activations,
                page: a.page,
                has_more: a.has_more,
                rows: a.items,
            },
            a.total,
            a.by_error_type,
            a.kinds,
        )
    } else {
        let p = failures::launch_settings(db, &who, &filter, some(&query.after).as_deref(), None)
            .await?;
        let total = p.items.iter().map(|i| i.total).sum();
        (
            Level::LaunchSettings {
                next: p.next,
                rows: p.items,
            },
            total,
            p.by_error_type,
            p.kinds,
        )
    };
    let now = chrono::Utc::now();
    let from = |d: chrono::Duration| (now - d).format("%Y-%m-%dT%H:%M").to_string();
    Ok(FailuresView {
        level,
        total,
        by_error_type,
        kinds,
        quick_ranges: vec![
            ("last hour".into(), from(chrono::Duration::hours(1))),
            ("last 24 h".into(), from(chrono::Duration::hours(24))),
            ("last 7 days".into(), from(chrono::Duration::days(7))),
        ],
        now,
    })
}
