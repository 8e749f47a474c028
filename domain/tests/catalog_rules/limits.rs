//! Size limits: counts of entities and of their lists, lengths of free text.

use super::*;
use am_domain::validate::limits::{
    MAX_ENTITIES_PER_KIND, MAX_FILTER_HEADERS, MAX_HOSTS_PER_POOL, MAX_PARAMETER_BYTES,
    MAX_TEXT_CHARS, MAX_TITLE_CHARS,
};

#[test]
fn titles_and_text_have_a_length_limit() {
    assert_valid(&with(|c| {
        c.applications[0].title = "é".repeat(MAX_TITLE_CHARS)
    }));
    assert_error(
        &with(|c| c.applications[0].title = "é".repeat(MAX_TITLE_CHARS + 1)),
        "applications[0].title",
        "201 characters long; at most 200",
    );
    assert_error(
        &with(|c| c.pools[1].title = "x".repeat(1_000_000)),
        "pools[1].title",
        "1000000 characters long",
    );
    assert_error(
        &with(|c| c.classifiers[0].values[2].label = "x".repeat(MAX_TITLE_CHARS + 1)),
        "classifiers[0].values[2].label",
        "at most 200",
    );
    assert_error(
        &with(|c| c.agents[0].parameters[1].description = "x".repeat(MAX_TEXT_CHARS + 1)),
        "agents[0].parameters[1].description",
        "at most 2000",
    );
    assert_error(
        &with(|c| {
            c.launch_settings[0].filter = Some(MessageFilter {
                headers: [("site".to_owned(), "x".repeat(MAX_TEXT_CHARS + 1))].into(),
            })
        }),
        "launch_settings[0].filter.headers.site",
        "at most 2000",
    );
}

#[test]
fn texts_hold_no_control_characters_but_line_breaks_in_free_text() {
    assert_error(
        &with(|c| c.applications[0].title = "a\u{0}b".into()),
        "applications[0].title",
        "U+0000",
    );
    assert_error(
        &with(|c| c.pools[0].title = "two\nlines".into()),
        "pools[0].title",
        "U+000A",
    );
    assert_error(
        &with(|c| c.classifiers[0].values[1].code = "c\u{1b}".into()),
        "classifiers[0].values[1].code",
        "U+001B",
    );
    assert_error(
        &with(|c| c.launch_settings[0].channels.webhook_secret = Some("s\u{7f}".into())),
        "launch_settings[0].webhook_secret",
        "U+007F",
    );
    assert_error(
        &with(|c| {
            c.launch_settings[0].filter = Some(MessageFilter {
                headers: [("site".to_owned(), "a\rb".to_owned())].into(),
            })
        }),
        "launch_settings[0].filter.headers.site",
        "U+000D",
    );
    assert_error(
        &with(|c| c.agents[0].parameters[1].default = Some(serde_json::json!(["x\u{0}"]))),
        "agents[0].parameters[1].default",
        "NUL",
    );
    // Free text may break lines and hold tabs; any other text may hold any printable
    // character, markup and quotes included.
    assert_valid(&with(|c| {
        c.agents[0].parameters[1].description = "first\n\tsecond\r\n".into();
        c.applications[0].title = "<b>\"x\" & 'y' \\ ✓ 日本語\u{a0}</b>".into();
    }));
}

#[test]
fn a_stored_catalog_with_control_characters_in_titles_is_read_clean() {
    let mut c = with(|c| {
        c.applications[0].title = "tab\there".into();
        c.classifiers[0].values[0].label = "bell\u{7}".into();
        c.agents[0].parameters[0].description = "keeps\nlines\u{0}".into();
    });
    assert!(am_domain::validate::validate_catalog(&c).is_err());
    c.clean_display_texts();
    assert_valid(&c);
    assert_eq!(c.applications[0].title, "tab here");
    assert_eq!(c.agents[0].parameters[0].description, "keeps\nlines ");
}

#[test]
fn lists_have_a_size_limit() {
    assert_error(
        &with(|c| {
            c.pools[0].hosts = (0..=MAX_HOSTS_PER_POOL).map(|i| format!("h{i}")).collect();
        }),
        "pools[0].hosts",
        "1001 hosts; at most 1000",
    );
    assert_error(
        &with(|c| {
            c.launch_settings[0].filter = Some(MessageFilter {
                headers: (0..=MAX_FILTER_HEADERS)
                    .map(|i| (format!("h{i}"), "v".to_owned()))
                    .collect(),
            })
        }),
        "launch_settings[0].filter.headers",
        "51 headers",
    );
    assert_error(
        &with(|c| {
            c.launch_settings[0]
                .parameters
                .insert("blob".into(), json!("x".repeat(MAX_PARAMETER_BYTES)));
        }),
        "launch_settings[0].parameters",
        "bytes as JSON; at most 65536",
    );
}

/// Too many entities of a kind is said once, for the list, and the rules comparing entities
/// (which grow faster than the catalog) are not run at all.
#[test]
fn an_oversized_catalog_is_refused_whole() {
    let c = with(|c| {
        let template = c.pools[0].clone();
        c.pools = (0..=MAX_ENTITIES_PER_KIND)
            .map(|i| am_domain::catalog::Pool {
                id: format!("pool-{i}"),
                ..template.clone()
            })
            .collect();
    });
    let found = errors(&c);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, "pools");
    assert!(
        found[0]
            .message
            .contains("10001 entries; a catalog holds at most 10000"),
        "{}",
        found[0].message
    );
}
