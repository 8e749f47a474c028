//! The activation page's re-run buttons: a group from its failed member (or any member), a
//! launch setting's run on the hosts that failed or on another node of its pool.

use crate::{api::activations::RerunActivation, components::run_actions::RunOutcome};
use am_domain::recovery::{Rerun, RerunChoices};
use leptos::prelude::*;

#[component]
pub fn RerunPanel(activation: String, choices: RerunChoices) -> impl IntoView {
    let action = ServerAction::<RerunActivation>::new();
    let start = {
        let activation = activation.clone();
        move |how: Rerun| {
            action.dispatch(RerunActivation {
                id: activation.clone(),
                how,
            });
        }
    };
    let group = (!choices.members.is_empty()).then(|| {
        let from = RwSignal::new(choices.from.unwrap_or(0));
        let members = choices.members.clone();
        let start = start.clone();
        view! {
            <label>"From member "
                <select data-test="rerun-from" on:change=move |ev| {
                    if let Ok(i) = event_target_value(&ev).parse() { from.set(i); }
                }>
                    {members.iter().enumerate().map(|(i, m)| view! {
                        <option value=i.to_string() selected=choices.from == Some(i)>{format!("{} · {m}", i + 1)}</option>
                    }).collect_view()}
                </select>
            </label>
            " "
            <button type="button" data-test="rerun" disabled=move || action.pending().get()
                on:click=move |_| {
                    let member = members.get(from.get_untracked()).cloned();
                    start(Rerun { from_member: member, ..Rerun::default() });
                }>
                "Re-run from this member"
            </button>
        }
    });
    let alone = choices.members.is_empty().then(|| {
        let failed = choices.failed_hosts.clone();
        let host = RwSignal::new(choices.pool_hosts.first().cloned().unwrap_or_default());
        let (all, on_failed, on_host) = (start.clone(), start.clone(), start.clone());
        view! {
            <button type="button" data-test="rerun" disabled=move || action.pending().get()
                on:click=move |_| all(Rerun::default())>
                "Re-run"
            </button>
            {(!failed.is_empty()).then(|| view! {
                " "
                <button type="button" data-test="rerun-failed-hosts" disabled=move || action.pending().get()
                    on:click=move |_| on_failed(Rerun { only_failed_hosts: true, ..Rerun::default() })>
                    {format!("Re-run on the failed hosts ({})", failed.join(", "))}
                </button>
            })}
            {(!choices.pool_hosts.is_empty()).then(|| view! {
                " "
                <label>"On host "
                    <select data-test="rerun-host" on:change=move |ev| host.set(event_target_value(&ev))>
                        {choices.pool_hosts.iter().map(|h| view! { <option value=h.clone()>{h.clone()}</option> }).collect_view()}
                    </select>
                </label>
                " "
                <button type="button" data-test="rerun-on-host" disabled=move || action.pending().get()
                    on:click=move |_| on_host(Rerun { host: Some(host.get_untracked()), ..Rerun::default() })>
                    "Re-run there"
                </button>
            })}
        }
    });
    view! {
        <div class="actions rerun" data-test="rerun-panel">
            {group}
            {alone}
            {move || action.value().get().map(|r| match r {
                Ok(id) => view! {
                    <p class="banner good" role="status">
                        "Started re-run "
                        <a href=format!("/activations/{id}") data-test="rerun-started-link"><code>{id.clone()}</code></a>
                        " · " <RunOutcome id=id.clone() />
                    </p>
                }.into_any(),
                Err(e) => view! { <p class="error" role="alert" data-test="rerun-error">{e.to_string()}</p> }.into_any(),
            })}
        </div>
    }
}
