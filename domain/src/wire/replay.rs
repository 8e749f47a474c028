//! How a replayed dead letter's outcome comes back (docs/protocol.md, Replays): the
//! manager stamps the message with a [`ReplayToken`] in the [`REPLAY_HEADER`]; a node that
//! processes it reports [`ReplayProcessed`], one that fails on it names the token in its
//! [`FailureReport`](super::FailureReport), and a dead letter that comes back carries it.

use super::ActivationId;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::{fmt, str::FromStr};

/// Header on a replayed dead letter: its [`ReplayToken`]. Kept through retries and into the
/// dead-letter queue, so every outcome of that replay names it.
pub const REPLAY_HEADER: &str = "x-am-replay";

/// One replay of one dead letter: the dead letter's id and which replay of it this is (its
/// replay count after the replay). An outcome of an older replay of the same dead letter does
/// not overwrite the newest one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReplayToken {
    pub dead_letter: i64,
    pub replay: i32,
}

impl fmt::Display for ReplayToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.dead_letter, self.replay)
    }
}

impl FromStr for ReplayToken {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{s}` is not a replay token (`<dead letter id>.<replay number>`)");
        let (id, n) = s.split_once('.').ok_or_else(bad)?;
        Ok(Self {
            dead_letter: id.parse().map_err(|_| bad())?,
            replay: n.parse().map_err(|_| bad())?,
        })
    }
}

impl Serialize for ReplayToken {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ReplayToken {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A node processed a replayed dead letter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReplayProcessed {
    pub application: String,
    pub host: String,
    pub activation_id: ActivationId,
    pub launch_setting: String,
    pub replay: ReplayToken,
    pub at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_what_it_wrote_and_refuses_anything_else() {
        let t = ReplayToken {
            dead_letter: 42,
            replay: 3,
        };
        assert_eq!(t.to_string(), "42.3");
        assert_eq!("42.3".parse::<ReplayToken>(), Ok(t));
        assert_eq!(
            serde_json::to_string(&t).expect("json"),
            "\"42.3\"".to_owned()
        );
        for bad in ["", "42", "42.", ".3", "a.b", "42.3.1"] {
            let e = bad.parse::<ReplayToken>().expect_err(bad);
            assert!(e.contains("replay token"), "{e}");
        }
    }
}
