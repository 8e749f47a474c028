//! Enums of words: each variant has one word, written once where the enum is declared with
//! [`words!`], which is both its serde name (as stored in the database and sent in the API and
//! on the wire) and what [`as_str`](crate::status::ActivationStatus::as_str) gives, so no
//! crate spells it again.

/// Declares an enum of unit variants, each `Variant = "word"`: the enum derives `Serialize` and
/// `Deserialize` with the word as the variant's serde name (other derives and attributes are
/// given as usual), and gets `ALL`, `const fn as_str`, `parse` and `Display`.
macro_rules! words {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            // `tt`, not `literal`: a captured literal reaches derives wrapped in an invisible
            // group, which serde reads through and utoipa's `ToSchema` does not (its schema
            // would name the variants instead of their words).
            $( $(#[$vmeta:meta])* $variant:ident = $word:tt ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize, serde::Deserialize)]
        $vis enum $name {
            $( $(#[$vmeta])* #[serde(rename = $word)] $variant ),+
        }

        impl $name {
            /// Every variant, in the order declared.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word: the serde name, as stored and sent.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }

            /// The variant whose word is `word`.
            pub fn parse(word: &str) -> Option<Self> {
                match word {
                    $($word => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub(crate) use words;

#[cfg(test)]
mod tests {
    words! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        enum Sample {
            One = "one",
            TwoWords = "two-words",
        }
    }

    #[test]
    fn the_word_is_the_serde_name_and_parses_back() {
        for s in Sample::ALL {
            let json = serde_json::to_string(s).expect("serializes");
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<Sample>(&json).expect("parses"), *s);
            assert_eq!(Sample::parse(s.as_str()), Some(*s));
            assert_eq!(s.to_string(), s.as_str());
        }
        assert_eq!(Sample::TwoWords.as_str(), "two-words");
        assert_eq!(Sample::parse("three"), None);
    }

    /// The API's document names the words, as the API takes and sends them (it once named the
    /// variants: `FireOnceNow` for `fire-once-now`).
    #[cfg(feature = "openapi")]
    #[test]
    fn the_schema_lists_the_words() {
        let schema =
            serde_json::to_value(<Sample as utoipa::PartialSchema>::schema()).expect("serializes");
        assert_eq!(schema["enum"], serde_json::json!(["one", "two-words"]));
    }
}
