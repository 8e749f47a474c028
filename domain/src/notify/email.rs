//! E-mail notifications: the subject and plain text of a notice, and the recipient lists of
//! `notify_email` (docs/notifications.md). Pure, like the rest of `notify`.

use super::Notice;

impl Notice {
    /// The subject of an e-mail: the event and the summary on one line, cut to
    /// [`EMAIL_SUBJECT_CHARS`] so mail clients show it whole.
    pub fn email_subject(&self) -> String {
        let line: String = self
            .summary
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let subject = format!("[Agent Manager] {}: {}", self.event.as_str(), line.trim());
        if subject.chars().count() <= EMAIL_SUBJECT_CHARS {
            return subject;
        }
        let mut cut: String = subject.chars().take(EMAIL_SUBJECT_CHARS - 1).collect();
        cut.push('…');
        cut
    }

    /// The body of an e-mail: the summary, one line per known detail, and the link.
    pub fn email_text(&self) -> String {
        let mut out = format!("{}\n\n", self.summary);
        let details = [
            ("Event", Some(self.event.as_str())),
            ("Application", self.application.as_deref()),
            ("Launch setting", self.launch_setting.as_deref()),
            ("Schedule group", self.group.as_deref()),
            ("Activation", self.activation.as_deref()),
            ("Host", self.host.as_deref()),
            ("Reason", self.reason.as_deref()),
            ("Error type", self.error_type.as_deref()),
            ("Error message", self.error_message.as_deref()),
            ("Action", self.action.as_deref()),
        ];
        for (label, value) in details {
            if let Some(v) = value {
                out.push_str(&format!("{label}: {v}\n"));
            }
        }
        out.push_str(&format!("When: {}\n", self.at.to_rfc3339()));
        if self.count > 1 {
            out.push_str(&format!(
                "Repeats: {} times within the folding window\n",
                self.count
            ));
        }
        out.push_str(&format!("\nOpen in Agent Manager: {}\n", self.url));
        out
    }
}

/// Longest e-mail subject, in characters.
pub const EMAIL_SUBJECT_CHARS: usize = 120;
/// Most addresses one `notify_email` may list.
pub const MAX_EMAIL_RECIPIENTS: usize = 20;
/// Longest e-mail address (RFC 5321's limit on a forward path).
const MAX_EMAIL_CHARS: usize = 254;

/// The addresses of a `notify_email` list (separated by commas, blanks around them ignored),
/// or what is wrong with it. Checks the shape only (`local@domain`, no blanks or brackets):
/// whether a mailbox exists is the relay's business, and a rejection shows as the delivery's
/// last error.
pub fn email_recipients(list: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for part in list.split(',') {
        let a = part.trim();
        if a.is_empty() {
            continue;
        }
        let shape_ok = a.chars().count() <= MAX_EMAIL_CHARS
            && !a
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || "<>()[]\\;:\"".contains(c))
            && match a.split_once('@') {
                Some((local, domain)) => {
                    !local.is_empty()
                        && !domain.is_empty()
                        && !domain.contains('@')
                        && !domain.starts_with('.')
                        && !domain.ends_with('.')
                        && !domain.contains("..")
                }
                None => false,
            };
        if !shape_ok {
            let shown: String = a.chars().take(60).collect();
            return Err(format!(
                "'{shown}' is not an e-mail address: write name@domain, several separated by commas"
            ));
        }
        if !out.iter().any(|o| o.eq_ignore_ascii_case(a)) {
            out.push(a.to_owned());
        }
    }
    if out.is_empty() {
        return Err("no e-mail address: write name@domain, several separated by commas".into());
    }
    if out.len() > MAX_EMAIL_RECIPIENTS {
        return Err(format!(
            "{} addresses: at most {MAX_EMAIL_RECIPIENTS} (use a mailing list for more)",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::Event;
    use chrono::{DateTime, Utc};

    #[test]
    fn email_lists_are_split_checked_and_deduplicated() {
        assert_eq!(
            email_recipients(" ops@example.org, oncall+billing@example.org ,OPS@example.org,"),
            Ok(vec![
                "ops@example.org".to_owned(),
                "oncall+billing@example.org".to_owned()
            ])
        );
        for bad in [
            "",
            " , ",
            "ops",
            "@example.org",
            "ops@",
            "ops@@example.org",
            "ops@example..org",
            "ops@.example.org",
            "Ops <ops@example.org>",
            "a b@example.org",
            "ops@example.org\r\nBcc: x@evil.example",
        ] {
            assert!(email_recipients(bad).is_err(), "{bad:?}");
        }
        let many = (0..=MAX_EMAIL_RECIPIENTS)
            .map(|i| format!("u{i}@example.org"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(
            email_recipients(&many)
                .expect_err("too many")
                .contains("at most 20")
        );
        let msg = email_recipients("ok@example.org, nope").expect_err("one bad");
        assert!(msg.contains("'nope'"), "{msg}");
    }

    #[test]
    fn an_email_names_the_event_the_details_and_the_link() {
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let mut n = Notice::new(
            Event::BreakerTripped,
            at,
            "The breaker of billing.export tripped\nafter 5 failures.",
            "https://am.example/failures/billing.export",
        );
        n.launch_setting = Some("billing.export".into());
        n.error_type = Some("java.io.IOException".into());
        n.count = 3;
        assert_eq!(
            n.email_subject(),
            "[Agent Manager] breaker_tripped: The breaker of billing.export tripped after 5 failures."
        );
        let text = n.email_text();
        for line in [
            "Launch setting: billing.export\n",
            "Error type: java.io.IOException\n",
            "Repeats: 3 times",
            "Open in Agent Manager: https://am.example/failures/billing.export\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(!text.contains("Host:"), "unknown details are left out");
        n.summary = "x".repeat(500);
        let subject = n.email_subject();
        assert_eq!(subject.chars().count(), EMAIL_SUBJECT_CHARS);
        assert!(subject.ends_with('…'));
    }
}
