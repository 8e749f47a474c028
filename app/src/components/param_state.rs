//! What a parameter form holds for each parameter: its entries as the text the user typed
//! (nothing is lost when a value does not parse), turned into JSON values and checked with the
//! same `am-domain` rules the server runs. The controls that draw it are in `params` and
//! `classifier`.

use am_domain::{
    ValidationErrors,
    catalog::{Classifier, ClassifierValue},
    params::{ParamSpec, ParamType, validate_value},
};
use leptos::prelude::*;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One entry of a parameter: a key for the list and the text in its control.
#[derive(Clone, Copy)]
pub struct Item {
    pub key: u64,
    pub text: RwSignal<String>,
}

/// The state of one parameter's controls.
#[derive(Clone)]
pub struct ParamState {
    pub spec: ParamSpec,
    pub items: RwSignal<Vec<Item>>,
    next_key: StoredValue<u64>,
    /// Where new entries' signals live: with the form, not with the button that adds them.
    owner: Owner,
    /// Labels of classifier codes known to the form (picked or looked up).
    pub labels: RwSignal<BTreeMap<String, String>>,
}

impl ParamState {
    fn new(spec: ParamSpec, value: Option<&Value>) -> Self {
        let texts: Vec<String> = match value {
            None | Some(Value::Null) => vec![],
            Some(Value::Array(items)) if spec.array => items.iter().map(text_of).collect(),
            Some(v) => vec![text_of(v)],
        };
        let mut texts = texts;
        if !spec.array && texts.is_empty() {
            texts.push(String::new());
        }
        let items: Vec<Item> = texts
            .into_iter()
            .enumerate()
            .map(|(i, t)| Item {
                key: i as u64,
                text: RwSignal::new(t),
            })
            .collect();
        let n = items.len() as u64;
        Self {
            spec,
            items: RwSignal::new(items),
            next_key: StoredValue::new(n),
            owner: Owner::current().unwrap_or_default(),
            labels: RwSignal::new(BTreeMap::new()),
        }
    }

    pub(crate) fn add(&self, text: String) {
        let key = self.next_key.get_value();
        self.next_key.set_value(key + 1);
        let text = self.owner.with(|| RwSignal::new(text));
        self.items.update(|v| v.push(Item { key, text }));
    }

    /// The JSON value of the parameter, `Null` when nothing was entered.
    pub fn value(&self) -> Value {
        let values: Vec<Value> = self
            .items
            .with(|items| {
                items
                    .iter()
                    .map(|i| json_of(&self.spec.ty, &i.text.get()))
                    .collect::<Vec<_>>()
            })
            .into_iter()
            .flatten()
            .collect();
        if self.spec.array {
            if values.is_empty() {
                Value::Null
            } else {
                Value::Array(values)
            }
        } else {
            values.into_iter().next().unwrap_or(Value::Null)
        }
    }

    /// Errors of the value, by the server's own rules (classifier codes are checked against
    /// the values this form knows: picked from the search or looked up by the server).
    pub fn errors(&self, application: &str) -> ValidationErrors {
        let classifier = match &self.spec.ty {
            ParamType::Classifier(name) => Some(Classifier {
                application: application.to_owned(),
                name: name.clone(),
                title: String::new(),
                values: self.labels.with(|l| {
                    l.iter()
                        .map(|(code, label)| ClassifierValue {
                            code: code.clone(),
                            label: label.clone(),
                        })
                        .collect()
                }),
            }),
            _ => None,
        };
        validate_value(&self.spec, &self.value(), classifier.as_ref())
    }
}

/// A parameter value as the text of its control.
pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The JSON form of what was typed; text that does not parse stays a string, so validation
/// names the problem instead of the form dropping the input.
fn json_of(ty: &ParamType, text: &str) -> Option<Value> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    Some(match ty {
        ParamType::Integer => t
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(t.to_owned())),
        ParamType::Boolean => match t {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(t.to_owned()),
        },
        ParamType::String => Value::String(text.to_owned()),
        _ => Value::String(t.to_owned()),
    })
}

/// States for every parameter of `specs`, filled from saved `values`.
pub fn param_states(specs: &[ParamSpec], values: &Map<String, Value>) -> Vec<ParamState> {
    specs
        .iter()
        .map(|s| ParamState::new(s.clone(), values.get(&s.name)))
        .collect()
}

/// The parameters' values (entered ones only; defaults apply to the rest).
pub fn collect_values(states: &[ParamState]) -> Map<String, Value> {
    states
        .iter()
        .filter_map(|s| {
            let v = s.value();
            (!v.is_null()).then(|| (s.spec.name.clone(), v))
        })
        .collect()
}

/// Errors of all parameters with paths `name` / `name[1]`.
pub fn collect_errors(states: &[ParamState], application: &str) -> ValidationErrors {
    let mut all = ValidationErrors::new();
    for s in states {
        all.extend_prefixed(&s.spec.name, s.errors(application));
    }
    all
}
