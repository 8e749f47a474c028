//! Typed agent parameters: the schema an agent publishes and the checks its values must pass.
//!
//! Values travel to nodes as JSON. Their JSON forms per type:
//! `string` → string; `integer` → number without fraction; `decimal` → number or decimal
//! string; `boolean` → bool; `date` → `"YYYY-MM-DD"`; `datetime` → RFC 3339 string;
//! `duration` → human duration string (`"30s"`); `classifier(name)` → the value's code string.
//! An array parameter takes a JSON array of such values.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::{fmt, str::FromStr};

#[cfg(test)]
mod tests;
mod values;

pub(crate) use values::validate_codes;
pub use values::{
    effective_values, validate_schema, validate_spec, validate_value, validate_values,
};

/// The type of one parameter (of each element for arrays).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ParamType {
    String,
    Integer,
    Decimal,
    Boolean,
    Date,
    Datetime,
    Duration,
    /// Picks a code from the named classifier of the agent's application.
    Classifier(String),
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamType::String => f.write_str("string"),
            ParamType::Integer => f.write_str("integer"),
            ParamType::Decimal => f.write_str("decimal"),
            ParamType::Boolean => f.write_str("boolean"),
            ParamType::Date => f.write_str("date"),
            ParamType::Datetime => f.write_str("datetime"),
            ParamType::Duration => f.write_str("duration"),
            ParamType::Classifier(name) => write!(f, "classifier({name})"),
        }
    }
}

impl FromStr for ParamType {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.trim() {
            "string" => ParamType::String,
            "integer" => ParamType::Integer,
            "decimal" => ParamType::Decimal,
            "boolean" => ParamType::Boolean,
            "date" => ParamType::Date,
            "datetime" => ParamType::Datetime,
            "duration" => ParamType::Duration,
            other => match other
                .strip_prefix("classifier(")
                .and_then(|r| r.strip_suffix(')'))
            {
                Some(name) if !name.trim().is_empty() => {
                    ParamType::Classifier(name.trim().to_owned())
                }
                _ => {
                    return Err(format!(
                        "unknown parameter type '{other}' (expected string, integer, decimal, boolean, \
                         date, datetime, duration or classifier(<name>))"
                    ));
                }
            },
        })
    }
}

impl Serialize for ParamType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ParamType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for ParamType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some(
                "string | integer | decimal | boolean | date | datetime | duration | classifier(<name>)",
            ))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for ParamType {}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One parameter of an agent's schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    /// Key of the value in the launch setting's parameters, `[a-z_][a-z0-9_]*`.
    pub name: String,
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(rename = "type")]
    pub ty: ParamType,
    /// The value is a JSON array of values of `ty`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub array: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// Used when the launch setting gives no value; must itself be valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
    pub default: Option<serde_json::Value>,
    /// Lower bound: of the number for integer/decimal, of the date/datetime/duration, of the
    /// length for string. Written in the parameter's own JSON form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
    pub min: Option<serde_json::Value>,
    /// Upper bound, as `min`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
    pub max: Option<serde_json::Value>,
    /// Regular expression a string value must match entirely.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

impl ParamSpec {
    /// An optional single-valued parameter of type `ty`, without bounds or default.
    pub fn new(name: impl Into<String>, ty: ParamType) -> Self {
        Self {
            name: name.into(),
            title: String::new(),
            description: String::new(),
            ty,
            array: false,
            required: false,
            default: None,
            min: None,
            max: None,
            pattern: None,
        }
    }

    /// A parameter whose values are codes of the application's classifier `classifier`.
    ///
    /// ```
    /// use am_domain::params::{ParamSpec, ParamType};
    /// let p = ParamSpec::classifier("orgs", "organisations").array();
    /// assert_eq!(p.ty, ParamType::Classifier("organisations".into()));
    /// ```
    pub fn classifier(name: impl Into<String>, classifier: impl Into<String>) -> Self {
        Self::new(name, ParamType::Classifier(classifier.into()))
    }

    /// The label forms show.
    ///
    /// ```
    /// use am_domain::params::{ParamSpec, ParamType};
    /// let p = ParamSpec::new("limit", ParamType::Integer).title("Rows per batch");
    /// assert_eq!(p.title, "Rows per batch");
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// A longer explanation, shown under the field.
    ///
    /// ```
    /// use am_domain::params::{ParamSpec, ParamType};
    /// let p = ParamSpec::new("limit", ParamType::Integer).description("At most this many rows.");
    /// assert_eq!(p.description, "At most this many rows.");
    /// ```
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// A launch setting must give a value.
    ///
    /// ```
    /// use am_domain::params::{ParamSpec, ParamType};
    /// assert!(ParamSpec::new("org", ParamType::String).required().required);
    /// ```
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// The value is a list of values of the parameter's type.
    ///
    /// ```
    /// use am_domain::params::{ParamSpec, ParamType};
    /// assert!(ParamSpec::new("orgs", ParamType::String).array().array);
    /// ```
    pub fn array(mut self) -> Self {
        self.array = true;
        self
    }

    /// The value used when a launch setting gives none, in the parameter's JSON form.
    ///
    /// ```
    /// use am_domain::params::{ParamSpec, ParamType};
    /// let p = ParamSpec::new("older_than", ParamType::Duration).default("7days");
    /// assert_eq!(p.default, Some(serde_json::json!("7days")));
    /// ```
    pub fn default(mut self, value: impl Into<serde_json::Value>) -> Self {
        self.default = Some(value.into());
        self
    }

    /// The lower bound: of a number, of a date, date-time or duration, or of a string's length.
    ///
    /// ```
    /// use am_domain::params::{ParamSpec, ParamType};
    /// let p = ParamSpec::new("limit", ParamType::Integer).min(1).max(1000);
    /// assert_eq!((p.min, p.max), (Some(1.into()), Some(1000.into())));
    /// ```
    pub fn min(mut self, value: impl Into<serde_json::Value>) -> Self {
        self.min = Some(value.into());
        self
    }

    /// The upper bound, as [`min`](Self::min).
    ///
    /// ```
    /// use am_domain::params::{ParamSpec, ParamType};
    /// let p = ParamSpec::new("rate", ParamType::Decimal).min(0).max(1);
    /// assert_eq!(p.max, Some(1.into()));
    /// ```
    pub fn max(mut self, value: impl Into<serde_json::Value>) -> Self {
        self.max = Some(value.into());
        self
    }

    /// A regular expression a string value must match entirely.
    ///
    /// ```
    /// use am_domain::params::{ParamSpec, ParamType};
    /// let p = ParamSpec::new("code", ParamType::String).pattern("[A-Z]{3}");
    /// assert_eq!(p.pattern.as_deref(), Some("[A-Z]{3}"));
    /// ```
    pub fn pattern(mut self, pattern: impl Into<String>) -> Self {
        self.pattern = Some(pattern.into());
        self
    }
}
