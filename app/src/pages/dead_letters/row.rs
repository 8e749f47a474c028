//! One dead letter as a row of the list: where it came from, its error, attempts, body and
//! status, with its own *Replay* (confirmed under the row) and *Delete* (asked in place).

use super::{or_dash, query_href};
use crate::{
    api::dead_letters::{BulkAction, DeadLettersBulk, DeadLettersQuery},
    components::replay::{ReplayBadge, ReplayConfirm},
};
use am_domain::{display, read::dead_letters::DeadLetterSummary};
use leptos::prelude::*;
use std::collections::BTreeSet;

#[component]
pub(super) fn Row(
    r: DeadLetterSummary,
    q: DeadLettersQuery,
    can_operate: bool,
    selected: RwSignal<BTreeSet<i64>>,
    bulk: ServerAction<DeadLettersBulk>,
    replaying: RwSignal<Option<i64>>,
) -> impl IntoView {
    let id = r.id;
    let dead = r.is_dead();
    let columns = if can_operate { "7" } else { "6" };
    let narrow = |k: &'static str, v: &str| {
        let mut n = DeadLettersQuery {
            after: String::new(),
            ..q.clone()
        };
        let v = Some(v.to_owned());
        match k {
            "launch_setting" => n.filter.launch_setting = v,
            "data_queue" => n.filter.data_queue = v,
            _ => n.filter.error_type = v,
        }
        query_href(&n, "")
    };
    view! {
        <tr data-test="dead-letter-row" data-id=id.to_string() data-status=r.status.clone()
            data-launch-setting=r.launch_setting.clone().unwrap_or_default()>
            {can_operate.then(|| view! {
                <td>{dead.then(|| view! {
                    <input type="checkbox" data-test="dl-select" aria-label=format!("Select dead letter {id}")
                        prop:checked=move || selected.with(|s| s.contains(&id))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            selected.update(|s| { if on { s.insert(id); } else { s.remove(&id); } });
                        } />
                })}</td>
            })}
            <td data-label="Dead letter">
                <a href=am_domain::links::dead_letter(id) data-test="dl-open">{format!("#{id}")}</a>
                <br /><span class="muted">{display::time(r.received_at)}</span>
                {r.message_id.clone().map(|m| view! { <br /><code class="dl-message-id">{m}</code> })}
            </td>
            <td data-label="Launch setting">
                {match r.launch_setting.clone() {
                    Some(ls) => view! { <a href=narrow("launch_setting", &ls) data-test="dl-ls">{ls.clone()}</a> }.into_any(),
                    None => view! { <span class="muted">"unknown"</span> }.into_any(),
                }}
                {r.data_queue.clone().map(|dq| view! {
                    <br /><span class="muted">"from "</span><a href=narrow("data_queue", &dq) class="muted">{dq.clone()}</a>
                })}
            </td>
            <td data-label="Error">
                {r.error_type.clone().map(|t| view! { <a class="tag type" href=narrow("error_type", &t) data-test="dl-error-type">{t.clone()}</a> })}
                <br /><span class="dl-error-message">{or_dash(r.error_message.clone())}</span>
                {r.host.clone().map(|h| view! { <br /><span class="muted">{format!("on {h}, {}", display::time_or_dash(r.last_failure_at))}</span> })}
            </td>
            <td data-label="Attempts">
                {if r.attempts > 0 { r.attempts.to_string() } else { "—".into() }}
                {r.parked_at.clone().map(|p| view! {
                    <br /><span class="pill parked" data-test="dl-parked" title=format!("parked at {p}")>"parked before"</span>
                })}
            </td>
            <td data-label="Body"><code class="dl-preview">{r.body_preview.clone()}</code></td>
            <td data-label="Status">
                <Status r=r.clone() />
                {(can_operate && dead).then(|| view! { <RowActions id bulk replaying /> })}
            </td>
        </tr>
        {move || (replaying.get() == Some(id)).then(|| view! {
            <tr class="row-confirm" data-test="dl-row-confirm">
                <td colspan=columns>
                    <ReplayConfirm ids=vec![id] query=DeadLettersQuery::default() bulk
                        on_close=Callback::new(move |_| replaying.set(None)) />
                </td>
            </tr>
        })}
    }
}

/// *Replay* (its confirmation opens under the row) and *Delete* (asked in place) of one dead
/// letter in the list.
#[component]
fn RowActions(
    id: i64,
    bulk: ServerAction<DeadLettersBulk>,
    replaying: RwSignal<Option<i64>>,
) -> impl IntoView {
    let deleting = RwSignal::new(false);
    let delete = move |_| {
        deleting.set(false);
        bulk.dispatch(DeadLettersBulk {
            action: BulkAction::Delete,
            ids: vec![id],
            query: DeadLettersQuery::default(),
            canary: None,
            rate_per_second: None,
        });
    };
    view! {
        <span class="row-actions" data-test="dl-row-actions">
            <button type="button" class="small" data-test="dl-row-replay"
                on:click=move |_| { deleting.set(false); replaying.set(Some(id)); }>"Replay"</button>
            " "
            <button type="button" class="small danger" data-test="dl-row-delete"
                on:click=move |_| { replaying.set(None); deleting.set(true); }>"Delete"</button>
            {move || deleting.get().then(|| view! {
                <span class="confirm" data-test="dl-row-confirm-delete">
                    "Delete it? This cannot be undone."
                    <button type="button" class="small danger" data-test="dl-row-delete-yes" on:click=delete>"Delete"</button>
                    <button type="button" class="small" data-esc="close" on:click=move |_| deleting.set(false)>"Cancel"</button>
                </span>
            })}
        </span>
    }
}

#[component]
pub(super) fn Status(r: DeadLetterSummary) -> impl IntoView {
    view! {
        <span class=format!("pill dl-{}", r.status) data-test="dl-status">{r.status.clone()}</span>
        {r.replay.clone().map(|replay| view! { <br /><ReplayBadge r=replay /> })}
        {r.replayed_by.clone().map(|by| view! {
            <br /><span class="muted" data-test="dl-replayed-by">
                {format!("replayed by {by}, {}", display::time_or_dash(r.replayed_at))}
                {(r.replay_count > 1).then(|| format!(" ({} times)", r.replay_count))}
            </span>
        })}
    }
}
