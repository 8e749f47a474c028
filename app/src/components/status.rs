//! Current status, last result and the operator's enable/disable and *Run now* buttons of a
//! launch setting or schedule group.

use crate::api::catalog::{Key, RunNow, SetEnabled, run_status};
use am_domain::roles::Role;
use leptos::prelude::*;

#[component]
pub fn StatusPanel(key: Key, role: Role) -> impl IntoView {
    let status = {
        let key = key.clone();
        Resource::new(|| (), move |_| run_status(key.clone()))
    };
    let toggle = ServerAction::<SetEnabled>::new();
    let run = ServerAction::<RunNow>::new();
    let error = RwSignal::new(None::<String>);
    let started = RwSignal::new(None::<String>);
    Effect::new(move |_| match run.value().get() {
        Some(Ok(id)) => {
            error.set(None);
            started.set(Some(id));
            status.refetch();
        }
        Some(Err(e)) => {
            started.set(None);
            error.set(Some(e.to_string()));
        }
        None => {}
    });
    Effect::new(move |_| match toggle.value().get() {
        Some(Ok(())) => {
            error.set(None);
            status.refetch();
        }
        Some(Err(e)) => error.set(Some(e.to_string())),
        None => {}
    });
    let can_operate = role.allows(Role::Operator);
    let links = match &key {
        Key::LaunchSetting(id) => Some((
            crate::components::failures::href("/activations", &[("launch_setting", id)]),
            Some(crate::components::failures::level_path(id, "", "")),
        )),
        Key::ScheduleGroup(id) => Some((
            crate::components::failures::href("/activations", &[("group", id)]),
            None,
        )),
        _ => None,
    }
    .map(|(activations, failures)| {
        view! {
            <div class="links">
                <a href=activations data-test="status-activations">"Activations"</a>
                {failures.map(|f| view! { <a href=f data-test="status-failures">"Failure logs"</a> })}
            </div>
        }
    });
    view! {
        <div class="card status-panel" data-test="status-panel">
            <Suspense fallback=|| view! { <span class="muted">"…"</span> }>
                {move || {
                    let key = key.clone();
                    status.get().map(move |r| match r {
                        Ok(s) => {
                            let enabled = s.current != "disabled";
                            let last = s.last_result.clone().unwrap_or_else(|| "no activation yet".into());
                            let last_class = format!("pill {}", s.last_result.clone().unwrap_or_else(|| "none".into()));
                            view! {
                                <div>
                                    <span class="label">"Current status"</span>
                                    <span class=format!("pill {}", s.current) data-test="current-status">{s.current.clone()}</span>
                                </div>
                                <div>
                                    <span class="label">"Last result"</span>
                                    <span class=last_class data-test="last-result">{last}</span>
                                    {s.last_result_at.map(|t| view! { <span class="muted">{t}</span> })}
                                </div>
                                {s.disabled_reason.filter(|_| !enabled).map(|r| view! {
                                    <div><span class="label">"Why"</span><span data-test="disabled-reason">{r}</span></div>
                                })}
                                {s.backlog.map(|b| view! {
                                    <div>
                                        <span class="label">"Backlog"</span>
                                        <span data-test="backlog" title="messages waiting in the broker, and the nodes taking them (sampled every few seconds)">{b}</span>
                                    </div>
                                })}
                                {can_operate.then(|| {
                                    let toggle_key = key.clone();
                                    view! {
                                    <div class="actions">
                                        <button type="button" data-test="toggle-enabled" disabled=move || toggle.pending().get()
                                            on:click=move |_| {
                                                toggle.dispatch(SetEnabled { key: toggle_key.clone(), enabled: !enabled });
                                            }>
                                            {if enabled { "Disable" } else { "Enable" }}
                                        </button>
                                        {enabled.then(|| {
                                            let key = key.clone();
                                            view! {
                                                <button type="button" data-test="run-now" disabled=move || run.pending().get()
                                                    on:click=move |_| { run.dispatch(RunNow { key: key.clone() }); }>
                                                    "Run now"
                                                </button>
                                            }
                                        })}
                                    </div>
                                    }
                                })}
                            }.into_any()
                        }
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    })
                }}
            </Suspense>
            {links}
            {move || started.get().map(|id| view! {
                <p class="banner good" role="status" data-test="run-started">
                    "Started activation " <a href=format!("/activations/{id}") data-test="run-started-link"><code>{id.clone()}</code></a>
                </p>
            })}
            {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        </div>
    }
}
