//! Operations: bulk jobs (replay or delete dead letters, re-run activations, re-enable launch
//! settings and groups) with their progress, newest first; one operation with its errors and a
//! cancel button; and the re-enable form over what is disabled now.

use crate::{
    api::operations::{
        CancelOperation, DisabledListView, Reenable, StartSweep, disabled_entities,
        list_operations, operation,
    },
    components::{ids::ShortId, operation::ProgressBar},
};
use am_domain::{
    display,
    read::operations::{DisabledEntity, OperationKind, OperationView},
};
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_params_map};
use std::time::Duration;

const REFRESH: Duration = Duration::from_secs(1);

/// Re-reads `resource` every second in the browser while `active` says so.
fn refresh_while<T>(resource: Resource<T>, active: impl Fn(&T) -> bool + Send + Sync + 'static)
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
{
    let active = std::sync::Arc::new(active);
    Effect::new(move |_| {
        let check = active.clone();
        if let Ok(handle) = set_interval_with_handle(
            move || {
                if resource.get_untracked().as_ref().is_none_or(|v| check(v)) {
                    resource.refetch();
                }
            },
            REFRESH,
        ) {
            on_cleanup(move || handle.clear());
        }
    });
}

#[component]
pub fn OperationsPage() -> impl IntoView {
    let ops = Resource::new(|| (), |_| list_operations());
    refresh_while(ops, |r| {
        r.as_ref()
            .is_ok_and(|v| v.rows.iter().any(OperationView::is_active))
    });
    let disabled = Resource::new(|| (), |_| disabled_entities());
    view! {
        <section data-test="operations">
            <h1>"Operations"</h1>
            <p class="muted">
                "Bulk jobs run in the background: they survive a manager restart and continue where they stopped. "
                "Start them from a search: dead letters, activations (re-run), or below (re-enable)."
            </p>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || ops.get().map(|r| match r {
                    Ok(v) if v.rows.is_empty() => view! { <p class="muted" data-test="no-operations">"No operations yet."</p> }.into_any(),
                    Ok(v) => view! {
                        <table class="list" data-test="operations-table">
                            <thead><tr><th>"Operation"</th><th>"Selection"</th><th>"Progress"</th><th>"By"</th><th>"Started"</th></tr></thead>
                            <tbody>
                                {v.rows.into_iter().map(|o| view! {
                                    <tr data-test="operation-row" data-id=o.id.to_string()>
                                        <td><a href=format!("/operations/{}", o.id)>{o.title().to_owned()}</a>
                                            <br/><span class="muted"><ShortId id=o.id.to_string() /></span></td>
                                        <td>{o.selection()}</td>
                                        <td><ProgressBar op=o.clone() /></td>
                                        <td>{o.requested_by.clone()}</td>
                                        <td>{display::time(o.created_at)}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                    Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                })}
            </Transition>
            <Suspense fallback=|| ()>
                {move || disabled.get().map(|r| match r {
                    Ok(d) => view! { <ReenableForm d=d.clone() /> {d.can_operate.then(|| view! { <SweepButton /> })} }.into_any(),
                    Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}

/// Starts a consistency sweep and opens it.
#[component]
fn SweepButton() -> impl IntoView {
    let action = ServerAction::<StartSweep>::new();
    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(id)) = action.value().get() {
            navigate(&format!("/operations/{id}"), Default::default());
        }
    });
    view! {
        <div class="card" data-test="sweep">
            <h2>"Consistency sweep"</h2>
            <p class="muted">
                "Checks every activation in progress against the nodes' heartbeats and the outbox, and repairs what it can at once: "
                "waiting while a node could take it, a launch never sent, a run on a node that is gone or no longer reports it."
            </p>
            <button data-test="start-sweep" disabled=move || action.pending().get()
                on:click=move |_| { action.dispatch(StartSweep {}); }>
                "Start a sweep"
            </button>
            {move || action.value().get().and_then(Result::err).map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })}
        </div>
    }
}

/// Checkboxes over the disabled launch settings and groups, and one button to re-enable the
/// chosen ones as a bulk operation.
#[component]
fn ReenableForm(d: DisabledListView) -> impl IntoView {
    if d.disabled.launch_settings.is_empty() && d.disabled.groups.is_empty() {
        return view! { <p class="muted" data-test="nothing-disabled">"Nothing is disabled."</p> }
            .into_any();
    }
    let chosen_ls = RwSignal::new(Vec::<String>::new());
    let chosen_groups = RwSignal::new(Vec::<String>::new());
    let action = ServerAction::<Reenable>::new();
    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(ids)) = action.value().get()
            && let Some(first) = ids.first()
        {
            navigate(&format!("/operations/{first}"), Default::default());
        }
    });
    let boxes = move |items: Vec<DisabledEntity>,
                      chosen: RwSignal<Vec<String>>,
                      kind: &'static str| {
        items
            .into_iter()
            .map(|i| {
                let id = i.id.clone();
                let toggle = move |ev: leptos::ev::Event| {
                    let on = event_target_checked(&ev);
                    let id = id.clone();
                    chosen.update(|c| {
                        c.retain(|x| x != &id);
                        if on {
                            c.push(id);
                        }
                    });
                };
                view! {
                    <li>
                        <label>
                            <input type="checkbox" data-test=format!("reenable-{kind}") value=i.id.clone()
                                disabled=!d.can_operate on:change=toggle />
                            " " <a href=format!("/{kind}/{}", i.id)>{i.id.clone()}</a>
                        </label>
                        <span class="muted" data-test="disabled-reason">" — " {i.reason.unwrap_or_else(|| "no reason recorded".into())}</span>
                    </li>
                }
            })
            .collect_view()
    };
    view! {
        <div class="card" data-test="reenable">
            <h2>"Disabled now"</h2>
            <ul class="plain">
                {boxes(d.disabled.launch_settings, chosen_ls, "launch-settings")}
                {boxes(d.disabled.groups, chosen_groups, "schedule-groups")}
            </ul>
            {d.can_operate.then(|| view! {
                <button data-test="reenable-selected"
                    disabled=move || chosen_ls.get().is_empty() && chosen_groups.get().is_empty()
                    on:click=move |_| {
                        action.dispatch(Reenable { launch_settings: chosen_ls.get(), groups: chosen_groups.get() });
                    }>
                    "Re-enable selected"
                </button>
            })}
            {move || action.value().get().and_then(Result::err).map(|e| view! { <p class="error">{e.to_string()}</p> })}
        </div>
    }
    .into_any()
}

#[component]
pub fn OperationPage() -> impl IntoView {
    let params = use_params_map();
    let id = Memo::new(move |_| params.get().get("id").unwrap_or_default());
    let op = Resource::new(move || id.get(), operation);
    refresh_while(op, |r| r.as_ref().is_ok_and(OperationView::is_active));
    let cancel = ServerAction::<CancelOperation>::new();
    Effect::new(move |_| {
        if cancel.value().get().is_some() {
            op.refetch();
        }
    });
    view! {
        <section data-test="operation-page">
            <p><a href="/operations">"← Operations"</a></p>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || op.get().map(|r| match r {
                    Ok(o) => {
                        let can_cancel = o.is_active() && !o.cancel_requested;
                        let oid = o.id.to_string();
                        let untold = usize::try_from(o.failed).unwrap_or(0).saturating_sub(o.errors.len());
                        view! {
                            <h1>{o.title().to_owned()}</h1>
                            <dl class="facts">
                                <dt>"Selection"</dt><dd data-test="operation-selection">{o.selection()}</dd>
                                <dt>"Requested by"</dt><dd>{o.requested_by.clone()}</dd>
                                <dt>"Started"</dt><dd>{display::time(o.created_at)}</dd>
                                <dt>"Finished"</dt><dd>{display::time_or_dash(o.finished_at)}</dd>
                                <dt>"Id"</dt><dd class="mono">{o.id.to_string()}</dd>
                            </dl>
                            <ProgressBar op=o.clone() />
                            {can_cancel.then(|| view! {
                                <button class="danger" data-test="operation-cancel"
                                    on:click=move |_| { cancel.dispatch(CancelOperation { id: oid.clone() }); }>
                                    "Cancel"
                                </button>
                            })}
                            {(!o.errors.is_empty()).then(|| view! {
                                <h2>{if o.kind == OperationKind::ConsistencySweep.as_str() { "Findings" } else { "Errors" }}</h2>
                                <table class="list" data-test="operation-errors">
                                    <thead><tr><th>"Item"</th><th>"Error"</th></tr></thead>
                                    <tbody>
                                        {o.errors.iter().map(|e| view! {
                                            <tr data-repaired=e.repaired.to_string()>
                                                <td>{e.item.clone()}</td>
                                                <td>{e.repaired.then(|| view! { <span class="pill succeeded">"repaired"</span> " " })}{e.error.clone()}</td>
                                            </tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                                {(untold > 0).then(|| view! {
                                    <p class="muted">{format!("… and {untold} more failed items (only the first {} are kept).", o.errors.len())}</p>
                                })}
                            })}
                        }.into_any()
                    }
                    Err(e) => view! { <p class="error" data-test="operation-error">{e.to_string()}</p> }.into_any(),
                })}
            </Transition>
            {move || cancel.value().get().and_then(Result::err).map(|e| view! { <p class="error">{e.to_string()}</p> })}
        </section>
    }
}
