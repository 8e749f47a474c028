//! Times as every page shows them: how long ago (against the time the server read the data,
//! so the server's page and the browser's agree) beside the absolute UTC time
//! (`am_domain::display`).

use am_domain::display;
use chrono::{DateTime, Utc};
use leptos::prelude::*;

/// `3 min ago (2026-11-25 08:17:03 UTC)`, machine-readable in `datetime`.
#[component]
pub fn When(at: DateTime<Utc>, now: DateTime<Utc>) -> impl IntoView {
    view! {
        <span class="when">
            <time datetime=at.to_rfc3339() data-test="when">{display::ago(at, now)}</time>
            " " <span class="muted abs">{format!("({})", display::time(at))}</span>
        </span>
    }
}

/// `3 min ago`, with the absolute time as its title: for tight table cells.
#[component]
pub fn Ago(at: DateTime<Utc>, now: DateTime<Utc>) -> impl IntoView {
    view! {
        <time datetime=at.to_rfc3339() title=display::time(at) data-test="when">
            {display::ago(at, now)}
        </time>
    }
}

/// *History*: the audit log filtered to one entity (`entity_type` as the log names it).
#[component]
pub fn HistoryLink(entity_type: &'static str, id: String) -> impl IntoView {
    view! {
        <a class="history-link" href=am_domain::links::history(entity_type, &id) data-test="history-link">
            "History"
        </a>
    }
}

/// A time filter as a `datetime-local` input shows it: links (the dashboard's) carry RFC 3339,
/// which the input would show empty and a resubmitted form would drop.
pub fn local_input(value: &str) -> String {
    DateTime::parse_from_rfc3339(value)
        .map(|t| {
            t.with_timezone(&Utc)
                .format("%Y-%m-%dT%H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|_| value.to_owned())
}
