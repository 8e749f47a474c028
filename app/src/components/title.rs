//! The browser tab's title of each page, from its address: what it shows, what kind of page it
//! is, and the product ("demo.echo.1 · Launch setting · Agent Manager"), so a row of tabs and the
//! browser's history tell pages apart.

use super::sections::SECTIONS;

const PRODUCT: &str = "Agent Manager";

/// One entity of each section whose pages show one, by the section's path.
const ONE: &[(&str, &str)] = &[
    ("applications", "Application"),
    ("nodes", "Node"),
    ("pools", "Pool"),
    ("data-queues", "Data queue"),
    ("agents", "Agent"),
    ("launch-settings", "Launch setting"),
    ("schedule-groups", "Schedule group"),
    ("activations", "Activation"),
    ("failures", "Failure logs"),
    ("dead-letters", "Dead letter"),
    ("operations", "Operation"),
];

/// The title of the page at `path` (without its query).
pub fn page_title(path: &str) -> String {
    let parts: Vec<String> = path
        .split('/')
        .filter(|p| !p.is_empty())
        .map(decode)
        .collect();
    let Some((section, rest)) = parts.split_first() else {
        return format!("Dashboard · {PRODUCT}");
    };
    let list = SECTIONS
        .iter()
        .find(|(href, _)| href.trim_start_matches('/') == section)
        .map(|(_, label)| *label);
    let one = ONE.iter().find(|(s, _)| s == section).map(|(_, l)| *l);
    match (rest, one, list) {
        ([], _, Some(list)) => format!("{list} · {PRODUCT}"),
        ([new], Some(one), _) if new == "new" => format!("New {} · {PRODUCT}", lower(one)),
        ([_, ..], Some(one), _) => format!("{} · {one} · {PRODUCT}", rest.join("/")),
        _ => match section.as_str() {
            "search" => format!("Search · {PRODUCT}"),
            "login" => format!("Log in · {PRODUCT}"),
            _ => PRODUCT.to_owned(),
        },
    }
}

fn lower(label: &str) -> String {
    let mut chars = label.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A path segment as typed: `%2F`, `%20` and the like decoded (ids may hold them).
fn decode(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_names_what_it_shows_and_its_kind() {
        assert_eq!(page_title("/"), "Dashboard · Agent Manager");
        assert_eq!(
            page_title("/launch-settings"),
            "Launch settings · Agent Manager"
        );
        assert_eq!(
            page_title("/launch-settings/demo.echo.1"),
            "demo.echo.1 · Launch setting · Agent Manager"
        );
        assert_eq!(
            page_title("/launch-settings/new"),
            "New launch setting · Agent Manager"
        );
        assert_eq!(
            page_title("/agents/demo/echo"),
            "demo/echo · Agent · Agent Manager"
        );
        assert_eq!(
            page_title("/failures/demo.echo.1/01a2/h1"),
            "demo.echo.1/01a2/h1 · Failure logs · Agent Manager"
        );
        assert_eq!(page_title("/broker"), "Broker · Agent Manager");
        assert_eq!(page_title("/audit"), "Audit log · Agent Manager");
        assert_eq!(page_title("/search"), "Search · Agent Manager");
        assert_eq!(page_title("/login"), "Log in · Agent Manager");
        assert_eq!(
            page_title("/pools/east%20pool"),
            "east pool · Pool · Agent Manager"
        );
        assert_eq!(page_title("/nowhere/at/all"), "Agent Manager");
    }

    #[test]
    fn every_section_with_pages_of_one_entity_is_a_section() {
        for (section, _) in ONE {
            assert!(
                SECTIONS
                    .iter()
                    .any(|(href, _)| href.trim_start_matches('/') == *section),
                "{section}"
            );
        }
    }
}
