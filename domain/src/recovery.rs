//! What an operator asks of a recovery action (docs/runtime.md, Re-run), and what became of a
//! replayed dead letter (docs/runtime.md, Replay outcomes).

use serde::{Deserialize, Serialize};

/// How a re-run picks up a failed activation. Without options: a group from its first failed
/// member, a launch setting on the pool as usual.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Rerun {
    /// A group activation: the member (launch setting id) to start from; the members before it
    /// are not run again. Default: the first member that did not succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_member: Option<String>,
    /// A launch setting's activation: only on the hosts where it failed or was lost (a `MANY`
    /// run that failed on some of its hosts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_failed_hosts: bool,
    /// A launch setting's activation: on this host of its pool (another node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// What a re-run of an ended activation may start from: the choices of the activation page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RerunChoices {
    /// A group's run (or a member's): the group's members, in order.
    pub members: Vec<String>,
    /// Where a group re-run starts unless another member is named: the first member that did
    /// not succeed (on a member's page, that member). `None` when every member succeeded.
    pub from: Option<usize>,
    /// A launch setting's run: hosts of its latest round that failed or were lost.
    pub failed_hosts: Vec<String>,
    /// A launch setting's run: the hosts of its pool, for a re-run on another node.
    pub pool_hosts: Vec<String>,
}

/// What became of a dead letter's last replay, as its nodes reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ReplayResult {
    /// Published back to its subscription; no node has reported on it yet.
    Sent,
    /// Sent, but its launch setting is disabled: it waits in the broker until it is enabled.
    /// Not stored: the manager says so when it reads a `sent` replay of a disabled setting.
    Waiting,
    /// A node processed it.
    Processed,
    /// It failed again and waits for its next delivery.
    Retrying,
    /// It failed again and rests in its launch setting's sump (dead-letter policy `park`).
    Parked,
    /// It failed again and was given up on: a new dead letter.
    DeadLettered,
}

impl ReplayResult {
    pub const ALL: [ReplayResult; 6] = [
        ReplayResult::Sent,
        ReplayResult::Waiting,
        ReplayResult::Processed,
        ReplayResult::Retrying,
        ReplayResult::Parked,
        ReplayResult::DeadLettered,
    ];

    /// The serde name, as stored and in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplayResult::Sent => "sent",
            ReplayResult::Waiting => "waiting",
            ReplayResult::Processed => "processed",
            ReplayResult::Retrying => "retrying",
            ReplayResult::Parked => "parked",
            ReplayResult::DeadLettered => "dead-lettered",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Whether nothing more will be reported of this replay.
    pub fn is_final(self) -> bool {
        matches!(self, ReplayResult::Processed | ReplayResult::DeadLettered)
    }

    /// Whether the replayed message failed again.
    pub fn failed_again(self) -> bool {
        matches!(
            self,
            ReplayResult::Retrying | ReplayResult::Parked | ReplayResult::DeadLettered
        )
    }

    /// The result a failure report's disposition (`am_domain::wire::disposition`) means.
    pub fn of_disposition(disposition: Option<&str>) -> Self {
        match disposition {
            Some(crate::wire::disposition::DEAD_LETTER) => ReplayResult::DeadLettered,
            Some(crate::wire::disposition::PARK) => ReplayResult::Parked,
            _ => ReplayResult::Retrying,
        }
    }
}

/// How the replayed dead letters of one operation fared, by their last reported result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayOutcomes {
    /// Sent; nothing reported yet.
    pub sent: u64,
    /// Sent to a launch setting that is disabled now: waiting in the broker.
    pub waiting: u64,
    pub processed: u64,
    /// Failed again: retrying, parked or dead-lettered again.
    pub failed_again: u64,
}

impl ReplayOutcomes {
    pub fn add(&mut self, result: ReplayResult, n: u64) {
        match result {
            ReplayResult::Sent => self.sent += n,
            ReplayResult::Waiting => self.waiting += n,
            ReplayResult::Processed => self.processed += n,
            ReplayResult::Retrying | ReplayResult::Parked | ReplayResult::DeadLettered => {
                self.failed_again += n
            }
        }
    }

    /// Replays with an outcome still to come (sent or waiting).
    pub fn pending(&self) -> u64 {
        self.sent + self.waiting
    }
}

/// What a replay would send, asked before it starts: how many, and what could go wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayPreview {
    /// Dead letters it would send (status `dead`).
    pub total: u64,
    /// Launch settings among them that are disabled: their messages would wait in the broker.
    pub disabled: Vec<String>,
    /// Launch settings that would get at least as many messages as failures in a row trip
    /// their breaker: if the messages fail again, the breaker disables the launch setting.
    pub breaker_risk: Vec<BreakerRisk>,
}

/// A launch setting whose breaker a replay could trip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakerRisk {
    pub launch_setting: String,
    /// Dead letters the replay would send it.
    pub messages: u64,
    /// Failures in a row that trip its breaker (`M`).
    pub failure_threshold: u32,
    /// Failures of one error type in a row that trip it sooner (`N = max(1, M / 3)`): what a
    /// burst of dead letters that failed alike meets first.
    #[serde(default)]
    pub same_type_threshold: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_results_are_stored_by_their_serde_names() {
        for r in ReplayResult::ALL {
            let json = serde_json::to_string(&r).expect("json");
            assert_eq!(json, format!("\"{}\"", r.as_str()));
            assert_eq!(ReplayResult::parse(r.as_str()), Some(r));
        }
        assert_eq!(ReplayResult::parse("replayed"), None);
        assert_eq!(
            ReplayResult::of_disposition(Some("dead-letter")),
            ReplayResult::DeadLettered
        );
        assert_eq!(ReplayResult::of_disposition(None), ReplayResult::Retrying);
    }

    #[test]
    fn an_empty_body_asks_for_the_defaults_and_unknown_fields_are_refused() {
        let r: Rerun = serde_json::from_str("{}").expect("empty");
        assert_eq!(r, Rerun::default());
        let r: Rerun = serde_json::from_str(r#"{"only_failed_hosts": true}"#).expect("parses");
        assert!(r.only_failed_hosts);
        assert!(serde_json::from_str::<Rerun>(r#"{"from": "x"}"#).is_err());
        assert_eq!(
            serde_json::to_string(&Rerun::default()).expect("json"),
            "{}"
        );
    }
}
