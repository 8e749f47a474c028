//! Formats of the names operators type: catalog ids, host names, broker exchange names.
//!
//! Ids end up in broker queue names, URLs and log fields, so they are kept to a small,
//! unambiguous alphabet instead of being escaped everywhere.

/// Longest id accepted, so that derived broker names stay under the broker's 255-byte limit.
pub const MAX_ID_LEN: usize = 128;

const ID_RULE: &str =
    "ids are 1–128 characters of a–z, 0–9, '.', '_' and '-', starting with a letter or digit";

/// [`validate_id`]'s rule as a regular expression, for documents that describe ids (the API's
/// OpenAPI document); a test keeps the two in agreement.
pub const ID_PATTERN: &str = "^[a-z0-9][a-z0-9._-]{0,127}$";

/// Checks a catalog id: `[a-z0-9][a-z0-9._-]*`, 1–128 characters.
pub fn validate_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err(format!("an id is required ({ID_RULE})"));
    }
    let len = id.chars().count();
    if len > MAX_ID_LEN {
        return Err(format!(
            "'{}…' is {len} characters long; {ID_RULE}",
            truncate(id, 32)
        ));
    }
    let mut chars = id.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    if first_ok && rest_ok {
        Ok(())
    } else {
        Err(format!("'{id}' is not a valid id: {ID_RULE}"))
    }
}

/// Checks a host name as RFC 1123 defines it (which also admits IPv4 addresses): dot-separated
/// labels of 1–63 letters, digits and '-', not starting or ending with '-', 253 characters at most.
pub fn validate_host_name(host: &str) -> Result<(), String> {
    const RULE: &str = "host names are dot-separated labels of 1–63 letters, digits and '-' \
                        (not starting or ending with '-'), 253 characters at most";
    if host.is_empty() {
        return Err(format!("a host name is required ({RULE})"));
    }
    if host.len() > 253 {
        return Err(format!(
            "'{}…' is {} characters long; {RULE}",
            truncate(host, 32),
            host.len()
        ));
    }
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    if host.split('.').all(label_ok) {
        Ok(())
    } else {
        Err(format!("'{host}' is not a valid host name: {RULE}"))
    }
}

/// Checks the name of an AMQP exchange producers publish to: 1–255 of `[A-Za-z0-9._:-]`, and
/// not in the `amq.` namespace the broker reserves for itself.
pub fn validate_exchange_name(name: &str) -> Result<(), String> {
    const RULE: &str =
        "exchange names are 1–255 characters of letters, digits, '.', '_', ':' and '-'";
    if name.is_empty() {
        return Err(format!("an exchange name is required ({RULE})"));
    }
    if name.len() > 255 {
        return Err(format!(
            "'{}…' is {} characters long; {RULE}",
            truncate(name, 32),
            name.len()
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'))
    {
        return Err(format!("'{name}' is not a valid exchange name: {RULE}"));
    }
    if name.starts_with("amq.") {
        return Err(format!(
            "'{name}' is reserved by the broker: exchange names must not start with 'amq.'"
        ));
    }
    Ok(())
}

/// Checks a webhook URL: only plain HTTP(S) endpoints are called.
pub fn validate_webhook_url(url: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(r)
            if !r.is_empty() && !r.starts_with('/') && !url.chars().any(char::is_whitespace) =>
        {
            Ok(())
        }
        _ => Err(format!(
            "'{url}' is not a webhook URL: it must start with http:// or https:// and name a host"
        )),
    }
}

fn truncate(s: &str, max_chars: usize) -> String {
    s.chars().take(max_chars).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_pattern_says_what_validate_id_does() {
        let re = regex_lite::Regex::new(ID_PATTERN).expect("pattern");
        let long = "a".repeat(MAX_ID_LEN);
        let too_long = "a".repeat(MAX_ID_LEN + 1);
        for id in [
            "a",
            "0",
            "demo.echo-1_x",
            "-a",
            ".a",
            "A",
            "a b",
            "é",
            "",
            "a/b",
            long.as_str(),
            too_long.as_str(),
            "a\n",
        ] {
            assert_eq!(re.is_match(id), validate_id(id).is_ok(), "{id:?}");
        }
    }

    #[test]
    fn ids() {
        for ok in [
            "billing",
            "billing.invoice-export.1",
            "0",
            "a_b",
            &"a".repeat(128),
        ] {
            assert_eq!(validate_id(ok), Ok(()), "{ok}");
        }
        for bad in ["", "Billing", "-a", ".a", "a b", "é", &"a".repeat(129)] {
            assert!(validate_id(bad).is_err(), "{bad}");
        }
        let msg = validate_id("Billing").expect_err("upper case");
        assert!(msg.contains("'Billing'") && msg.contains("a–z"), "{msg}");
    }

    #[test]
    fn host_names() {
        for ok in ["app-01", "app-01.example.org", "10.0.0.1", "LOCALHOST"] {
            assert_eq!(validate_host_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "-app", "app-", "a..b", "a_b", "a b", &"a".repeat(64)] {
            assert!(validate_host_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn exchange_names() {
        assert_eq!(validate_exchange_name("billing.events:v1"), Ok(()));
        assert!(
            validate_exchange_name("amq.topic")
                .expect_err("reserved")
                .contains("amq.")
        );
        assert!(validate_exchange_name("a/b").is_err());
        assert!(validate_exchange_name("").is_err());
        assert!(validate_exchange_name(&"a".repeat(256)).is_err());
    }

    #[test]
    fn webhook_urls() {
        assert_eq!(validate_webhook_url("https://hooks.example.org/x"), Ok(()));
        assert_eq!(validate_webhook_url("http://localhost:8080"), Ok(()));
        for bad in [
            "ftp://x",
            "https://",
            "example.org",
            "https:///x",
            "https://a b",
        ] {
            assert!(validate_webhook_url(bad).is_err(), "{bad}");
        }
    }
}
