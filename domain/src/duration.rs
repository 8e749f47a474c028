//! Durations as operators write them (`500ms`, `30s`, `5m`, `1h 30m`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::{fmt, str::FromStr, time::Duration};

/// A duration that reads and writes as human text in JSON and forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HumanDuration(pub Duration);

impl HumanDuration {
    pub const fn from_secs(secs: u64) -> Self {
        Self(Duration::from_secs(secs))
    }

    pub const fn from_millis(ms: u64) -> Self {
        Self(Duration::from_millis(ms))
    }

    pub fn as_millis(self) -> u64 {
        u64::try_from(self.0.as_millis()).unwrap_or(u64::MAX)
    }

    pub fn is_zero(self) -> bool {
        self.0.is_zero()
    }
}

impl From<Duration> for HumanDuration {
    fn from(d: Duration) -> Self {
        Self(d)
    }
}

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_zero() {
            return f.write_str("0s");
        }
        write!(f, "{}", humantime::format_duration(self.0))
    }
}

impl FromStr for HumanDuration {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if t.is_empty() {
            return Err("a duration is required, e.g. `30s`, `5m` or `1h 30m`".into());
        }
        humantime::parse_duration(t).map(Self).map_err(|e| {
            format!("`{t}` is not a duration ({e}); write e.g. `30s`, `5m` or `1h 30m`")
        })
    }
}

impl Serialize for HumanDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for HumanDuration {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("Duration such as `500ms`, `30s`, `5m` or `1h 30m`"))
            .examples([serde_json::json!("30s")])
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for HumanDuration {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_text() {
        for text in ["1s", "500ms", "5m", "1h 30m", "0s"] {
            let d: HumanDuration = text.parse().expect("parses");
            assert_eq!(d.to_string().parse::<HumanDuration>(), Ok(d));
        }
    }

    #[test]
    fn rejects_garbage_with_a_hint() {
        let err = "soon".parse::<HumanDuration>().expect_err("not a duration");
        assert!(err.contains("`soon`"), "{err}");
    }
}
