//! Replaying dead letters with the operator's eyes open: a confirmation that says how many will
//! be sent and what could go wrong (a disabled launch setting, a breaker a burst would trip),
//! with a canary and a rate cap; and, afterwards, what became of each replay.

use crate::api::dead_letters::{BulkAction, DeadLettersBulk, DeadLettersQuery, replay_preview};
use am_domain::{
    read::dead_letters::ReplayView,
    recovery::{ReplayOutcomes, ReplayResult},
};
use leptos::prelude::*;

/// "1 dead letter", "3 dead letters".
pub fn dead_letters(n: u64) -> String {
    if n == 1 {
        "1 dead letter".to_owned()
    } else {
        format!("{n} dead letters")
    }
}

/// The confirmation of a replay: the count, the warnings, the canary (on by default when more
/// than one is sent) and the rate cap. An empty search (every dead letter) asks twice.
#[component]
pub fn ReplayConfirm(
    ids: Vec<i64>,
    query: DeadLettersQuery,
    bulk: ServerAction<DeadLettersBulk>,
    /// Closes the confirmation without replaying.
    on_close: Callback<()>,
) -> impl IntoView {
    let preview = {
        let (ids, query) = (ids.clone(), query.clone());
        Resource::new(|| (), move |_| replay_preview(ids.clone(), query.clone()))
    };
    let everything = ids.is_empty() && query.filter.is_unfiltered();
    let canary_on = RwSignal::new(true);
    let canary = RwSignal::new("1".to_owned());
    let rate = RwSignal::new(String::new());
    let asked_once = RwSignal::new(false);
    let go = move |_| {
        if everything && !asked_once.get_untracked() {
            asked_once.set(true);
            return;
        }
        let number = |s: String| s.trim().parse::<u32>().ok().filter(|n| *n > 0);
        bulk.dispatch(DeadLettersBulk {
            action: BulkAction::Replay,
            ids: ids.clone(),
            query: query.clone(),
            canary: canary_on
                .get_untracked()
                .then(|| number(canary.get_untracked()))
                .flatten(),
            rate_per_second: number(rate.get_untracked()),
        });
        on_close.run(());
    };
    view! {
        <div class="card replay-confirm" data-test="dl-replay-confirm">
            <Suspense fallback=|| view! { <p class="muted">"Counting…"</p> }>
                {move || preview.get().map(|r| match r {
                    Err(e) => view! { <p class="banner bad">{e.to_string()}</p> }.into_any(),
                    Ok(p) => {
                        let total = p.total;
                        view! {
                            <p data-test="dl-replay-count" data-total=total.to_string()>
                                <strong>{format!("Replay {}?", dead_letters(total))}</strong>
                                " Each goes back to its launch setting's subscription, at attempt 1."
                            </p>
                            {(!p.disabled.is_empty()).then(|| view! {
                                <p class="banner warn" data-test="dl-replay-disabled">
                                    {format!(
                                        "Disabled: {}. Their messages will wait in the broker, unprocessed, until the launch setting is enabled.",
                                        p.disabled.join(", ")
                                    )}
                                </p>
                            })}
                            {p.breaker_risk.iter().map(|b| view! {
                                <p class="banner warn" data-test="dl-replay-breaker">
                                    {format!(
                                        "{} would get {} at once; {} failures of one error type in a row (or {} of any) trip its breaker and disable it. A canary tries one first.",
                                        b.launch_setting,
                                        dead_letters(b.messages),
                                        b.same_type_threshold,
                                        b.failure_threshold
                                    )}
                                </p>
                            }).collect_view()}
                            {(total > 1).then(|| view! {
                                <label class="inline">
                                    <input type="checkbox" data-test="dl-replay-canary"
                                        prop:checked=move || canary_on.get()
                                        on:change=move |ev| canary_on.set(event_target_checked(&ev)) />
                                    " Canary: replay "
                                    <input type="number" min="1" class="narrow" data-test="dl-replay-canary-count"
                                        prop:value=move || canary.get()
                                        on:input=move |ev| canary.set(event_target_value(&ev)) />
                                    " first, go on only if processed"
                                </label>
                                <label class="inline">
                                    " At most "
                                    <input type="number" min="1" class="narrow" placeholder="no cap" data-test="dl-replay-rate"
                                        prop:value=move || rate.get()
                                        on:input=move |ev| rate.set(event_target_value(&ev)) />
                                    " per second"
                                </label>
                            })}
                            {move || (everything && asked_once.get()).then(|| view! {
                                <p class="banner bad" data-test="dl-replay-everything">
                                    "The search has no filter: this replays every dead letter. Click Replay again to confirm."
                                </p>
                            })}
                            <div class="bulk-actions">
                                <button class="primary" data-test="dl-confirm-replay" disabled=total == 0
                                    on:click=go.clone()>
                                    {format!("Replay {}", dead_letters(total))}
                                </button>
                                <button data-test="dl-cancel-replay" data-esc="close" on:click=move |_| on_close.run(())>"Cancel"</button>
                            </div>
                        }.into_any()
                    }
                })}
            </Suspense>
        </div>
    }
}

/// What became of a dead letter's last replay, in words an operator reads at a glance.
#[component]
pub fn ReplayBadge(r: ReplayView) -> impl IntoView {
    // Coloured as the activation status it resembles.
    use am_domain::status::ActivationStatus as S;
    let (class, text) = match r.result {
        ReplayResult::Processed => (S::Succeeded, "processed"),
        ReplayResult::Sent => (S::Waiting, "sent, no outcome yet"),
        ReplayResult::Waiting => (S::Interrupted, "waiting: launch setting disabled"),
        ReplayResult::Retrying => (S::Failed, "failed again, retrying"),
        ReplayResult::Parked => (S::Failed, "failed again, parked"),
        ReplayResult::DeadLettered => (S::Failed, "dead-lettered again"),
    };
    view! {
        <span class=format!("pill {class}") data-test="dl-replay-result" data-result=r.result.as_str()>
            {text}
        </span>
        {r.dead_letter.map(|id| view! {
            " " <a href=am_domain::links::dead_letter(id) data-test="dl-replay-again">{format!("→ #{id}")}</a>
        })}
        {r.error.map(|e| view! { <br /><span class="dl-error-message" data-test="dl-replay-error">{e}</span> })}
    }
}

/// A replay operation's outcomes: processed, failed again, waiting, not reported yet.
#[component]
pub fn ReplayOutcomesLine(o: ReplayOutcomes) -> impl IntoView {
    let mut parts = vec![format!("{} processed", o.processed)];
    if o.failed_again > 0 {
        parts.push(format!("{} failed again", o.failed_again));
    }
    if o.waiting > 0 {
        parts.push(format!(
            "{} waiting behind a disabled launch setting",
            o.waiting
        ));
    }
    if o.sent > 0 {
        parts.push(format!("{} not reported on yet", o.sent));
    }
    let class = if o.failed_again > 0 {
        "banner bad"
    } else if o.pending() > 0 {
        "banner warn"
    } else {
        "banner good"
    };
    view! {
        <p class=class data-test="replay-outcomes" data-processed=o.processed.to_string()
            data-failed-again=o.failed_again.to_string() data-waiting=o.waiting.to_string()
            data-sent=o.sent.to_string()>
            "Outcome: " {parts.join(" · ")}
        </p>
    }
}
