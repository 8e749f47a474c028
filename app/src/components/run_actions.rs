//! An activation's own actions where it is shown: *Interrupt* while it waits or runs (asked
//! twice), *Re-run* from where it broke once it ended; and afterwards what became of it, read
//! again every two seconds until the run has ended, so the operator sees the outcome, not only
//! that something was asked.

use crate::api::activations::{InterruptActivation, RerunActivation, activation_summary};
use am_domain::{read::activations::ActivationSummary, recovery::Rerun};
use leptos::prelude::*;
use std::time::Duration;

/// How often a run whose outcome is awaited is read again.
const REFRESH: Duration = Duration::from_secs(2);

/// The status of activation `id`, live until it has ended: the pill, and the error if it failed.
#[component]
pub fn RunOutcome(#[prop(into)] id: String) -> impl IntoView {
    let run = {
        let id = id.clone();
        Resource::new(|| (), move |_| activation_summary(id.clone()))
    };
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(
            move || {
                let ended = run
                    .get_untracked()
                    .and_then(Result::ok)
                    .is_some_and(|r: ActivationSummary| !r.is_active());
                if !ended {
                    run.refetch();
                }
            },
            REFRESH,
        ) {
            on_cleanup(move || handle.clear());
        }
    });
    view! {
        <Transition fallback=|| view! { <span class="muted">"…"</span> }>
            {move || run.get().map(|r| match r {
                Ok(a) => view! {
                    <span class="run-outcome" data-test="run-outcome" data-status=a.status.clone()>
                        <span class=format!("pill {}", a.status)>{a.status.clone()}</span>
                        {a.error.clone().map(|e| view! { " " <span class="message">{e}</span> })}
                    </span>
                }.into_any(),
                Err(e) => view! { <span class="error">{e.to_string()}</span> }.into_any(),
            })}
        </Transition>
    }
}

/// *Interrupt* (with a confirmation) for an activation still active, then its outcome.
#[component]
pub fn InterruptButton(#[prop(into)] id: String) -> impl IntoView {
    let action = ServerAction::<InterruptActivation>::new();
    let asking = RwSignal::new(false);
    let go = {
        let id = id.clone();
        move |_| {
            asking.set(false);
            action.dispatch(InterruptActivation { id: id.clone() });
        }
    };
    view! {
        <span class="row-actions" data-test="interrupt-actions">
            {move || (action.value().get().is_none() && !asking.get()).then(|| view! {
                <button type="button" class="small danger" data-test="interrupt"
                    disabled=move || action.pending().get() on:click=move |_| asking.set(true)>
                    "Interrupt"
                </button>
            })}
            {move || asking.get().then(|| view! {
                <span class="confirm" data-test="interrupt-confirm">
                    "Interrupt this run? "
                    <button type="button" class="small danger" data-test="interrupt-yes" on:click=go.clone()>"Interrupt"</button>
                    <button type="button" class="small" data-esc="close" on:click=move |_| asking.set(false)>"Cancel"</button>
                </span>
            })}
            {move || action.value().get().map(|r| match r {
                Ok(()) => view! {
                    <span data-test="interrupt-requested" data-live-hold="">"interrupt requested → " <RunOutcome id=id.clone() /></span>
                }.into_any(),
                Err(e) => view! { <span class="error" role="alert" data-test="interrupt-error">{e.to_string()}</span> }.into_any(),
            })}
        </span>
    }
}

/// *Re-run* from where it broke (a group from its first member that did not succeed) for an
/// ended activation, then the new run's link and outcome.
#[component]
pub fn RerunButton(#[prop(into)] id: String) -> impl IntoView {
    let action = ServerAction::<RerunActivation>::new();
    let go = {
        let id = id.clone();
        move |_| {
            action.dispatch(RerunActivation {
                id: id.clone(),
                how: Rerun::default(),
            });
        }
    };
    view! {
        <span class="row-actions" data-test="rerun-actions">
            {move || action.value().get().is_none().then(|| view! {
                <button type="button" class="small" data-test="row-rerun"
                    title="Re-run from where it broke: a group from its first member that did not succeed"
                    disabled=move || action.pending().get() on:click=go.clone()>
                    "Re-run"
                </button>
            })}
            {move || action.value().get().map(|r| match r {
                Ok(new) => view! {
                    <span data-test="row-rerun-started" data-live-hold="">
                        <a href=format!("/activations/{new}") data-test="row-rerun-link">"re-run"</a>
                        " → " <RunOutcome id=new.clone() />
                    </span>
                }.into_any(),
                Err(e) => view! { <span class="error" role="alert" data-test="row-rerun-error">{e.to_string()}</span> }.into_any(),
            })}
        </span>
    }
}
