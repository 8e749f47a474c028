//! What a node can still read of a launch it cannot act on (a word it does not know, a field of
//! the wrong shape): enough to answer it, so the manager hears why instead of waiting for a
//! start that never comes.

use super::ActivationId;
use serde::Deserialize;

/// The identity of a launch: the fields every version of the protocol gives it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LaunchHead {
    pub activation_id: ActivationId,
    pub launch_setting: String,
    pub fencing_token: u64,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
enum Head {
    Launch(LaunchHead),
}

impl LaunchHead {
    /// The head of a launch in `bytes`, if they hold one (of any version this side reads).
    ///
    /// ```
    /// use am_domain::wire::LaunchHead;
    /// let bytes = br#"{"v":9,"type":"launch","activation_id":"a1","launch_setting":"x.1",
    ///     "agent":"sleep","kind":"someday","fencing_token":4}"#;
    /// let head = LaunchHead::of(bytes).expect("a launch");
    /// assert_eq!((head.launch_setting.as_str(), head.fencing_token), ("x.1", 4));
    /// assert!(LaunchHead::of(br#"{"v":1,"type":"stop","launch_setting":"x.1"}"#).is_none());
    /// ```
    pub fn of(bytes: &[u8]) -> Option<LaunchHead> {
        super::decode::<Head>(bytes)
            .ok()
            .map(|Head::Launch(head)| head)
    }
}
