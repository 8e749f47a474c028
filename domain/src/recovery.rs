//! What an operator asks of a recovery action (docs/runtime.md, Re-run).

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

#[cfg(test)]
mod tests {
    use super::*;

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
