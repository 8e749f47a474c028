//! The operator summary at the top of a launch setting's page: newest runs, the last hour's
//! failures and dead letters, the dead letters waiting, and the figures per minute.

use super::activations::ActivationRow;
use crate::error::UiError;
use am_domain::{failing::WindowCounts, throughput::Throughput};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverviewView {
    /// The newest runs, newest first (a handful).
    pub recent: Vec<ActivationRow>,
    /// Runs in all, as the activations list filtered on the launch setting counts them.
    pub runs_total: u64,
    pub last_hour: WindowCounts,
    /// Dead letters waiting for an operator.
    pub dead_letters_waiting: u64,
    pub throughput: Throughput,
    /// When the server read it: the base of relative times.
    pub now: chrono::DateTime<chrono::Utc>,
}

/// The summary of launch setting `id`.
#[server(prefix = "/ui", endpoint = "launch_setting_overview", input = Json)]
pub async fn launch_setting_overview(id: String) -> Result<OverviewView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let o = am_services::ls_overview::of(&s.db, &who, &id, chrono::Utc::now()).await?;
    let now = o.generated_at;
    Ok(OverviewView {
        recent: o
            .recent
            .into_iter()
            .map(|a| super::activations::present::activation(a, now))
            .collect(),
        runs_total: o.runs_total,
        last_hour: o.last_hour,
        dead_letters_waiting: o.dead_letters_waiting,
        throughput: o.throughput,
        now,
    })
}
