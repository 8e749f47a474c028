//! The question before a bulk delete: how many dead letters it removes (counted as the delete
//! will select them: status `dead`, the ticked ones or all matching), and, when the search has
//! no filter, a second question.

use crate::{
    api::dead_letters::{BulkAction, DeadLettersBulk, DeadLettersQuery, replay_preview},
    components::replay::dead_letters,
};
use leptos::prelude::*;

#[component]
pub fn DeleteConfirm(
    ids: Vec<i64>,
    query: DeadLettersQuery,
    bulk: ServerAction<DeadLettersBulk>,
    /// Closes the question without deleting.
    on_close: Callback<()>,
) -> impl IntoView {
    // A replay and a delete select the same dead letters: its preview's count is this one's.
    let count = {
        let (ids, query) = (ids.clone(), query.clone());
        Resource::new(|| (), move |_| replay_preview(ids.clone(), query.clone()))
    };
    let everything = ids.is_empty() && query.filter.is_unfiltered();
    let asked_once = RwSignal::new(false);
    let go = move |_| {
        if everything && !asked_once.get_untracked() {
            asked_once.set(true);
            return;
        }
        bulk.dispatch(DeadLettersBulk {
            action: BulkAction::Delete,
            ids: ids.clone(),
            query: query.clone(),
            canary: None,
            rate_per_second: None,
        });
        on_close.run(());
    };
    view! {
        <div class="card confirm" data-test="dl-confirm">
            <Suspense fallback=|| view! { <p class="muted">"Counting…"</p> }>
                {move || count.get().map(|r| match r {
                    Err(e) => view! { <p class="banner bad">{e.to_string()}</p> }.into_any(),
                    Ok(p) => {
                        let total = p.total;
                        view! {
                            <p data-test="dl-delete-count" data-total=total.to_string()>
                                <strong>{format!("Delete {}?", dead_letters(total))}</strong>
                                " This cannot be undone."
                            </p>
                            {move || (everything && asked_once.get()).then(|| view! {
                                <p class="banner bad" data-test="dl-delete-everything">
                                    {format!(
                                        "The search has no filter: this deletes every dead letter, {} in all. Click Delete again to confirm.",
                                        total
                                    )}
                                </p>
                            })}
                            <div class="bulk-actions">
                                <button class="danger" data-test="dl-confirm-delete" disabled=total == 0
                                    on:click=go.clone()>
                                    {format!("Delete {}", dead_letters(total))}
                                </button>
                                <button data-test="dl-cancel-delete" data-esc="close"
                                    on:click=move |_| on_close.run(())>"Cancel"</button>
                            </div>
                        }.into_any()
                    }
                })}
            </Suspense>
        </div>
    }
}
