//! How a dead letter's stored parts read on its page: its AMQP headers and properties as
//! name and text, and where its forwarded copy went, in one line.

use am_domain::{
    display::{time, time_or_dash},
    read::dead_letters::ForwardView,
};

/// A JSON object's entries as (name, text), strings unquoted, by name.
pub(super) fn pairs(v: &serde_json::Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = v
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let text = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Policy `forward`: where its copy goes and what became of it.
pub(super) fn forward(f: &ForwardView) -> String {
    match (f.forwarded_at, &f.error) {
        (Some(at), _) => format!("copy forwarded to exchange {} at {}", f.to, time(at)),
        (None, Some(e)) => format!(
            "copy for exchange {} not sent yet ({} tries; next {}): {e}",
            f.to,
            f.attempts,
            time_or_dash(f.next_at)
        ),
        (None, None) => format!("copy for exchange {} on its way", f.to),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_read_by_name_with_strings_unquoted() {
        let v = serde_json::json!({"x-b": 2, "a": "text", "c": {"k": true}});
        assert_eq!(
            pairs(&v),
            [
                ("a".to_owned(), "text".to_owned()),
                ("c".to_owned(), r#"{"k":true}"#.to_owned()),
                ("x-b".to_owned(), "2".to_owned()),
            ]
        );
        assert!(pairs(&serde_json::Value::Null).is_empty());
    }
}
