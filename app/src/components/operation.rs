//! A bulk operation's progress bar, refreshed every second in the browser while the operation
//! is queued or running (the server renders the state at page load, so it reads without
//! JavaScript too).

use crate::{api::operations::operation, components::replay::ReplayOutcomesLine};
use am_domain::{read::operations::OperationView, status::OperationStatus};
use leptos::prelude::*;
use std::time::Duration;

/// How often an active operation is re-read.
const REFRESH: Duration = Duration::from_secs(1);

/// The bar and the counts of one operation, as a row or the detail page shows them.
#[component]
pub fn ProgressBar(op: OperationView) -> impl IntoView {
    let processed = op.done + op.failed;
    // A replay's "done" is what the broker took; what the nodes made of it is its outcome.
    let replay = op.replay_outcomes;
    let label = format!(
        "{} of {} {}{}",
        op.done,
        op.total,
        if replay.is_some() { "sent" } else { "done" },
        if op.failed > 0 {
            format!(", {} failed", op.failed)
        } else {
            String::new()
        }
    );
    view! {
        <div class="op-progress" data-test="operation-progress" data-status=op.status.clone()
            data-done=op.done.to_string() data-failed=op.failed.to_string() data-total=op.total.to_string()>
            <progress max=op.total.max(1).to_string() value=processed.to_string() aria-label=label.clone()></progress>
            <span class="op-counts">{label}</span>
            <span class=format!("badge op-{}", op.status) data-test="operation-status">
                {if replay.is_some() && op.status == OperationStatus::Succeeded.as_str() { "all sent".to_owned() } else { op.status.clone() }}
                {op.cancel_requested.then_some(" (cancel requested)")}
            </span>
        </div>
        {replay.map(|o| view! { <ReplayOutcomesLine o /> })}
    }
}

/// A live progress bar of operation `id`, with a link to its page.
#[component]
pub fn OperationProgress(#[prop(into)] id: String) -> impl IntoView {
    let op = {
        let id = id.clone();
        Resource::new(|| (), move |_| operation(id.clone()))
    };
    // Browser only: re-read while the operation is still active, stop once it ended.
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(
            move || {
                // A replay's outcomes come in after it sent everything.
                let active = op
                    .get_untracked()
                    .and_then(Result::ok)
                    .is_none_or(|o| o.is_active() || o.replay_outcomes.is_some_and(|r| r.sent > 0));
                if active {
                    op.refetch();
                }
            },
            REFRESH,
        ) {
            on_cleanup(move || handle.clear());
        }
    });
    let href = format!("/operations/{id}");
    view! {
        <div class="card operation" data-test="operation" data-id=id.clone() data-live-hold="">
            <Transition fallback=|| view! { <span class="muted">"…"</span> }>
                {move || op.get().map(|r| match r {
                    Ok(o) => view! {
                        <p><a href=href.clone() data-test="operation-link">{o.title().to_owned()}</a>
                            " · " <span class="muted">{o.selection()}</span></p>
                        <ProgressBar op=o />
                    }.into_any(),
                    Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                })}
            </Transition>
        </div>
    }
}
