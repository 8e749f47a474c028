//! Checks of parameter schemas and of the values launch settings give them.

use super::{ParamSpec, ParamType};
use crate::{HumanDuration, ValidationErrors, classifier::Classifier, ids::validate_id};
use chrono::{DateTime, FixedOffset, NaiveDate};
use rust_decimal::Decimal;
use serde_json::{Map, Value};
use std::{cmp::Ordering, time::Duration};

/// Longest parameter name; names become struct fields and form keys.
const MAX_NAME_LEN: usize = 64;

/// One value in its type's meaning, for bounds and for comparing `min` with `max`.
#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Number(Decimal),
    Text(String),
    Bool,
    Date(NaiveDate),
    Datetime(DateTime<FixedOffset>),
    Duration(Duration),
}

impl Scalar {
    fn compare(&self, other: &Scalar) -> Option<Ordering> {
        match (self, other) {
            (Scalar::Number(a), Scalar::Number(b)) => Some(a.cmp(b)),
            (Scalar::Date(a), Scalar::Date(b)) => Some(a.cmp(b)),
            (Scalar::Datetime(a), Scalar::Datetime(b)) => Some(a.cmp(b)),
            (Scalar::Duration(a), Scalar::Duration(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

/// JSON text of a value as a message quotes it, shortened so one huge value can't flood a form.
fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 80 {
        text
    } else {
        format!("{}…", text.chars().take(80).collect::<String>())
    }
}

fn expected(ty: &ParamType) -> String {
    match ty {
        ParamType::String => "a string".into(),
        ParamType::Integer => "an integer".into(),
        ParamType::Decimal => {
            "a decimal number (a JSON number or a string such as \"12.50\")".into()
        }
        ParamType::Boolean => "true or false".into(),
        ParamType::Date => "a date as YYYY-MM-DD".into(),
        ParamType::Datetime => "a date-time in RFC 3339 form, e.g. 2024-05-01T08:00:00Z".into(),
        ParamType::Duration => "a duration such as \"30s\", \"5m\" or \"1h 30m\"".into(),
        ParamType::Classifier(name) => format!("a code of classifier '{name}'"),
    }
}

fn parse_decimal(text: &str) -> Option<Decimal> {
    let t = text.trim();
    if t.contains(['e', 'E']) {
        Decimal::from_scientific(t).ok()
    } else {
        Decimal::from_str_exact(t).ok()
    }
}

/// Reads a value in its type's JSON form; the error says what was expected and what came.
fn parse_scalar(ty: &ParamType, value: &Value) -> Result<Scalar, String> {
    let parsed = match (ty, value) {
        (ParamType::String | ParamType::Classifier(_), Value::String(s)) => {
            Some(Scalar::Text(s.clone()))
        }
        // Only integers without a fraction: a node deserializing `1.0` into an i64 would fail.
        (ParamType::Integer, Value::Number(n)) => {
            n.as_i64().map(|i| Scalar::Number(Decimal::from(i)))
        }
        (ParamType::Decimal, Value::Number(n)) => parse_decimal(&n.to_string()).map(Scalar::Number),
        (ParamType::Decimal, Value::String(s)) => parse_decimal(s).map(Scalar::Number),
        (ParamType::Boolean, Value::Bool(_)) => Some(Scalar::Bool),
        (ParamType::Date, Value::String(s)) => NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            // chrono also reads `2024-1-5`; the wire form has fixed widths.
            .filter(|d| d.format("%Y-%m-%d").to_string() == *s)
            .map(Scalar::Date),
        (ParamType::Datetime, Value::String(s)) => {
            DateTime::parse_from_rfc3339(s).ok().map(Scalar::Datetime)
        }
        (ParamType::Duration, Value::String(s)) => s
            .parse::<HumanDuration>()
            .ok()
            .map(|d| Scalar::Duration(d.0)),
        _ => None,
    };
    parsed.ok_or_else(|| format!("expected {}, got {}", expected(ty), show(value)))
}

fn bounds_apply(ty: &ParamType) -> bool {
    !matches!(ty, ParamType::Boolean | ParamType::Classifier(_))
}

/// A `min`/`max` of the spec: a length for strings, a value of the type otherwise.
fn parse_bound(ty: &ParamType, bound: &Value) -> Result<Scalar, String> {
    match ty {
        ParamType::String => bound
            .as_u64()
            .map(|n| Scalar::Number(Decimal::from(n)))
            .ok_or_else(|| {
                format!(
                    "expected a length in characters (a whole number, 0 or more), got {}",
                    show(bound)
                )
            }),
        _ => parse_scalar(ty, bound),
    }
}

fn bound_text(bound: &Value) -> String {
    match bound {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => show(other),
    }
}

/// Whether a string is allowed by the spec's pattern, which must match the whole value.
fn compile_pattern(pattern: &str) -> Result<regex_lite::Regex, String> {
    regex_lite::Regex::new(&format!("^(?:{pattern})$"))
        .map_err(|e| format!("`{pattern}` is not a valid regular expression: {e}"))
}

/// Whether to check classifier codes: schemas are checked without the classifiers at hand.
#[derive(Clone, Copy)]
enum Membership<'a> {
    Check(Option<&'a Classifier>),
    Skip,
}

/// Checks one parameter's spec; paths are relative to the spec (`name`, `min`, `default[1]`).
pub fn validate_spec(spec: &ParamSpec) -> ValidationErrors {
    let mut errors = ValidationErrors::new();
    let mut chars = spec.name.chars();
    let name_ok = spec.name.len() <= MAX_NAME_LEN
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !name_ok {
        errors.push(
            "name",
            format!(
                "'{}' is not a valid parameter name: use 1–{MAX_NAME_LEN} characters of a–z, 0–9 and '_', \
                 not starting with a digit",
                spec.name
            ),
        );
    }
    if let ParamType::Classifier(name) = &spec.ty
        && let Err(e) = validate_id(name)
    {
        errors.push("type", format!("classifier name: {e}"));
    }

    let mut bounds = [None, None];
    for (i, (field, bound)) in [("min", &spec.min), ("max", &spec.max)]
        .into_iter()
        .enumerate()
    {
        let Some(bound) = bound.as_ref().filter(|b| !b.is_null()) else {
            continue;
        };
        if !bounds_apply(&spec.ty) {
            errors.push(
                field,
                format!("{field} does not apply to {} parameters", spec.ty),
            );
            continue;
        }
        match parse_bound(&spec.ty, bound) {
            Ok(b) => bounds[i] = Some(b),
            Err(e) => errors.push(field, e),
        }
    }
    if let ([Some(min), Some(max)], Some(min_json)) = (&bounds, &spec.min)
        && min.compare(max) == Some(Ordering::Greater)
    {
        errors.push(
            "max",
            format!(
                "must not be below min ({}), got {}",
                bound_text(min_json),
                spec.max.as_ref().map(bound_text).unwrap_or_default()
            ),
        );
    }

    if let Some(pattern) = &spec.pattern {
        if spec.ty != ParamType::String {
            errors.push(
                "pattern",
                format!("pattern only applies to string parameters, not {}", spec.ty),
            );
        } else if let Err(e) = compile_pattern(pattern) {
            errors.push("pattern", e);
        }
    }

    if let Some(default) = spec.default.as_ref().filter(|d| !d.is_null()) {
        errors.extend_prefixed("default", check_value(spec, default, Membership::Skip));
    }
    errors
}

/// Checks a whole schema: each spec (paths `[2].default`) and that names are unique.
pub fn validate_schema(specs: &[ParamSpec]) -> ValidationErrors {
    let mut errors = ValidationErrors::new();
    for (i, spec) in specs.iter().enumerate() {
        errors.extend_prefixed(&format!("[{i}]"), validate_spec(spec));
        if let Some(first) = specs[..i].iter().position(|s| s.name == spec.name) {
            errors.push(
                format!("[{i}].name"),
                format!("parameter '{}' is already defined at [{first}]", spec.name),
            );
        }
    }
    errors
}

/// Checks a value given for `spec`. Paths are relative to the value: empty for a single value,
/// `[1]` for an array element. `null` counts as no value. `classifier` is the classifier that a
/// `classifier(name)` parameter names, `None` when the application does not publish it.
pub fn validate_value(
    spec: &ParamSpec,
    value: &Value,
    classifier: Option<&Classifier>,
) -> ValidationErrors {
    check_value(spec, value, Membership::Check(classifier))
}

fn check_value(spec: &ParamSpec, value: &Value, membership: Membership<'_>) -> ValidationErrors {
    let mut errors = ValidationErrors::new();
    if value.is_null() {
        if spec.required && spec.default.as_ref().is_none_or(Value::is_null) {
            errors.push("", "required");
        }
        return errors;
    }
    if let (ParamType::Classifier(name), Membership::Check(None)) = (&spec.ty, membership) {
        errors.push(
            "",
            format!("classifier '{name}' is not published by the application"),
        );
        return errors;
    }
    let pattern = match (&spec.ty, &spec.pattern) {
        // A bad pattern is the schema's fault, reported by `validate_spec`; values are not blamed.
        (ParamType::String, Some(p)) => compile_pattern(p).ok().map(|re| (p.as_str(), re)),
        _ => None,
    };
    let checker = ElementChecker {
        spec,
        membership,
        min: spec
            .min
            .as_ref()
            .and_then(|b| Some((parse_bound(&spec.ty, b).ok()?, bound_text(b)))),
        max: spec
            .max
            .as_ref()
            .and_then(|b| Some((parse_bound(&spec.ty, b).ok()?, bound_text(b)))),
        pattern,
    };
    if spec.array {
        let Value::Array(items) = value else {
            errors.push(
                "",
                format!(
                    "expected an array of {} values, got {}",
                    spec.ty,
                    show(value)
                ),
            );
            return errors;
        };
        if spec.required && items.is_empty() {
            errors.push("", "at least one value is required");
        }
        for (i, item) in items.iter().enumerate() {
            if let Err(e) = checker.check(item) {
                errors.push(format!("[{i}]"), e);
            }
        }
    } else if let Err(e) = checker.check(value) {
        errors.push("", e);
    }
    errors
}

struct ElementChecker<'a> {
    spec: &'a ParamSpec,
    membership: Membership<'a>,
    min: Option<(Scalar, String)>,
    max: Option<(Scalar, String)>,
    pattern: Option<(&'a str, regex_lite::Regex)>,
}

impl ElementChecker<'_> {
    fn check(&self, value: &Value) -> Result<(), String> {
        let scalar = parse_scalar(&self.spec.ty, value)?;
        if let (
            ParamType::Classifier(name),
            Membership::Check(Some(classifier)),
            Scalar::Text(code),
        ) = (&self.spec.ty, self.membership, &scalar)
            && !classifier.contains(code)
        {
            return Err(format!("value '{code}' is not in classifier '{name}'"));
        }
        if let Scalar::Text(text) = &scalar
            && self.spec.ty == ParamType::String
        {
            return self.check_string(text, value);
        }
        let shown = value_text(value);
        let (low, high) = match self.spec.ty {
            ParamType::Date | ParamType::Datetime => ("on or after", "on or before"),
            _ => ("at least", "at most"),
        };
        if let Some((min, text)) = &self.min
            && scalar.compare(min) == Some(Ordering::Less)
        {
            return Err(format!("must be {low} {text}, got {shown}"));
        }
        if let Some((max, text)) = &self.max
            && scalar.compare(max) == Some(Ordering::Greater)
        {
            return Err(format!("must be {high} {text}, got {shown}"));
        }
        Ok(())
    }

    fn check_string(&self, text: &str, value: &Value) -> Result<(), String> {
        let len = Scalar::Number(Decimal::from(text.chars().count()));
        let chars = text.chars().count();
        if let Some((min, bound)) = &self.min
            && len.compare(min) == Some(Ordering::Less)
        {
            return Err(format!(
                "must be at least {bound} characters long, got {chars}"
            ));
        }
        if let Some((max, bound)) = &self.max
            && len.compare(max) == Some(Ordering::Greater)
        {
            return Err(format!(
                "must be at most {bound} characters long, got {chars}"
            ));
        }
        if let Some((pattern, re)) = &self.pattern
            && !re.is_match(text)
        {
            return Err(format!(
                "must match the pattern `{pattern}`, got {}",
                show(value)
            ));
        }
        Ok(())
    }
}

/// Checks the values a launch setting gives an agent. Paths are parameter names (`org_id`,
/// `orgs[1]`); `null` counts as no value. `classifiers` finds a classifier of the agent's
/// application by name.
pub fn validate_values<'c>(
    specs: &[ParamSpec],
    values: &Map<String, Value>,
    classifiers: &dyn Fn(&str) -> Option<&'c Classifier>,
) -> ValidationErrors {
    let mut errors = ValidationErrors::new();
    for spec in specs {
        let membership = match &spec.ty {
            ParamType::Classifier(name) => Membership::Check(classifiers(name)),
            _ => Membership::Skip,
        };
        match values.get(&spec.name).filter(|v| !v.is_null()) {
            Some(value) => errors.extend_prefixed(&spec.name, check_value(spec, value, membership)),
            None if spec.required && spec.default.as_ref().is_none_or(Value::is_null) => {
                errors.push(spec.name.clone(), "required");
            }
            None => {}
        }
    }
    for (name, value) in values {
        if !value.is_null() && !specs.iter().any(|s| s.name == *name) {
            errors.push(
                name.clone(),
                format!("no parameter '{name}' in the agent's schema"),
            );
        }
    }
    errors
}

/// The values an agent receives at launch: the given ones (without `null`s) plus the defaults of
/// parameters that got no value.
pub fn effective_values(specs: &[ParamSpec], values: &Map<String, Value>) -> Map<String, Value> {
    let mut out: Map<String, Value> = values
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for spec in specs {
        if let Some(default) = spec.default.as_ref().filter(|d| !d.is_null()) {
            out.entry(spec.name.clone())
                .or_insert_with(|| default.clone());
        }
    }
    out
}

/// Only the classifier-membership part of [`validate_value`], for defaults whose form
/// [`validate_spec`] already checked without the classifier at hand.
pub(crate) fn validate_codes(
    spec: &ParamSpec,
    value: &Value,
    classifier: &Classifier,
) -> ValidationErrors {
    let mut errors = ValidationErrors::new();
    let mut check = |path: String, item: &Value| {
        if let Some(code) = item.as_str().filter(|c| !classifier.contains(c)) {
            errors.push(
                path,
                format!("value '{code}' is not in classifier '{}'", classifier.name),
            );
        }
    };
    match value {
        Value::Array(items) if spec.array => {
            for (i, item) in items.iter().enumerate() {
                check(format!("[{i}]"), item);
            }
        }
        item if !spec.array => check(String::new(), item),
        _ => {}
    }
    errors
}
