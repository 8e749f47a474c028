//! A launch setting's or schedule group's own actions in its list's row, for operators: *Run
//! now* while it is enabled, *Disable…* (asked first: its schedule stops and the nodes running
//! it are told to stop), *Enable*. What an action did stays on the row across the list's
//! refresh (the list is read again so every cell tells the truth), and focus lands on it.

use crate::{
    api::catalog::{Key, RunNow, SetEnabled},
    components::{disable::DisableQuestion, run_actions::RunOutcome},
};
use leptos::prelude::*;
use std::collections::HashMap;

/// What an action in a row did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowDone {
    /// *Run now* started this activation.
    Started(String),
    /// Enabled (`true`) or disabled.
    Switched(bool),
    /// *Interrupt* asked this many of its runs to stop.
    Interrupted(u64),
    Failed(String),
}

/// The outcomes of the actions taken on a list page, by row id, and the row whose outcome
/// takes focus when it is drawn (once). Outcomes wait until the list has been read again
/// ([`RowOutcomes::settle`]): drawn at once, they would land in rows about to be replaced.
#[derive(Debug, Clone, Copy)]
pub struct RowOutcomes {
    done: RwSignal<HashMap<String, RowDone>>,
    pending: RwSignal<Vec<(String, RowDone)>>,
    pending_focus: RwSignal<Option<String>>,
    focus: RwSignal<Option<String>>,
}

impl Default for RowOutcomes {
    fn default() -> Self {
        Self {
            done: RwSignal::new(HashMap::new()),
            pending: RwSignal::new(Vec::new()),
            pending_focus: RwSignal::new(None),
            focus: RwSignal::new(None),
        }
    }
}

impl RowOutcomes {
    /// A row's own action: its outcome takes focus.
    fn record(self, id: &str, done: RowDone) {
        self.pending.set(vec![(id.to_owned(), done)]);
        self.pending_focus.set(Some(id.to_owned()));
    }

    /// A bulk action's outcomes, one per row it touched (the bulk bar keeps focus).
    pub fn record_many(self, outcomes: Vec<(String, RowDone)>) {
        self.pending.set(outcomes);
        self.pending_focus.set(None);
    }

    /// Shows the outcomes waiting for the list to be read again, and focuses the one a row's
    /// own action gave: the page calls it once the list is drawn from its new rows.
    pub fn settle(self) {
        let pending = self.pending.try_update(std::mem::take).unwrap_or_default();
        if pending.is_empty() {
            return;
        }
        self.done.update(|m| m.extend(pending));
        if let Some(id) = self.pending_focus.try_update(Option::take).flatten() {
            self.focus.set(Some(id));
        }
    }

    fn of(self, id: &str) -> Option<RowDone> {
        self.done.with(|m| m.get(id).cloned())
    }
}

/// The row's buttons and what the last of them did; `changed` reads the list again.
#[component]
pub fn RowSwitch(
    key: Key,
    id: String,
    enabled: bool,
    outcomes: RowOutcomes,
    #[prop(into)] changed: Callback<()>,
) -> impl IntoView {
    let toggle = ServerAction::<SetEnabled>::new();
    let run = ServerAction::<RunNow>::new();
    let asking = RwSignal::new(false);
    {
        let id = id.clone();
        Effect::new(move |_| {
            let Some(r) = run.value().get() else { return };
            outcomes.record(
                &id,
                match r {
                    Ok(activation) => RowDone::Started(activation),
                    Err(e) => RowDone::Failed(e.to_string()),
                },
            );
            changed.run(());
        });
    }
    {
        let id = id.clone();
        Effect::new(move |_| {
            let Some(r) = toggle.value().get() else {
                return;
            };
            outcomes.record(
                &id,
                match r {
                    Ok(()) => RowDone::Switched(!enabled),
                    Err(e) => RowDone::Failed(e.to_string()),
                },
            );
            changed.run(());
        });
    }
    let busy = move || toggle.pending().get() || run.pending().get();
    let outcome_ref = NodeRef::<leptos::html::Span>::new();
    {
        let id = id.clone();
        Effect::new(move |_| {
            if let Some(el) = outcome_ref.get()
                && outcomes.focus.get_untracked().as_deref() == Some(id.as_str())
            {
                outcomes.focus.set(None);
                let _ = el.focus();
            }
        });
    }
    let outcome = move || {
        outcomes.of(&id).map(|done| {
        let body = match done {
            RowDone::Started(a) => view! {
                <a href=am_domain::links::activation(&a) data-test="row-run-link">"run"</a>
                " → " <RunOutcome id=a />
            }
            .into_any(),
            RowDone::Switched(true) => view! { "enabled" }.into_any(),
            RowDone::Switched(false) => {
                view! { "disabled: its schedule stopped, its nodes were told to stop" }.into_any()
            }
            RowDone::Interrupted(n) => view! {
                {format!("interrupted {}", am_domain::display::plural(n, "run"))}
            }
            .into_any(),
            RowDone::Failed(e) => view! { <span class="error" role="alert">{e}</span> }.into_any(),
        };
        view! {
            <span class="row-outcome" data-test="row-outcome" tabindex="-1" node_ref=outcome_ref role="status">
                {body}
            </span>
        }
    })
    };
    let (run_key, toggle_key, disable_key) = (key.clone(), key.clone(), key);
    view! {
        <span class="row-actions switch" data-test="row-switch">
            {enabled.then(|| view! {
                <button type="button" class="small" data-test="row-run-now" disabled=busy
                    on:click=move |_| { run.dispatch(RunNow { key: run_key.clone() }); }>
                    "Run now"
                </button>
            })}
            {move || (!asking.get()).then(|| {
                let toggle_key = toggle_key.clone();
                view! {
                    <button type="button" class="small" class:danger=enabled data-test="row-toggle" disabled=busy
                        on:click=move |_| {
                            if enabled {
                                asking.set(true);
                            } else {
                                toggle.dispatch(SetEnabled { key: toggle_key.clone(), enabled: true });
                            }
                        }>
                        {if enabled { "Disable…" } else { "Enable" }}
                    </button>
                }
            })}
            {move || asking.get().then(|| view! {
                <DisableQuestion key=disable_key.clone() toggle asking test="row-disable" small=true />
            })}
            {outcome}
        </span>
    }
}
