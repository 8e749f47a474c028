//! Current status, last result and the operator's enable/disable and *Run now* buttons of a
//! launch setting or schedule group, and the hosts a launch setting's breaker quarantined.

use crate::{
    api::catalog::{ClearQuarantine, Key, RunNow, SetEnabled, run_status},
    components::{disable::DisableQuestion, stream_health::StreamHealthView},
};
use am_domain::{
    display,
    read::run_status::Quarantine,
    roles::{Operation, Role},
};
use leptos::prelude::*;

#[component]
pub fn StatusPanel(key: Key, role: Role) -> impl IntoView {
    let status = {
        let key = key.clone();
        Resource::new(|| (), move |_| run_status(key.clone()))
    };
    let toggle = ServerAction::<SetEnabled>::new();
    // Disabling stops a schedule and the runs of it: asked first; enabling is not.
    let asking_disable = RwSignal::new(false);
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
    let clear = ServerAction::<ClearQuarantine>::new();
    for action in [toggle.value(), clear.value()] {
        Effect::new(move |_| match action.get() {
            Some(Ok(())) => {
                error.set(None);
                status.refetch();
            }
            Some(Err(e)) => error.set(Some(e.to_string())),
            None => {}
        });
    }
    let can_operate = role.may(Operation::Toggle);
    let links = match &key {
        Key::LaunchSetting(id) => Some((
            am_domain::links::runs_of(id),
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
                            let enabled = s.current != am_domain::status::CurrentStatus::Disabled.as_str();
                            let last = s.last_result.clone().unwrap_or_else(|| "no activation yet".into());
                            let last_class = format!("pill {}", s.last_result.clone().unwrap_or_else(|| "none".into()));
                            view! {
                                <div>
                                    <span class="label">"Current status"</span>
                                    <span class=format!("pill {}", s.current) data-test="current-status">{s.current.clone()}</span>
                                </div>
                                {(s.stream.is_none() || s.last_result.is_some()).then(|| view! {
                                    <div>
                                        <span class="label">"Last result"</span>
                                        <span class=last_class data-test="last-result">{last}</span>
                                        {s.last_result_at.map(|t| view! { <span class="muted">{display::time(t)}</span> })}
                                    </div>
                                })}
                                {match (&key, s.stream.clone()) {
                                    (Key::LaunchSetting(ls), Some(h)) => Some(view! {
                                        <StreamHealthView launch_setting=ls.clone() h per_minute=s.per_minute() />
                                    }),
                                    _ => None,
                                }}
                                {s.disabled_reason.clone().filter(|_| !enabled).map(|r| view! {
                                    <div><span class="label">"Why"</span><span data-test="disabled-reason">{r}</span></div>
                                })}
                                {s.backlog_line().map(|b| view! {
                                    <div>
                                        <span class="label">"Backlog"</span>
                                        <span data-test="backlog" title="messages waiting in the broker, and the nodes taking them (sampled every few seconds)">{b}</span>
                                    </div>
                                })}
                                {s.recovery_text().map(|r| view! {
                                    <div>
                                        <span class="label">"Recoveries"</span>
                                        <span data-test="recovery" title="how often the runtime had to recover this launch setting, since it was created">{r}</span>
                                    </div>
                                })}
                                {match &key {
                                    Key::LaunchSetting(ls) if !s.quarantined.is_empty() => Some(view! {
                                        <Quarantined launch_setting=ls.clone() hosts=s.quarantined.clone() can_operate clear />
                                    }),
                                    _ => None,
                                }}
                                {can_operate.then(|| {
                                    let toggle_key = key.clone();
                                    view! {
                                    <div class="actions">
                                        <button type="button" data-test="toggle-enabled" disabled=move || toggle.pending().get()
                                            on:click={
                                                let toggle_key = toggle_key.clone();
                                                move |_| {
                                                    if enabled {
                                                        asking_disable.set(true);
                                                    } else {
                                                        toggle.dispatch(SetEnabled { key: toggle_key.clone(), enabled: true });
                                                    }
                                                }
                                            }>
                                            {if enabled { "Disable…" } else { "Enable" }}
                                        </button>
                                        {move || (enabled && asking_disable.get()).then(|| view! {
                                            <DisableQuestion key=toggle_key.clone() toggle asking=asking_disable test="disable" />
                                        })}
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

/// The hosts a `MANY` breaker took out of the launch setting's rotation, each with why and,
/// for operators, a button that puts it back.
#[component]
fn Quarantined(
    launch_setting: String,
    hosts: Vec<Quarantine>,
    can_operate: bool,
    clear: ServerAction<ClearQuarantine>,
) -> impl IntoView {
    view! {
        <div class="quarantined" data-test="quarantined">
            <span class="label" title="the breaker tripped on these hosts: they get no launch of this launch setting until cleared or the launch setting is re-enabled">"Quarantined"</span>
            <ul>
                {hosts.into_iter().map(|q| {
                    let ls = launch_setting.clone();
                    let host = q.host.clone();
                    view! {
                        <li data-test="quarantined-host">
                            <code>{q.host.clone()}</code>
                            <span class="muted">" since " {display::time(q.since)}</span>
                            " · " {q.cause}
                            {q.activation_id.map(|a| view! {
                                " · " <a href=format!("/activations/{a}")>"activation"</a>
                            })}
                            {can_operate.then(|| view! {
                                " "
                                <button type="button" class="small" data-test="clear-quarantine"
                                    disabled=move || clear.pending().get()
                                    on:click=move |_| {
                                        clear.dispatch(ClearQuarantine { launch_setting: ls.clone(), host: host.clone() });
                                    }>
                                    "Clear"
                                </button>
                            })}
                        </li>
                    }
                }).collect_view()}
            </ul>
        </div>
    }
}
