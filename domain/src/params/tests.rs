use super::*;
use crate::{
    ValidationErrors,
    catalog::{Classifier, ClassifierValue},
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn spec(name: &str, ty: ParamType) -> ParamSpec {
    ParamSpec::new(name, ty)
}

fn bounded(ty: ParamType, min: Value, max: Value) -> ParamSpec {
    ParamSpec {
        min: Some(min),
        max: Some(max),
        ..spec("p", ty)
    }
}

fn organisations() -> Classifier {
    Classifier {
        application: "billing".into(),
        name: "organisations".into(),
        title: String::new(),
        values: ["acme", "globex"]
            .iter()
            .map(|c| ClassifierValue {
                code: (*c).into(),
                label: c.to_uppercase(),
            })
            .collect(),
    }
}

fn messages(errors: &ValidationErrors) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn check(spec: &ParamSpec, value: Value) -> Vec<String> {
    messages(&validate_value(spec, &value, Some(&organisations())))
}

#[test]
fn scalar_types_accept_their_json_form() {
    let cases = [
        (ParamType::String, json!("x")),
        (ParamType::Integer, json!(-5)),
        (ParamType::Decimal, json!(12.5)),
        (ParamType::Decimal, json!("12.50")),
        (ParamType::Decimal, json!(1e3)),
        (ParamType::Boolean, json!(true)),
        (ParamType::Date, json!("2024-02-29")),
        (ParamType::Datetime, json!("2024-05-01T08:00:00+02:00")),
        (ParamType::Duration, json!("1h 30m")),
        (ParamType::Classifier("organisations".into()), json!("acme")),
    ];
    for (ty, value) in cases {
        assert_eq!(
            check(&spec("p", ty.clone()), value.clone()),
            Vec::<String>::new(),
            "{ty} {value}"
        );
    }
}

#[test]
fn wrong_forms_say_what_was_expected() {
    let int = spec("p", ParamType::Integer);
    assert_eq!(
        check(&int, json!("abc")),
        ["expected an integer, got \"abc\""]
    );
    assert_eq!(check(&int, json!(1.5)), ["expected an integer, got 1.5"]);
    assert_eq!(check(&int, json!(1.0)), ["expected an integer, got 1.0"]);
    assert_eq!(
        check(&spec("p", ParamType::Boolean), json!("yes")),
        ["expected true or false, got \"yes\""]
    );
    assert_eq!(
        check(&spec("p", ParamType::Date), json!("2024-2-1")),
        ["expected a date as YYYY-MM-DD, got \"2024-2-1\""]
    );
    assert_eq!(
        check(&spec("p", ParamType::Date), json!("2023-02-29")).len(),
        1
    );
    assert!(
        check(&spec("p", ParamType::Datetime), json!("2024-05-01 08:00"))[0].contains("RFC 3339")
    );
    assert!(check(&spec("p", ParamType::Duration), json!("soon"))[0].contains("duration"));
    assert!(check(&spec("p", ParamType::Decimal), json!("12,5"))[0].contains("decimal"));
    assert_eq!(
        check(&spec("p", ParamType::String), json!(5)),
        ["expected a string, got 5"]
    );
}

#[test]
fn classifier_membership() {
    let p = spec("org", ParamType::Classifier("organisations".into()));
    assert_eq!(
        check(&p, json!("initech")),
        ["value 'initech' is not in classifier 'organisations'"]
    );
    assert_eq!(
        messages(&validate_value(&p, &json!("acme"), None)),
        ["classifier 'organisations' is not published by the application"]
    );
    assert_eq!(
        check(&p, json!(3)),
        ["expected a code of classifier 'organisations', got 3"]
    );
}

#[test]
fn bounds() {
    let int = bounded(ParamType::Integer, json!(1), json!(10));
    assert_eq!(check(&int, json!(0)), ["must be at least 1, got 0"]);
    assert_eq!(check(&int, json!(11)), ["must be at most 10, got 11"]);
    assert!(check(&int, json!(10)).is_empty());
    let dec = bounded(ParamType::Decimal, json!("0.5"), json!(2));
    assert_eq!(
        check(&dec, json!("0.49")),
        ["must be at least 0.5, got 0.49"]
    );
    assert!(check(&dec, json!(2.0)).is_empty());
    let text = bounded(ParamType::String, json!(2), json!(3));
    assert_eq!(
        check(&text, json!("a")),
        ["must be at least 2 characters long, got 1"]
    );
    assert_eq!(
        check(&text, json!("ééé")),
        Vec::<String>::new(),
        "length counts characters"
    );
    assert_eq!(
        check(&text, json!("abcd")),
        ["must be at most 3 characters long, got 4"]
    );
    let date = bounded(ParamType::Date, json!("2024-01-01"), json!("2024-12-31"));
    assert_eq!(
        check(&date, json!("2023-12-31")),
        ["must be on or after 2024-01-01, got 2023-12-31"]
    );
    let dt = bounded(
        ParamType::Datetime,
        json!("2024-01-01T00:00:00Z"),
        json!("2024-01-02T00:00:00Z"),
    );
    assert!(
        check(&dt, json!("2024-01-01T01:00:00+02:00"))[0].contains("on or after"),
        "compares instants"
    );
    let dur = bounded(ParamType::Duration, json!("1s"), json!("1h"));
    assert_eq!(check(&dur, json!("2h")), ["must be at most 1h, got 2h"]);
    let pattern = ParamSpec {
        pattern: Some("[A-Z]{3}".into()),
        ..spec("p", ParamType::String)
    };
    assert_eq!(
        check(&pattern, json!("ABCD")),
        ["must match the pattern `[A-Z]{3}`, got \"ABCD\""]
    );
    assert!(check(&pattern, json!("ABC")).is_empty());
}

#[test]
fn arrays_report_the_index() {
    let p = ParamSpec {
        array: true,
        ..spec("orgs", ParamType::Classifier("organisations".into()))
    };
    assert_eq!(
        check(&p, json!(["acme", "x", "globex", 4])),
        [
            "[1]: value 'x' is not in classifier 'organisations'",
            "[3]: expected a code of classifier 'organisations', got 4"
        ]
    );
    assert_eq!(
        check(&p, json!("acme")),
        ["expected an array of classifier(organisations) values, got \"acme\""]
    );
    let required = ParamSpec {
        required: true,
        ..p
    };
    assert_eq!(
        check(&required, json!([])),
        ["at least one value is required"]
    );
}

#[test]
fn spec_rules() {
    assert!(validate_spec(&spec("org_id", ParamType::Integer)).is_empty());
    assert_eq!(
        messages(&validate_spec(&spec("Org", ParamType::Integer)))[0]
            .split(':')
            .next(),
        Some("name")
    );
    assert!(!validate_spec(&spec("1st", ParamType::Integer)).is_empty());
    assert!(!validate_spec(&spec("", ParamType::Integer)).is_empty());

    let bool_min = ParamSpec {
        min: Some(json!(1)),
        ..spec("p", ParamType::Boolean)
    };
    assert_eq!(
        messages(&validate_spec(&bool_min)),
        ["min: min does not apply to boolean parameters"]
    );
    let pattern_on_int = ParamSpec {
        pattern: Some("x".into()),
        ..spec("p", ParamType::Integer)
    };
    assert_eq!(
        messages(&validate_spec(&pattern_on_int)),
        ["pattern: pattern only applies to string parameters, not integer"]
    );
    let bad_pattern = ParamSpec {
        pattern: Some("(".into()),
        ..spec("p", ParamType::String)
    };
    assert!(
        messages(&validate_spec(&bad_pattern))[0]
            .starts_with("pattern: `(` is not a valid regular expression")
    );
    let bad_min = bounded(ParamType::Integer, json!("one"), json!(3));
    assert_eq!(
        messages(&validate_spec(&bad_min)),
        ["min: expected an integer, got \"one\""]
    );
    let negative_length = bounded(ParamType::String, json!(-1), json!(3));
    assert_eq!(validate_spec(&negative_length).0[0].path, "min");
    let swapped = bounded(ParamType::Date, json!("2024-12-31"), json!("2024-01-01"));
    assert_eq!(
        messages(&validate_spec(&swapped)),
        ["max: must not be below min (2024-12-31), got 2024-01-01"]
    );
    let bad_default = ParamSpec {
        default: Some(json!(20)),
        ..bounded(ParamType::Integer, json!(1), json!(10))
    };
    assert_eq!(
        messages(&validate_spec(&bad_default)),
        ["default: must be at most 10, got 20"]
    );
    let bad_array_default = ParamSpec {
        array: true,
        default: Some(json!([1, "x"])),
        ..spec("p", ParamType::Integer)
    };
    assert_eq!(
        messages(&validate_spec(&bad_array_default)),
        ["default[1]: expected an integer, got \"x\""]
    );
    let classifier_default = ParamSpec {
        default: Some(json!("anything")),
        ..spec("p", ParamType::Classifier("organisations".into()))
    };
    assert!(
        validate_spec(&classifier_default).is_empty(),
        "codes are checked against the catalog, not here"
    );
    assert!(!validate_spec(&spec("p", ParamType::Classifier("Bad Name".into()))).is_empty());
}

#[test]
fn schema_rules() {
    let schema = [
        spec("a", ParamType::Integer),
        spec("b", ParamType::String),
        ParamSpec {
            default: Some(json!("x")),
            ..spec("a", ParamType::Integer)
        },
    ];
    assert_eq!(
        messages(&validate_schema(&schema)),
        [
            "[2].default: expected an integer, got \"x\"",
            "[2].name: parameter 'a' is already defined at [0]"
        ]
    );
    assert!(validate_schema(&schema[..2]).is_empty());
}

#[test]
fn values_against_a_schema() {
    let schema = [
        ParamSpec {
            required: true,
            ..spec("org_id", ParamType::Classifier("organisations".into()))
        },
        ParamSpec {
            required: true,
            default: Some(json!(10)),
            ..spec("limit", ParamType::Integer)
        },
        ParamSpec {
            array: true,
            ..spec("orgs", ParamType::Classifier("organisations".into()))
        },
        spec("note", ParamType::String),
    ];
    let orgs = organisations();
    let lookup = |name: &str| (name == "organisations").then_some(&orgs);
    let values: Map<String, Value> = serde_json::from_value(json!({
        "orgs": ["acme", "nope"], "note": null, "x": 1, "y": null
    }))
    .expect("object");
    assert_eq!(
        messages(&validate_values(&schema, &values, &lookup)),
        [
            "org_id: required",
            "orgs[1]: value 'nope' is not in classifier 'organisations'",
            "x: no parameter 'x' in the agent's schema"
        ]
    );
    let good: Map<String, Value> =
        serde_json::from_value(json!({ "org_id": "acme", "orgs": ["globex"] })).expect("object");
    assert!(validate_values(&schema, &good, &lookup).is_empty());
    let none = |_: &str| None;
    assert_eq!(
        messages(&validate_values(&schema, &good, &none)),
        [
            "org_id: classifier 'organisations' is not published by the application",
            "orgs: classifier 'organisations' is not published by the application"
        ]
    );

    let effective = effective_values(&schema, &good);
    assert_eq!(
        Value::Object(effective),
        json!({ "org_id": "acme", "orgs": ["globex"], "limit": 10 })
    );
}

fn bounded_int() -> ParamSpec {
    bounded(ParamType::Integer, json!(-100), json!(100))
}

proptest! {
    #[test]
    fn integers_in_range_pass_and_outside_fail(v in -1000i64..1000) {
        let errors = check(&bounded_int(), json!(v));
        prop_assert_eq!(errors.is_empty(), (-100..=100).contains(&v), "{:?}", errors);
    }

    #[test]
    fn decimals_in_range_pass_and_outside_fail(units in -100_000i64..100_000, as_string in any::<bool>()) {
        let d = rust_decimal::Decimal::new(units, 2); // -1000.00..1000.00
        let p = bounded(ParamType::Decimal, json!("-10.5"), json!("10.5"));
        let value = if as_string { json!(d.to_string()) } else { json!(units as f64 / 100.0) };
        let inside = d >= rust_decimal::Decimal::new(-105, 1) && d <= rust_decimal::Decimal::new(105, 1);
        prop_assert_eq!(check(&p, value).is_empty(), inside);
    }

    #[test]
    fn strings_are_bounded_by_length_and_pattern(s in "[a-z]{0,12}") {
        let p = ParamSpec { pattern: Some("[a-z]*".into()), ..bounded(ParamType::String, json!(2), json!(8)) };
        let n = s.chars().count();
        prop_assert_eq!(check(&p, json!(s)).is_empty(), (2..=8).contains(&n));
    }

    #[test]
    fn dates_in_range_pass_and_outside_fail(days in -2000i64..2000) {
        let date = |y, m, d| chrono::NaiveDate::from_ymd_opt(y, m, d).expect("real date");
        let d = date(2024, 1, 1) + chrono::Duration::days(days);
        let p = bounded(ParamType::Date, json!("2023-06-01"), json!("2025-06-01"));
        let inside = d >= date(2023, 6, 1) && d <= date(2025, 6, 1);
        prop_assert_eq!(check(&p, json!(d.format("%Y-%m-%d").to_string())).is_empty(), inside);
    }

    #[test]
    fn datetimes_in_range_pass_and_outside_fail(secs in 1_600_000_000i64..1_800_000_000, offset_h in -12i32..=14) {
        let t = chrono::DateTime::from_timestamp(secs, 0).expect("in range");
        let zone = chrono::FixedOffset::east_opt(offset_h * 3600).expect("offset within ±14h");
        let p = bounded(ParamType::Datetime, json!("2021-01-01T00:00:00Z"), json!("2026-01-01T00:00:00Z"));
        let inside = (1_609_459_200..=1_767_225_600).contains(&secs);
        prop_assert_eq!(check(&p, json!(t.with_timezone(&zone).to_rfc3339())).is_empty(), inside);
    }

    #[test]
    fn durations_in_range_pass_and_outside_fail(secs in 0u64..10_000) {
        let p = bounded(ParamType::Duration, json!("10s"), json!("1h"));
        let text = crate::HumanDuration::from_secs(secs).to_string();
        prop_assert_eq!(check(&p, json!(text)).is_empty(), (10..=3600).contains(&secs));
    }

    #[test]
    fn booleans_pass(b in any::<bool>()) {
        prop_assert!(check(&spec("p", ParamType::Boolean), json!(b)).is_empty());
    }

    #[test]
    fn classifier_codes_pass_only_when_published(code in "[a-z]{1,8}") {
        let p = spec("p", ParamType::Classifier("organisations".into()));
        let published = code == "acme" || code == "globex";
        prop_assert_eq!(check(&p, json!(code)).is_empty(), published);
    }

    #[test]
    fn arrays_report_the_bad_index(
        good in prop::collection::vec(-100i64..=100, 0..10),
        bad in 101i64..10_000,
        at in any::<prop::sample::Index>(),
    ) {
        let mut items: Vec<Value> = good.iter().map(|v| json!(v)).collect();
        let index = at.index(items.len() + 1);
        items.insert(index, json!(bad));
        let p = ParamSpec { array: true, ..bounded_int() };
        let errors = validate_value(&p, &Value::Array(items), None);
        prop_assert_eq!(errors.len(), 1);
        prop_assert_eq!(&errors.0[0].path, &format!("[{index}]"));
        prop_assert_eq!(&errors.0[0].message, &format!("must be at most 100, got {bad}"));
    }
}
