//! The nodes page: every application instance the manager hears from, live or lost, with its
//! load, running activations against its capacity, last heartbeat and the agents it offers.
//! Filters live in the URL (`?application=&lost=1`); the page reads without JavaScript and
//! refreshes itself once hydrated.

use crate::api::nodes::{NodesView, list_nodes};
use am_domain::{display, read::nodes::NodeView, status::NodeStatus};
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
struct NodesQuery {
    application: String,
    include_lost: bool,
}

#[component]
pub fn NodesPage() -> impl IntoView {
    let query_map = use_query_map();
    let query = Memo::new(move |_| {
        let m = query_map.get();
        NodesQuery {
            application: m.get("application").unwrap_or_default(),
            include_lost: m.get("lost").is_some_and(|v| !v.is_empty() && v != "0"),
        }
    });
    let data = Resource::new(
        move || query.get(),
        |q| list_nodes(q.application, q.include_lost),
    );
    // Refreshes in the browser only; the server renders the first figures.
    Effect::new(move |_| {
        set_interval(move || data.refetch(), Duration::from_secs(10));
    });

    view! {
        <section data-test="list-nodes">
            <div class="page-head">
                <h1>"Nodes"</h1>
            </div>
            <form method="get" action="/nodes" class="filters" data-test="filters">
                <label>
                    <span class="label">"Application"</span>
                    <select name="application" data-test="filter-application">
                        <option value="">"all"</option>
                        <Suspense fallback=|| ()>
                            {move || {
                                let current = query.get().application;
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
                <label class="field check">
                    <input type="checkbox" name="lost" value="1" data-test="filter-lost"
                        checked=move || query.get().include_lost />
                    <span class="label">"Show lost nodes"</span>
                </label>
                <button type="submit" data-test="filter-apply">"Filter"</button>
            </form>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <NodesTable view=v include_lost=query.get_untracked().include_lost /> }.into_any(),
                    Err(e) => view! { <p class="error" data-test="list-error">{e.to_string()}</p> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn NodesTable(view: NodesView, include_lost: bool) -> impl IntoView {
    let can_create = view.can_edit_catalog;
    let now = view.now;
    let explanation = format!(
        "A node is lost when no heartbeat came for {} s; nothing is dispatched to it.",
        view.timeout_secs
    );
    if view.nodes.is_empty() {
        let text = if include_lost {
            "No node has reported yet."
        } else {
            "No live node. Nodes appear here when their application starts and publishes itself."
        };
        return view! {
            <p class="muted" data-test="no-nodes">{text}</p>
            <p class="hint">{explanation}</p>
        }
        .into_any();
    }
    let live = view
        .nodes
        .iter()
        .filter(|n| n.status == NodeStatus::Live)
        .count();
    let summary = format!("{live} live of {} shown", view.nodes.len());
    view! {
        <div class="table-wrap">
            <table class="list" data-test="nodes">
                <thead>
                    <tr>
                        <th>"Host"</th><th>"Application"</th><th>"Status"</th>
                        <th>"Running"</th><th>"Last heartbeat"</th><th>"Agents offered"</th>
                    </tr>
                </thead>
                <tbody>
                    {view.nodes.into_iter().map(|n| view! { <NodeLine node=n can_create=can_create now=now /> }).collect_view()}
                </tbody>
            </table>
        </div>
        <p class="muted" data-test="nodes-summary">{summary}</p>
        <p class="hint">{explanation}</p>
    }
    .into_any()
}

#[component]
fn NodeLine(node: NodeView, can_create: bool, now: DateTime<Utc>) -> impl IntoView {
    let app_href = format!("/applications/{}", node.application);
    let usage = format!("{} / {}", node.running, node.capacity);
    let full = node.is_full();
    let status = node.status.as_str();
    let agents = node.agents.clone();
    view! {
        <tr data-test="node-row" id=am_domain::links::node_anchor(&node.host) data-host=node.host.clone() data-application=node.application.clone()
            data-status=status>
            <td data-label="Host">
                <code>{node.host.clone()}</code>
                <br /><span class="muted" data-test="node-version">{node.version.clone()}</span>
                " " <span class="muted" data-test="node-protocol"
                    title=(i64::from(node.protocol) < i64::from(am_domain::wire::PROTOCOL_VERSION))
                        .then_some("an older node: its failure reports carry no id, so one delivered twice may be counted twice")>
                    {format!("· protocol {}", node.protocol)}
                </span>
            </td>
            <td data-label="Application">
                <a href=app_href>{node.application.clone()}</a>
                {node.waiting_for_application.then(|| view! {
                    <br />
                    <span class="pill warn" data-test="node-waiting"
                        title="its application is not in the catalog: what this node published is kept and applied as soon as the application is created">
                        "not in the catalog"
                    </span>
                    {can_create.then(|| view! {
                        " " <a href="/applications/new" data-test="node-create-application">"Create application"</a>
                    })}
                })}
            </td>
            <td data-label="Status">
                <span class=format!("pill {status}") data-test="node-status">{status}</span>
            </td>
            <td data-label="Running">
                <span data-test="node-running" class:warn-text=full title="running activations / capacity">{usage}</span>
                <br /><span class="muted nowrap" data-test="node-load" title="the host's one-minute load average">
                    {format!("load {:.2}", node.load)}
                </span>
            </td>
            <td data-label="Last heartbeat" data-test="node-heartbeat">
                {display::ago(node.last_heartbeat_at, now)}
                <br /><span class="muted">{display::time(node.last_heartbeat_at)}</span>
            </td>
            <td data-label="Agents offered" data-test="node-agents">
                {if agents.is_empty() {
                    view! { <span class="muted">"none"</span> }.into_any()
                } else {
                    let app = node.application.clone();
                    agents.into_iter().map(|a| {
                        let href = format!("/agents/{app}/{a}");
                        view! { <a class="tag" href=href data-test="node-agent">{a}</a>" " }
                    }).collect_view().into_any()
                }}
            </td>
        </tr>
    }
}
