//! On an application's page: its agents with what its nodes published and which live nodes
//! offer each (an agent no live node offers cannot run now), and its classifiers with their
//! size and when a node last published them.

use crate::{api::nodes::application_publication, components::classifier::ClassifierPicker};
use am_domain::{
    display,
    read::nodes::{AgentOffer, ApplicationPublication, ClassifierPublication},
};
use leptos::prelude::*;

#[component]
pub fn ApplicationPublished(application: String) -> impl IntoView {
    let data = {
        let application = application.clone();
        Resource::new(|| (), move |_| application_publication(application.clone()))
    };
    view! {
        <Suspense fallback=|| view! { <div class="card"><p class="muted">"Loading agents…"</p></div> }>
            {move || {
                let application = application.clone();
                data.get().map(move |r| match r {
                    Ok(v) => view! { <Published application view=v /> }.into_any(),
                    Err(e) => view! { <div class="card"><p class="error">{e.to_string()}</p></div> }.into_any(),
                })
            }}
        </Suspense>
    }
}

#[component]
fn Published(application: String, view: ApplicationPublication) -> impl IntoView {
    let not_offered = view
        .agents
        .iter()
        .filter(|a| a.in_catalog && a.offered_by.is_empty())
        .count();
    let in_catalog = view.agents.iter().filter(|a| a.in_catalog).count();
    let drifting = view.agents.iter().any(|a| a.schema_differs);
    let nodes_href = format!("/nodes?application={application}");
    let drift_href = format!("/schema-drift?application={application}");
    let live = if view.live_hosts.is_empty() {
        view! {
            <p class="banner warn" data-test="no-live-node">
                "No live node of this application: none of its agents can run now. "
                <a href=nodes_href.clone()>"Nodes"</a>
            </p>
        }
        .into_any()
    } else {
        view! {
            <p class="muted" data-test="live-nodes">
                "Live nodes: " {view.live_hosts.join(", ")} " · " <a href=nodes_href.clone()>"Nodes"</a>
            </p>
        }
        .into_any()
    };
    let agents = if view.agents.is_empty() {
        view! { <p class="muted">"No agent yet: nodes publish theirs when they start."</p> }
            .into_any()
    } else {
        view! {
            <div class="table-wrap">
                <table class="list" data-test="application-agents">
                    <thead>
                        <tr><th>"Agent"</th><th>"Declared by"</th><th>"Last published"</th><th>"Offered by"</th></tr>
                    </thead>
                    <tbody>
                        {view.agents.into_iter().map(|a| view! { <AgentLine application=application.clone() agent=a /> }).collect_view()}
                    </tbody>
                </table>
            </div>
        }
        .into_any()
    };
    view! {
        <div class="card">
            <h2>"Agents"</h2>
            {live}
            {(not_offered > 0).then(|| view! {
                <p class="banner warn" data-test="not-offered-summary">
                    {format!("{not_offered} of {in_catalog} agents are offered by no live node.")}
                </p>
            })}
            {drifting.then(|| view! {
                <p class="banner warn" data-test="schema-differs-summary">
                    "Nodes published a parameter schema that saved launch settings do not fit. "
                    <a href=drift_href>"Schema drift"</a>
                </p>
            })}
            {agents}
        </div>
        <div class="card">
            <h2>"Classifiers"</h2>
            {if view.classifiers.is_empty() {
                view! { <p class="muted">"No classifier published."</p> }.into_any()
            } else {
                view! {
                    <ul class="plain" data-test="application-classifiers">
                        {view.classifiers.into_iter().map(|c| view! { <ClassifierLine application=application.clone() classifier=c /> }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </div>
    }
}

#[component]
fn AgentLine(application: String, agent: AgentOffer) -> impl IntoView {
    let a = agent;
    let published = a.published_at.map_or_else(
        || "never".to_owned(),
        |t| {
            format!(
                "{} from {}, {}",
                a.published_version.as_deref().unwrap_or("?"),
                a.published_by_host.as_deref().unwrap_or("?"),
                display::time(t)
            )
        },
    );
    let name = if a.in_catalog {
        let href = format!("/agents/{application}/{}", a.id);
        view! {
            <a href=href>{a.id.clone()}</a> " " <span class="muted">{a.title.clone()}</span>
            {a.needs_data_queue.then(|| view! {
                " " <span class="pill interrupted" data-test="agent-needs-data-queue"
                    title="its nodes suggested a data queue that is not in the catalog; pick one on the agent">
                    "needs a data queue"
                </span>
            })}
        }
        .into_any()
    } else {
        view! {
            <code>{a.id.clone()}</code> " "
            <span class="pill lost" data-test="agent-not-in-catalog"
                title="a node offers it but the catalog could not take it; the schema-drift page says why">
                "not in the catalog"
            </span>
        }
        .into_any()
    };
    let offered = if a.offered_by.is_empty() {
        view! { <span class="pill lost" data-test="agent-not-offered">"offered by no live node"</span> }
            .into_any()
    } else {
        view! { <span data-test="agent-offered-by">{a.offered_by.join(", ")}</span> }.into_any()
    };
    view! {
        <tr data-test="application-agent" data-id=a.id.clone() data-offered=(!a.offered_by.is_empty()).to_string()>
            <td data-label="Agent">{name}</td>
            <td data-label="Declared by">{a.declared_by.clone().unwrap_or_else(|| "—".into())}</td>
            <td data-label="Last published">
                {published}
                {a.schema_differs.then(|| view! {
                    " " <span class="pill interrupted" data-test="agent-schema-differs"
                        title="the catalog keeps the schema saved launch settings fit">"schema differs"</span>
                })}
            </td>
            <td data-label="Offered by">{offered}</td>
        </tr>
    }
}

#[component]
fn ClassifierLine(application: String, classifier: ClassifierPublication) -> impl IntoView {
    let c = classifier;
    let test = format!("classifier-{}", c.name);
    let meta = match c.published_at {
        Some(t) => format!("{} values · published {}", c.values, display::time(t)),
        None => format!(
            "{} values · declared in the catalog, no node published it",
            c.values
        ),
    };
    let id = c.name.clone();
    view! {
        <li data-test="application-classifier" data-id=id>
            <details>
                <summary>
                    <code>{c.name.clone()}</code>" " <span class="muted">{c.title.clone()}</span>
                    " " <span class="hint" data-test="classifier-meta">{meta}</span>
                </summary>
                <ClassifierPicker application classifier=c.name on_pick=Callback::new(|_| ()) test />
            </details>
        </li>
    }
}
