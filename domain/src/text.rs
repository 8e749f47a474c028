//! Which characters a stored text may hold.
//!
//! A NUL cannot be stored by PostgreSQL at all (in text or JSON), so a catalog holding one on
//! SQLite could not be moved, and an export holding one would not import again. Other control
//! characters are invisible in pages, break lines in logs and audit entries, and make two
//! titles look alike. So one-line texts (ids, titles, labels, names) hold no control character;
//! free text (descriptions, messages) may break lines (`\n`, `\r`) and hold tabs, and nothing
//! else. Every write checks these rules; text that arrives from a node or from a login form is
//! cleaned or escaped instead, because refusing it would lose the rest of what came with it.

use std::borrow::Cow;

/// What a text is, for the characters it may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// Titles, labels, names, codes: no control character.
    One,
    /// Descriptions and other free text: tabs and line breaks, no other control character.
    Many,
}

impl Lines {
    fn allows(self, c: char) -> bool {
        !c.is_control() || (self == Lines::Many && matches!(c, '\t' | '\n' | '\r'))
    }
}

/// The first character of `s` that a text of this kind may not hold.
///
/// ```
/// use am_domain::text::{Lines, forbidden};
/// assert_eq!(forbidden("Nightly export", Lines::One), None);
/// assert_eq!(forbidden("two\nlines", Lines::One), Some('\n'));
/// assert_eq!(forbidden("two\nlines", Lines::Many), None);
/// assert_eq!(forbidden("nul\0", Lines::Many), Some('\0'));
/// ```
pub fn forbidden(s: &str, lines: Lines) -> Option<char> {
    // Most texts are printable ASCII, decided on their bytes without decoding.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return None;
    }
    s.chars().find(|c| !lines.allows(*c))
}

/// The error message for a text holding `c`, naming it as `U+0000` (invisible otherwise).
pub fn forbidden_message(c: char, lines: Lines) -> String {
    let what = match lines {
        Lines::One => "a one-line text may hold no control character",
        Lines::Many => "only tabs and line breaks may stand among its characters",
    };
    format!(
        "contains the control character U+{:04X}; {what}",
        u32::from(c)
    )
}

/// `s` with every character a text of this kind may not hold replaced by a space: for text
/// that comes from code or from the wire and must not be refused whole for one character.
pub fn clean(s: &str, lines: Lines) -> Cow<'_, str> {
    if forbidden(s, lines).is_none() {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| if lines.allows(c) { c } else { ' ' })
            .collect(),
    )
}

/// As [`clean`], in place; `s` is untouched (not reallocated) when it holds nothing to clean.
pub fn clean_in_place(s: &mut String, lines: Lines) {
    if let Cow::Owned(cleaned) = clean(s, lines) {
        *s = cleaned;
    }
}

/// `s` with control characters written as escapes (`\n`, `\u{0}`): for recording text a
/// stranger typed (a user name at a failed login) so that it is neither lost nor able to forge
/// lines or hide characters.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    if forbidden(s, Lines::One).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether any string or key of a JSON document holds a NUL, which PostgreSQL refuses in JSON.
pub fn json_has_nul(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(items) => items.iter().any(json_has_nul),
        serde_json::Value::Object(map) => {
            map.iter().any(|(k, v)| k.contains('\0') || json_has_nul(v))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_character_is_found_in_one_line_texts() {
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            let s = format!("ab{c}cd");
            assert_eq!(forbidden(&s, Lines::One), Some(c), "U+{:04X}", u32::from(c));
            assert_eq!(clean(&s, Lines::One), "ab cd");
        }
    }

    #[test]
    fn free_text_keeps_tabs_and_line_breaks_only() {
        assert_eq!(forbidden("a\tb\r\nc", Lines::Many), None);
        assert_eq!(forbidden("a\u{1b}[31m", Lines::Many), Some('\u{1b}'));
        assert_eq!(forbidden("bell\u{7}", Lines::Many), Some('\u{7}'));
        assert_eq!(clean("a\u{85}b\nc", Lines::Many), "a b\nc");
    }

    #[test]
    fn other_text_passes_untouched() {
        for s in [
            "",
            "Ünïcødé ✓ 日本語",
            "<script>alert(1)</script>",
            "quote\" back\\slash",
            "\u{a0}nbsp",
        ] {
            assert_eq!(forbidden(s, Lines::One), None, "{s}");
            assert!(matches!(clean(s, Lines::One), Cow::Borrowed(_)));
            assert!(matches!(escape_controls(s), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn escapes_show_what_was_typed() {
        assert_eq!(escape_controls("ghost\0user"), "ghost\\u{0}user");
        assert_eq!(escape_controls("a\nb"), "a\\nb");
    }

    #[test]
    fn nul_is_found_anywhere_in_json() {
        assert!(json_has_nul(
            &serde_json::json!({"a": [1, {"b": "x\u{0}"}]})
        ));
        assert!(json_has_nul(&serde_json::json!({"k\u{0}": 1})));
        assert!(!json_has_nul(&serde_json::json!({"a": ["\\u0000", "\n"]})));
    }
}
