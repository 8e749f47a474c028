//! Schema drift across applications: launch settings whose saved parameters the schema their
//! agent's nodes last published rejects — a renamed or retyped parameter, a value out of the
//! new bounds. The catalog keeps the schema the settings were saved against until they are fixed;
//! this page says which ones to open. Above them, what nodes published that the catalog does not
//! run yet: messages agents waiting for a data queue, and changes a catalog rule refused, with
//! why. Filter by application in the URL (`?application=`).

use crate::api::nodes::{DriftView, schema_drift};
use am_domain::read::nodes::RefusedPublication;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

#[component]
pub fn DriftPage() -> impl IntoView {
    let query_map = use_query_map();
    let application = Memo::new(move |_| query_map.get().get("application").unwrap_or_default());
    let data = Resource::new(move || application.get(), schema_drift);
    view! {
        <section data-test="schema-drift-page">
            <div class="page-head">
                <h1>"Schema drift"</h1>
            </div>
            <p class="hint">
                "Launch settings whose saved parameters do not fit the parameter schema their agent's nodes "
                "published last. Until they are fixed they run with the values saved; open one to "
                "see each field's problem and save it again."
            </p>
            <form method="get" action="/schema-drift" class="filters" data-test="filters">
                <label>
                    <span class="label">"Application"</span>
                    <select name="application" data-test="filter-application">
                        <option value="">"all"</option>
                        <Suspense fallback=|| ()>
                            {move || {
                                let current = application.get();
                                data.get().and_then(Result::ok).map(|v| {
                                    v.applications.into_iter().map(|a| {
                                        let selected = a == current;
                                        view! { <option value=a.clone() selected=selected>{a.clone()}</option> }
                                    }).collect_view()
                                })
                            }}
                        </Suspense>
                    </select>
                </label>
                <button type="submit" data-test="filter-apply">"Filter"</button>
            </form>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => {
                        let (refused, needs) = (v.refused.clone(), v.needs_data_queue.clone());
                        view! {
                            <NeedsDataQueue agents=needs />
                            <RefusedTable rows=refused />
                            <DriftTable view=v />
                        }
                        .into_any()
                    }
                    Err(e) => view! { <p class="error" data-test="list-error">{e.to_string()}</p> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}

/// Messages agents a node published before their data queue was in the catalog.
#[component]
fn NeedsDataQueue(agents: Vec<(String, String)>) -> impl IntoView {
    (!agents.is_empty()).then(|| {
        view! {
            <div class="banner warn" data-test="needs-data-queue">
                <p>
                    "These messages agents need a data queue: their nodes suggested one that is not in "
                    "the catalog. Open each and pick one; until then they can have no launch setting."
                </p>
                <ul>
                    {agents.into_iter().map(|(app, agent)| {
                        let href = format!("/agents/{app}/{agent}");
                        view! { <li><a href=href data-test="needs-data-queue-agent">{format!("{app}/{agent}")}</a></li> }
                    }).collect_view()}
                </ul>
            </div>
        }
    })
}

/// What nodes published that a catalog rule refused, with why.
#[component]
fn RefusedTable(rows: Vec<RefusedPublication>) -> impl IntoView {
    (!rows.is_empty()).then(|| {
        view! {
            <h2>"Published but not taken"</h2>
            <p class="hint">
                "Changes of a node's last publication that would have broken a catalog rule. The "
                "rest of its publication was taken; these wait until the catalog or the code changes."
            </p>
            <div class="table-wrap">
                <table class="list" data-test="refused">
                    <thead>
                        <tr><th>"Node"</th><th>"Change"</th><th>"Why"</th></tr>
                    </thead>
                    <tbody>
                        {rows.into_iter().flat_map(|p| {
                            let node = format!("{}/{}", p.application, p.host);
                            p.refused.into_iter().map(move |r| view! {
                                <tr data-test="refused-row">
                                    <td data-label="Node">{node.clone()}</td>
                                    <td data-label="Change">{r.entity.to_string()}</td>
                                    <td data-label="Why">
                                        <ul class="field-errors">
                                            {r.errors.0.into_iter().map(|e| view! { <li>{e.to_string()}</li> }).collect_view()}
                                        </ul>
                                    </td>
                                </tr>
                            })
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        }
    })
}

#[component]
fn DriftTable(view: DriftView) -> impl IntoView {
    if view.rows.is_empty() {
        return view! {
            <p class="banner good" data-test="no-drift">
                "Every launch setting fits the schema its agent's nodes published."
            </p>
        }
        .into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="list" data-test="drift">
                <thead>
                    <tr><th>"Launch setting"</th><th>"Application"</th><th>"Agent"</th><th>"What no longer fits"</th></tr>
                </thead>
                <tbody>
                    {view.rows.into_iter().map(|d| {
                        let ls_href = format!("/launch-settings/{}", d.launch_setting);
                        let agent_href = format!("/agents/{}/{}", d.application, d.agent);
                        view! {
                            <tr data-test="drift-row" data-id=d.launch_setting.clone()>
                                <td data-label="Launch setting"><a href=ls_href data-test="drift-link">{d.launch_setting.clone()}</a></td>
                                <td data-label="Application">{d.application.clone()}</td>
                                <td data-label="Agent"><a href=agent_href>{d.agent.clone()}</a></td>
                                <td data-label="What no longer fits">
                                    <ul class="field-errors" data-test="drift-errors">
                                        {d.errors.0.into_iter().map(|e| view! { <li>{e.to_string()}</li> }).collect_view()}
                                    </ul>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

/// On a launch setting's page: what of its saved parameters the schema its agent's nodes
/// published last rejects, field by field (nothing when they fit).
#[component]
pub fn PublishedDrift(launch_setting: String, application: String) -> impl IntoView {
    let data = Resource::new(|| (), move |_| schema_drift(application.clone()));
    view! {
        <Suspense fallback=|| ()>
            {move || {
                let id = launch_setting.clone();
                data.get().and_then(Result::ok).and_then(|v| v.rows.into_iter().find(|d| d.launch_setting == id)).map(|d| view! {
                    <div class="banner warn" data-test="published-drift">
                        "The schema this agent's nodes published last does not accept these saved parameters; "
                        "until they are fixed the catalog keeps the schema they were saved against."
                        <ul>{d.errors.0.into_iter().map(|e| view! { <li>{e.to_string()}</li> }).collect_view()}</ul>
                    </div>
                })
            }}
        </Suspense>
    }
}
