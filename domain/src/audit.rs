//! Reading the audit log: what an entry changed.
//!
//! Every write records the state of what it touched before and after it (as JSON). A person
//! reading the log wants the fields that changed, not two documents: [`changes`] walks both and
//! lists the leaves that differ, by path, with every value under a secret-looking key masked
//! (the catalog never serializes its secrets, so this is the second lock on that door).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::masked::{MASKED, mask_webhook_url};

/// One field an entry changed: `before` is `None` when it was added, `after` when removed.
/// A field that was or became JSON `null` is `Some(Value::Null)`, and stays so through JSON
/// (the page is rendered on the server and again in the browser from what it sent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Dotted path of the field (`recovery.start_timeout`); array items by index (`members.1`).
    pub path: String,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub before: Option<Value>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub after: Option<Value>,
}

/// A value that is there, `null` included: only an absent field is `None`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The action of a failed login: its actor and entity are the name someone typed, and its cause
/// says whether that user exists, so only admins read them.
pub const LOGIN_FAILED: &str = "login_failed";

/// `value` as a reader who is not an admin sees it: [`masked`], and every webhook URL past its
/// host ([`mask_webhook_url`]).
///
/// ```
/// use am_domain::audit::masked_for_reader;
/// let v = serde_json::json!({"webhook_url": "https://hooks.example/T/B/x", "webhook_secret": "s"});
/// assert_eq!(
///     masked_for_reader(&v),
///     serde_json::json!({"webhook_url": "https://hooks.example/•••", "webhook_secret": "•••"})
/// );
/// ```
pub fn masked_for_reader(value: &Value) -> Value {
    fn urls(v: Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(k, v)| match v {
                        Value::String(s) if k == "webhook_url" => {
                            (k, Value::String(mask_webhook_url(&s)))
                        }
                        v => (k, urls(v)),
                    })
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.into_iter().map(urls).collect()),
            other => other,
        }
    }
    urls(masked(value, false))
}

/// Key names whose values are never shown.
fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["secret", "password", "token_hash"]
        .iter()
        .any(|s| key.contains(s))
}

/// The fields that differ between `before` and `after`, by path in key order.
pub fn changes(before: Option<&Value>, after: Option<&Value>) -> Vec<Change> {
    let mut out = Vec::new();
    walk("", before, after, false, &mut out);
    out
}

fn walk(
    path: &str,
    before: Option<&Value>,
    after: Option<&Value>,
    secret: bool,
    out: &mut Vec<Change>,
) {
    if before == after {
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match (before, after) {
        (Some(Value::Object(b)), Some(Value::Object(a))) => {
            for (k, v) in b {
                walk(&join(k), Some(v), a.get(k), secret || is_secret(k), out);
            }
            for (k, v) in a.iter().filter(|(k, _)| !b.contains_key(*k)) {
                walk(&join(k), None, Some(v), secret || is_secret(k), out);
            }
        }
        (Some(Value::Array(b)), Some(Value::Array(a))) if b.len() == a.len() => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                walk(&join(&i.to_string()), Some(bv), Some(av), secret, out);
            }
        }
        _ => out.push(Change {
            path: path.to_owned(),
            before: before.map(|v| masked(v, secret)),
            after: after.map(|v| masked(v, secret)),
        }),
    }
}

/// `value`, with every value under a secret key (or all of it, when `secret`) masked.
pub fn masked(value: &Value, secret: bool) -> Value {
    if secret {
        return match value {
            Value::Null => Value::Null,
            _ => Value::String(MASKED.to_owned()),
        };
    }
    match value {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), masked(v, is_secret(k))))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| masked(v, false)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_changed_leaves_are_listed_by_path() {
        let before = json!({"title": "Nightly", "recovery": {"start_timeout": "30s", "on_lost": "fail"}, "enabled": true});
        let after = json!({"title": "Nightly", "recovery": {"start_timeout": "1m", "on_lost": "fail"}, "enabled": false});
        let c = changes(Some(&before), Some(&after));
        let paths: Vec<&str> = c.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["enabled", "recovery.start_timeout"]);
        assert_eq!(c[1].before, Some(json!("30s")));
        assert_eq!(c[1].after, Some(json!("1m")));
    }

    #[test]
    fn added_and_removed_fields_have_one_side() {
        let c = changes(Some(&json!({"a": 1})), Some(&json!({"b": 2})));
        assert_eq!(
            c,
            [
                Change {
                    path: "a".into(),
                    before: Some(json!(1)),
                    after: None
                },
                Change {
                    path: "b".into(),
                    before: None,
                    after: Some(json!(2))
                },
            ]
        );
    }

    #[test]
    fn a_created_entity_is_one_change_of_the_whole_value() {
        let c = changes(None, Some(&json!({"id": "x"})));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].path, "");
        assert_eq!(c[0].after, Some(json!({"id": "x"})));
    }

    #[test]
    fn arrays_of_the_same_length_compare_by_item_and_others_whole() {
        let c = changes(
            Some(&json!({"members": ["a", "b"]})),
            Some(&json!({"members": ["a", "c"]})),
        );
        assert_eq!(c[0].path, "members.1");
        let c = changes(
            Some(&json!({"members": ["a"]})),
            Some(&json!({"members": ["a", "c"]})),
        );
        assert_eq!(c[0].path, "members");
    }

    #[test]
    fn secrets_are_masked_wherever_they_are() {
        let before = json!({"webhook_secret": "s1", "nested": {"password": "p"}});
        let after = json!({"webhook_secret": "s2", "nested": {"password": null}, "new": {"api_secret": "x", "ok": 1}});
        let c = changes(Some(&before), Some(&after));
        let paths: Vec<&str> = c.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["nested.password", "webhook_secret", "new"]);
        assert_eq!(c[0].before, Some(json!(MASKED)));
        assert_eq!(
            c[0].after,
            Some(Value::Null),
            "a removed secret shows as removed"
        );
        assert_eq!(c[1].before, Some(json!(MASKED)));
        assert_eq!(c[1].after, Some(json!(MASKED)));
        assert_eq!(c[2].after, Some(json!({"api_secret": MASKED, "ok": 1})));
        assert!(!serde_json::to_string(&c).expect("json").contains("s1"));
    }

    #[test]
    fn no_change_means_no_entries() {
        let v = json!({"a": [1, 2]});
        assert!(changes(Some(&v), Some(&v)).is_empty());
        assert!(changes(None, None).is_empty());
    }

    #[test]
    fn a_change_from_or_to_null_reads_back_as_it_was_written() {
        let changes = super::changes(
            Some(&serde_json::json!({ "description": null, "enabled": true })),
            Some(&serde_json::json!({ "description": "x", "enabled": false, "added": 1 })),
        );
        let json = serde_json::to_string(&changes).expect("json");
        let back: Vec<Change> = serde_json::from_str(&json).expect("read back");
        assert_eq!(back, changes);
        let description = back
            .iter()
            .find(|c| c.path == "description")
            .expect("description");
        assert_eq!(description.before, Some(Value::Null));
        let added = back.iter().find(|c| c.path == "added").expect("added");
        assert_eq!(added.before, None);
    }
}
