//! Pieces the failure drill-down and the activation page share: links that keep the filters,
//! counts by error type, and failures with their stack in a collapsible block.

use crate::components::ids::ShortId;
use am_domain::{
    dashboard::failure_kind,
    display,
    failing::KindCounts,
    read::failures::{ErrorTypeCount, FailureEntry},
};
use leptos::prelude::*;

pub use am_domain::links::{enc, href, level_path};

/// Counts by error type, each a link (built by `link`) that narrows to that type; the
/// current type, if any, is marked.
#[component]
pub fn ErrorTypeCounts(
    counts: Vec<ErrorTypeCount>,
    current: String,
    link: Callback<String, String>,
    /// Show this many and summarize the rest.
    #[prop(optional)]
    max: Option<usize>,
) -> impl IntoView {
    let shown = max.unwrap_or(usize::MAX);
    let rest: u64 = counts.iter().skip(shown).map(|c| c.count).sum();
    let hidden = counts.len().saturating_sub(shown);
    view! {
        <ul class="type-counts" data-test="error-type-counts">
            {counts
                .into_iter()
                .take(shown)
                .map(|c| {
                    let active = c.error_type == current;
                    let target = link.run(c.error_type.clone());
                    view! {
                        <li>
                            <a class="tag type" class:active=active href=target data-test="error-type"
                                data-error-type=c.error_type.clone() data-count=c.count.to_string()>
                                <span class="type-name">{c.error_type.clone()}</span>
                                <span class="count">{c.count}</span>
                            </a>
                        </li>
                    }
                })
                .collect_view()}
            {(hidden > 0).then(|| view! {
                <li class="muted">{format!("+{hidden} more types ({rest})")}</li>
            })}
        </ul>
    }
}

/// What `n` reports of `kind` (a failure_kind word or `any`) are called, without the number.
pub fn kind_noun(kind: &str, n: u64) -> &'static str {
    let one = n == 1;
    match kind {
        failure_kind::RETRIED if one => "retried attempt",
        failure_kind::RETRIED => "retried attempts",
        failure_kind::UNAVAILABLE if one => "“temporarily unavailable” answer",
        failure_kind::UNAVAILABLE => "“temporarily unavailable” answers",
        failure_kind::ANY if one => "report",
        failure_kind::ANY => "reports",
        _ if one => "failure",
        _ => "failures",
    }
}

/// The kind a list shows: `current`, the real failures when empty.
pub fn shown_kind(current: &str) -> &str {
    if current.is_empty() {
        failure_kind::FAILED
    } else {
        current
    }
}

/// The reports of each kind that the list's other filters match, the shown kind marked and
/// the others a link (built by `link`) to their list: no count hides another.
#[component]
pub fn KindLinks(
    kinds: KindCounts,
    current: String,
    link: Callback<String, String>,
) -> impl IntoView {
    let current = shown_kind(&current).to_owned();
    let all = kinds.failed + kinds.retried + kinds.unavailable;
    let items: Vec<(&'static str, u64)> = failure_kind::ALL
        .into_iter()
        .map(|k| (k, kinds.of(k)))
        .chain(std::iter::once((failure_kind::ANY, all)))
        .collect();
    view! {
        <p class="kinds" data-test="kinds">
            {items.into_iter().enumerate().map(|(i, (k, n))| {
                let sep = (i > 0).then_some(" · ");
                let label = format!("{n} {}", if k == failure_kind::ANY { "in all" } else { kind_noun(k, n) });
                if k == current {
                    view! { {sep}<strong data-test="kind" data-kind=k data-count=n.to_string() aria-current="true">{label}</strong> }.into_any()
                } else {
                    view! { {sep}<a href=link.run(k.to_owned()) data-test="kind" data-kind=k data-count=n.to_string()>{label}</a> }.into_any()
                }
            }).collect_view()}
        </p>
    }
}

/// Failures, newest first: type, message and where; the stack collapsed.
#[component]
pub fn FailureCards(rows: Vec<FailureEntry>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" data-test="no-failures">"No failure matches."</p> }
            .into_any();
    }
    view! {
        <ol class="failures" data-test="failures">
            {rows.into_iter().map(|f| view! { <FailureCard f /> }).collect_view()}
        </ol>
    }
    .into_any()
}

/// What the node did with the data message, in words.
fn disposition_text(disposition: &str) -> &str {
    use am_domain::wire::disposition as d;
    match disposition {
        d::RETRY => "retried later",
        d::PARK => "parked",
        d::DEAD_LETTER => "dead-lettered",
        other => other,
    }
}

#[component]
fn FailureCard(f: FailureEntry) -> impl IntoView {
    let activation = f.activation.to_string();
    let activation_href = format!("/activations/{activation}");
    let host_href = level_path(&f.launch_setting, &activation, &f.host);
    view! {
        <li class="card failure" data-test="failure" data-id=f.id.to_string()>
            <div class="failure-head">
                <span class="tag type" data-test="failure-type">{f.error_type.clone()}</span>
                <span class="muted" data-test="failure-time">{display::time(f.occurred_at)}</span>
            </div>
            <p class="failure-message" data-test="failure-message">{f.message.clone()}</p>
            <dl class="facts">
                <div><dt>"Launch setting"</dt><dd><a href=level_path(&f.launch_setting, "", "")>{f.launch_setting.clone()}</a></dd></div>
                <div><dt>"Activation"</dt><dd><ShortId id=activation href=activation_href /></dd></div>
                <div><dt>"Host"</dt><dd><a href=host_href data-test="failure-host">{f.host.clone()}</a></dd></div>
                <div><dt>"Agent"</dt><dd>{format!("{}/{}", f.application, f.agent)}</dd></div>
                {f.attempt.map(|a| view! { <div><dt>"Attempt"</dt><dd>{a}</dd></div> })}
                {f.disposition.clone().map(|d| view! {
                    <div>
                        <dt>"Then"</dt>
                        <dd data-test="failure-disposition">{disposition_text(&d)}</dd>
                    </div>
                })}
                {f.temporary.then(|| view! {
                    <div>
                        <dt>"Kind"</dt>
                        <dd data-test="failure-temporary" title="the agent said the condition is temporary; the breaker does not count it">
                            "temporary"
                        </dd>
                    </div>
                })}
                {f.data_message_id.clone().map(|m| view! {
                    <div>
                        <dt>"Data message"</dt>
                        <dd>
                            <code data-test="failure-message-id">{m}</code>
                            {f.dead_letter.map(|d| view! {
                                " " <a href=am_domain::links::dead_letter(d) data-test="failure-dead-letter">"dead letter"</a>
                            })}
                        </dd>
                    </div>
                })}
            </dl>
            {f.details.clone().map(|d| view! {
                <details class="stack" data-test="failure-details">
                    <summary>"Stack / details"</summary>
                    <pre>{d}</pre>
                </details>
            })}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_encode_and_skip_empty_values() {
        assert_eq!(
            href(
                "/failures/a.b",
                &[("error_type", "java.io.IOException: x"), ("host", "")]
            ),
            "/failures/a.b?error_type=java.io.IOException%3A%20x"
        );
        assert_eq!(href("/x", &[("a", "")]), "/x");
        assert_eq!(level_path("ls", "", "h"), "/failures/ls");
        assert_eq!(level_path("ls", "id", "h 1"), "/failures/ls/id/h%201");
    }
}
