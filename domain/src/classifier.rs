//! Classifiers: lists of (code, label) values an application publishes for its agents' typed
//! parameters to pick from. Part of the catalog (`catalog::Classifier`); apart so the
//! parameters' rules read them without the rest of the catalog.

use serde::{Deserialize, Serialize};

/// A list of (code, label) values an application publishes for typed parameters to pick from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Classifier {
    pub application: String,
    pub name: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub values: Vec<ClassifierValue>,
}

impl Classifier {
    pub fn contains(&self, code: &str) -> bool {
        self.values.iter().any(|v| v.code == code)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ClassifierValue {
    pub code: String,
    pub label: String,
}

/// Values of one classifier that match a search, in the classifier's order; `more` tells
/// whether others match too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassifierPage {
    pub values: Vec<ClassifierValue>,
    pub more: bool,
}
