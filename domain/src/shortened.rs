//! Activation ids as operators meet them: whole, shortened as the pages show them
//! (`01a21774…b46e`, the first 8 and last 4 hex digits), or the first few digits typed by hand.
//! One module says both ways, so what a page shows can always be searched as shown.

/// Hex digits kept at the start and at the end of a shortened id.
pub const HEAD: usize = 8;
pub const TAIL: usize = 4;

/// Fewest hex digits of a typed prefix: fewer would name most of the table.
pub const MIN_PREFIX: usize = 4;

/// `id` as lists show it: the first [`HEAD`] and last [`TAIL`] characters around `…` (ids of
/// 12 characters or fewer as they are).
///
/// ```
/// let id = "01a21774-5a1b-7c3d-8e4f-0123456789ab";
/// assert_eq!(am_domain::shortened::shorten(id), "01a21774…89ab");
/// ```
pub fn shorten(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    if chars.len() <= HEAD + TAIL {
        return id.to_owned();
    }
    let head: String = chars[..HEAD].iter().collect();
    let tail: String = chars[chars.len() - TAIL..].iter().collect();
    format!("{head}…{tail}")
}

/// The ids a typed text may name: every id from `lo` to `hi` (its leading hex digits, padded
/// with the lowest and the highest digit), and of those the ones whose hex form ends with
/// `tail`. A whole id gives `lo == hi`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdSpan {
    pub lo: [u8; 16],
    pub hi: [u8; 16],
    /// Lowercase hex digits the id ends with (the shortened form's end).
    pub tail: Option<String>,
}

impl IdSpan {
    /// Whether the span names one id only.
    pub fn is_whole(&self) -> bool {
        self.lo == self.hi
    }

    /// Whether `id` (its 16 bytes) is named by the span, its tail included.
    pub fn matches(&self, id: &[u8; 16]) -> bool {
        if *id < self.lo || *id > self.hi {
            return false;
        }
        self.tail.as_ref().is_none_or(|t| hex(id).ends_with(t))
    }
}

fn hex(bytes: &[u8; 16]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads what an operator typed as an activation id: a whole UUID (with or without hyphens),
/// at least [`MIN_PREFIX`] leading hex digits (hyphens where a UUID has them allowed), or the
/// shortened form (`01a21774…b46e`, also with `...` for the ellipsis). `None` for anything
/// else, which is then no id at all.
///
/// ```
/// use am_domain::shortened::parse;
/// let span = parse("01a21774…b46e").unwrap();
/// assert_eq!(span.lo[..4], [0x01, 0xa2, 0x17, 0x74]);
/// assert_eq!(span.tail.as_deref(), Some("b46e"));
/// assert!(parse("nightly").is_none());
/// ```
pub fn parse(text: &str) -> Option<IdSpan> {
    let text = text.trim().to_ascii_lowercase();
    let (head, tail) = match text.split_once('…').or_else(|| text.split_once("...")) {
        Some((h, t)) => (h.to_owned(), Some(t.to_owned())),
        None => (text, None),
    };
    let head: String = head.chars().filter(|c| *c != '-').collect();
    let is_hex = |s: &str| s.chars().all(|c| c.is_ascii_hexdigit());
    if head.len() < MIN_PREFIX || head.len() > 32 || !is_hex(&head) {
        return None;
    }
    let tail = match tail {
        Some(t) if !t.is_empty() && t.len() <= 32 - head.len() && is_hex(&t) => Some(t),
        Some(_) => return None,
        None => None,
    };
    let pad = |digit: char| {
        let mut s = head.clone();
        while s.len() < 32 {
            s.push(digit);
        }
        let mut out = [0u8; 16];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(out)
    };
    Some(IdSpan {
        lo: pad('0')?,
        hi: pad('f')?,
        tail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "01a21774-5a1b-7c3d-8e4f-0123456789ab";

    fn bytes(id: &str) -> [u8; 16] {
        parse(id).expect("whole id").lo
    }

    #[test]
    fn what_a_page_shows_is_found_again() {
        let span = parse(&shorten(ID)).expect("the shortened form parses");
        assert!(span.matches(&bytes(ID)));
        assert!(!span.is_whole());
        // Same head, other end.
        assert!(!span.matches(&bytes("01a21774-5a1b-7c3d-8e4f-0123456789ac")));
    }

    #[test]
    fn a_whole_id_is_one_id_with_or_without_hyphens_and_in_any_case() {
        let span = parse(ID).expect("parses");
        assert!(span.is_whole());
        assert_eq!(parse(&ID.replace('-', "").to_uppercase()), Some(span));
    }

    #[test]
    fn a_prefix_spans_every_id_it_begins() {
        let span = parse("01a2177").expect("parses");
        assert_eq!(span.lo[..4], [0x01, 0xa2, 0x17, 0x70]);
        assert_eq!(span.hi[..4], [0x01, 0xa2, 0x17, 0x7f]);
        assert!(span.hi[4..].iter().all(|b| *b == 0xff));
        assert!(span.matches(&bytes(ID)));
        assert!(
            parse("01a21774-5a")
                .expect("hyphens as in a UUID")
                .matches(&bytes(ID))
        );
        assert!(
            parse("01a21774...89ab").is_some(),
            "three dots for the ellipsis"
        );
    }

    #[test]
    fn other_text_is_no_id() {
        for text in [
            "",
            "abc",
            "nightly",
            "01a2177g",
            "01a21774…",
            "01a21774…xyz",
            "#12",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
        let long = "0".repeat(33);
        assert_eq!(parse(&long), None);
    }

    #[test]
    fn short_ids_are_left_whole() {
        assert_eq!(shorten("abc"), "abc");
        assert_eq!(shorten("0123456789ab"), "0123456789ab");
    }
}
