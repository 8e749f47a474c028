//! The dashboard: first what needs the on-call operator (what is disabled, by whom and why,
//! with *Enable*; which launch settings fail now, with their last error), then health of the
//! manager's dependencies, runs by status, the active ones, live nodes and their load, dead
//! letters waiting, and failures per hour over the last 24 hours (real failures by error type,
//! retries and "unavailable" answers apart).
//!
//! The server renders the figures of the moment (complete without JavaScript). Once hydrated,
//! the page follows the live feed (`/api/v1/dashboard/events`, server-sent events every 2 s) and
//! closes it when the page is left.

use crate::{
    api::{ComponentStatus, dashboard::dashboard_figures, health, whoami},
    components::{
        attention::{DisabledBanner, FailingNow},
        failure_chart::FailureChartView,
        failures::kind_noun,
        ids::ShortId,
        throughput_chart::ThroughputChartView,
        when::Ago,
    },
};
use am_domain::{
    dashboard::{
        BrokerBacklog, Dashboard, NodeLoad, RunningActivation, StatusCount, WINDOW_HOURS,
        failure_kind,
    },
    roles::Operation,
};
use am_domain::{display, links};
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use std::time::Duration;

#[component]
fn StatusCard(name: &'static str, test: &'static str, status: ComponentStatus) -> impl IntoView {
    let class = if status.up {
        "status up"
    } else {
        "status down"
    };
    view! {
        <div class="card" data-test=test data-up=status.up.to_string()>
            <h2>{name}</h2>
            <p class=class>{if status.up { "up" } else { "down" }}</p>
            <p class="muted">{status.detail}</p>
        </div>
    }
}

/// Whether the page receives live figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    not(feature = "hydrate"),
    expect(dead_code, reason = "only the browser follows the feed")
)]
enum Live {
    /// Server-rendered, not (yet) following the feed: no JavaScript, or not hydrated yet.
    Off,
    Connecting,
    On,
    /// The connection dropped; the browser reconnects by itself.
    Reconnecting,
    /// The server refused the feed (e.g. the session ended): a reload is needed.
    Stopped,
}

impl Live {
    fn as_str(self) -> &'static str {
        match self {
            Live::Off => "off",
            Live::Connecting => "connecting",
            Live::On => "live",
            Live::Reconnecting => "reconnecting",
            Live::Stopped => "stopped",
        }
    }

    fn text(self) -> &'static str {
        match self {
            Live::Off => "figures of the page load",
            Live::Connecting => "connecting…",
            Live::On => "live",
            Live::Reconnecting => "reconnecting…",
            Live::Stopped => "live updates stopped; reload the page",
        }
    }
}

#[component]
pub fn DashboardPage() -> impl IntoView {
    let health = Resource::new(|| (), |_| health());
    let initial = Resource::new(|| (), |_| dashboard_figures());
    let me = Resource::new(|| (), |_| whoami());
    // Set by the live feed; until its first event the server's figures show.
    let latest = RwSignal::new(None::<Dashboard>);
    let live = RwSignal::new(Live::Off);
    // When the last event came, changed or not.
    let heard = RwSignal::new(None::<DateTime<Utc>>);
    // Refreshes in the browser only; the server renders the first figures.
    Effect::new(move |_| {
        set_interval(move || health.refetch(), Duration::from_secs(5));
    });
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        feed::follow(latest, live, heard);
    });

    view! {
        <section data-test="dashboard">
            <div class="page-head">
                <h1>"Dashboard"</h1>
                <span class="live-state" data-test="live-state" data-state=move || live.get().as_str()
                    role="status">
                    {move || match (live.get(), heard.get()) {
                        (Live::On, Some(t)) => format!("live, updated {}", t.format("%H:%M:%S UTC")),
                        (state, _) => state.text().to_owned(),
                    }}
                </span>
            </div>
            <Suspense fallback=|| view! { <p>"Checking health…"</p> }>
                {move || {
                    health.get().map(|h| match h {
                        Ok(h) => {
                            view! {
                                <div class="cards" data-test="health">
                                    <StatusCard name="Database" test="health-database" status=h.database />
                                    <StatusCard name="Broker" test="health-broker" status=h.broker />
                                </div>
                                <p class="muted">"Checked " {h.checked_at}</p>
                            }
                                .into_any()
                        }
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    })
                }}
            </Suspense>
            <Suspense fallback=|| view! { <p class="muted">"Loading the figures…"</p> }>
                {move || {
                    let figures = match latest.get() {
                        Some(d) => Some(Ok(d)),
                        None => initial.get(),
                    };
                    let can_operate = me
                        .get()
                        .and_then(Result::ok)
                        .is_some_and(|u| u.role.may(Operation::Toggle));
                    figures.map(|r| match r {
                        Ok(d) => view! { <Figures d=d can_operate /> }.into_any(),
                        Err(e) => view! { <p class="error" data-test="dashboard-error">{e.to_string()}</p> }.into_any(),
                    })
                }}
            </Suspense>
        </section>
    }
}

#[component]
fn Figures(d: Dashboard, can_operate: bool) -> impl IntoView {
    let (active, finished): (Vec<StatusCount>, Vec<StatusCount>) =
        d.activations.iter().cloned().partition(|c| c.active);
    let running_note = (d.running_total > d.running.len() as u64).then(|| {
        format!(
            "The newest {} of {} active.",
            d.running.len(),
            d.running_total
        )
    });
    let nodes = d.nodes.len();
    let now = d.generated_at;
    let hour_ago = d.generated_at - chrono::Duration::hours(1);
    let besides = (d.retried_last_hour + d.unavailable_last_hour > 0).then(|| {
        let link = |kind: &'static str, n: u64| {
            view! {
                <a href=links::failures_since(hour_ago, kind) data-test="besides-kind" data-kind=kind
                    data-count=n.to_string()>{format!("{n} {}", kind_noun(kind, n))}</a>
            }
        };
        view! {
            "besides: " {link(failure_kind::RETRIED, d.retried_last_hour)} ", "
            {link(failure_kind::UNAVAILABLE, d.unavailable_last_hour)} " (not failures)"
        }
    });
    view! {
        <p class="muted" data-test="generated-at" data-at=d.generated_at.to_rfc3339()>
            "Figures of " {display::time(d.generated_at)}
        </p>
        {(!d.alarms.is_empty()).then(|| view! {
            <section class="card attention bad alarms" aria-label="Broken now" data-test="alarms"
                data-count=d.alarms.len().to_string()>
                <h2>"Broken now"</h2>
                <ul>
                    {d.alarms.iter().map(|a| view! {
                        <li data-test="alarm" data-kind=a.kind.as_str()>
                            <a href=a.link.clone()>{a.summary.clone()}</a>
                        </li>
                    }).collect_view()}
                </ul>
            </section>
        })}
        <DisabledBanner launch_settings=d.disabled_launch_settings
            launch_settings_total=d.disabled_launch_settings_total groups=d.disabled_groups
            groups_total=d.disabled_groups_total now can_operate />
        <FailingNow rows=d.failing total=d.failing_total now />
        {(!d.needs_data_queue.is_empty()).then(|| view! {
            <p class="banner warn" data-test="dashboard-needs-data-queue">
                {format!("{} published agent(s) need a data queue before they can run: ", d.needs_data_queue.len())}
                {d.needs_data_queue.iter().map(|a| {
                    let href = format!("/agents/{a}");
                    view! { <a href=href>{a.clone()}</a> " " }
                }).collect_view()}
                <a href="/schema-drift">"what nodes published that the catalog did not take"</a>
            </p>
        })}
        <div class="dash-grid">
            <div class="card dash-counts" data-test="activation-counts">
                <h2>"Runs"</h2>
                <p class="muted">"a group's run counts once, with its members"</p>
                <StatusCounts title="Active now" counts=active since=None />
                <StatusCounts title="Finished, created in the last 24 h" counts=finished
                    since=Some(d.generated_at - chrono::Duration::hours(WINDOW_HOURS)) />
            </div>
            <div class="card dash-figure" data-test="dead-letters" data-count=d.dead_letters.to_string()>
                <h2>"Dead letters"</h2>
                <a class="big" href=links::dead_letters_of("") data-test="dead-letters-link">{d.dead_letters.to_string()}</a>
                <p class="muted">"waiting for an operator"</p>
            </div>
            <div class="card dash-figure" data-test="failures-last-hour" data-count=d.failures_last_hour.to_string()
                data-retried=d.retried_last_hour.to_string() data-unavailable=d.unavailable_last_hour.to_string()>
                <h2>"Failures"</h2>
                <a class="big" href=links::failures_since(hour_ago, "") data-test="failures-link">{d.failures_last_hour.to_string()}</a>
                <p class="muted">"in the last hour"</p>
                {besides.map(|b| view! { <p class="muted" data-test="failures-besides">{b}</p> })}
            </div>
            <BacklogFigure b=d.backlog />
            {(d.failed_notifications > 0).then(|| view! {
                <div class="card dash-figure" data-test="failed-notifications" data-count=d.failed_notifications.to_string()>
                    <h2>"Notifications"</h2>
                    <a class="big bad" href="/notifications?status=failed">{d.failed_notifications.to_string()}</a>
                    <p class="muted">"not delivered: nobody was told"</p>
                </div>
            })}
        </div>
        <div class="card">
            <h2>"Failures per hour, last 24 h"</h2>
            <FailureChartView chart=d.failures_per_hour />
        </div>
        <div class="card" data-test="dashboard-throughput">
            <h2>"Messages per minute, last hour"</h2>
            <ThroughputChartView t=d.throughput scope="every launch setting".to_owned() id="dash-throughput" />
        </div>
        <div class="dash-grid wide">
            <div class="card" data-test="running" data-count=d.running_total.to_string()>
                <h2>"Active runs " <span class="muted">{format!("({})", d.running_total)}</span></h2>
                <RunningList rows=d.running now />
                {running_note.map(|n| view! {
                    <p class="hint">{n} " " <a href="/activations?status=active" data-test="all-active">"All active"</a></p>
                })}
            </div>
            <div class="card" data-test="nodes" data-count=nodes.to_string()>
                <h2>"Live nodes " <span class="muted">{format!("({nodes})")}</span></h2>
                <NodeLoads nodes=d.nodes />
            </div>
        </div>
    }
}

/// What waits in the broker: messages for nodes, those no launch setting took, and the largest
/// queues (each linked to what explains it).
#[component]
fn BacklogFigure(b: BrokerBacklog) -> impl IntoView {
    let note = match (b.sampled_at, b.unconsumed) {
        (None, _) => "not sampled yet".to_owned(),
        (Some(_), 0) => "ready for nodes".to_owned(),
        (Some(_), 1) => "ready for nodes; 1 queue has no consumer".to_owned(),
        (Some(_), n) => format!("ready for nodes; {n} queues have no consumer"),
    };
    view! {
        <div class="card dash-figure" data-test="backlog" data-ready=b.ready.to_string()
            data-unrouted=b.unrouted.to_string()>
            <h2>"Broker backlog"</h2>
            <a class="big" href="/broker">{b.ready.to_string()}</a>
            <p class="muted">{note}</p>
            {(b.unrouted > 0).then(|| view! {
                <p data-test="backlog-unrouted"><a href="/broker">{format!("{} unrouted", b.unrouted)}</a>
                    <span class="muted">" (no launch setting took them)"</span></p>
            })}
            <ul class="plain">
                {b.largest.into_iter().map(|q| {
                    let (label, href) = match (&q.launch_setting, q.unrouted) {
                        (Some(ls), _) => (ls.clone(), format!("/launch-settings/{ls}")),
                        (None, true) => (
                            format!("{} (unrouted)", q.data_queue.clone().unwrap_or_default()),
                            "/broker".to_owned(),
                        ),
                        (None, false) => (q.data_queue.clone().unwrap_or(q.queue.clone()), "/broker".to_owned()),
                    };
                    view! { <li data-test="backlog-queue"><a href=href>{label}</a>" " <span class="muted">{q.ready.to_string()}</span></li> }
                }).collect_view()}
            </ul>
        </div>
    }
}

#[component]
fn StatusCounts(
    title: &'static str,
    counts: Vec<StatusCount>,
    /// Counted from this creation time on (the finished runs' window); `None`: of any age.
    since: Option<DateTime<Utc>>,
) -> impl IntoView {
    view! {
        <p class="label">{title}</p>
        <ul class="counts">
            {counts.into_iter().map(|c| {
                let href = links::runs(&c.status, since);
                view! {
                    <li data-test="status-count" data-status=c.status.clone() data-count=c.count.to_string()>
                        <a href=href>
                            <span class=format!("pill {}", c.status)>{c.status.clone()}</span>
                            <strong>{c.count.to_string()}</strong>
                        </a>
                    </li>
                }
            }).collect_view()}
        </ul>
    }
}

#[component]
fn RunningList(rows: Vec<RunningActivation>, now: DateTime<Utc>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" data-test="no-running">"Nothing runs now."</p> }
            .into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="list compact">
                <thead>
                    <tr><th>"Activation"</th><th>"Runs"</th><th>"Status"</th><th>"Hosts"</th><th>"Since"</th></tr>
                </thead>
                <tbody>
                    {rows.into_iter().map(|a| {
                        let href = format!("/activations/{}", a.id);
                        let what = match (&a.launch_setting, &a.group, &a.member) {
                            (Some(ls), _, _) => ls.clone(),
                            (None, Some(g), Some(m)) => format!("group {g}, at {m}"),
                            (None, Some(g), None) => format!("group {g}"),
                            (None, None, _) => String::new(),
                        };
                        let hosts = if a.hosts.is_empty() { "—".to_owned() } else { a.hosts.join(", ") };
                        let since = a.started_at.unwrap_or(a.created_at);
                        view! {
                            <tr data-test="running-row" data-id=a.id.clone() data-status=a.status.clone()>
                                <td data-label="Activation"><ShortId id=a.id.clone() href test="running-link" /></td>
                                <td data-label="Runs" class="long-name">{what}</td>
                                <td data-label="Status"><span class=format!("pill {}", a.status)>{a.status.clone()}</span></td>
                                <td data-label="Hosts" class="long-name" data-test="running-hosts">{hosts}</td>
                                <td data-label="Since"><Ago at=since now /></td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

#[component]
fn NodeLoads(nodes: Vec<NodeLoad>) -> impl IntoView {
    if nodes.is_empty() {
        return view! {
            <p class="muted" data-test="no-nodes">"No live node: nothing can be dispatched."</p>
        }
        .into_any();
    }
    view! {
        <ul class="loads">
            {nodes.into_iter().map(|n| {
                let label = format!("{} / {} running, load {:.2}", n.running, n.capacity, n.load);
                let pct = format!("width: {:.0}%", n.usage() * 100.0);
                let full = n.usage() >= 1.0;
                view! {
                    <li data-test="node-load" data-host=n.host.clone() data-application=n.application.clone()
                        data-running=n.running.to_string() data-capacity=n.capacity.to_string()>
                        <span class="who"><code>{n.host.clone()}</code> " " <span class="muted">{n.application.clone()}</span></span>
                        <span class="bar" role="meter" aria-valuemin="0" aria-valuemax=n.capacity.to_string()
                            aria-valuenow=n.running.to_string() aria-label=format!("{}: {label}", n.host)
                            class:full=full>
                            <span style=pct></span>
                        </span>
                        <span class="muted">{label}</span>
                    </li>
                }
            }).collect_view()}
        </ul>
    }
    .into_any()
}

#[cfg(feature = "hydrate")]
mod feed {
    //! The browser's side of the live feed: an `EventSource` whose messages replace the
    //! figures, closed when the page is left.

    use super::Live;
    use crate::api::dashboard::EVENTS;
    use am_domain::dashboard::Dashboard;
    use leptos::prelude::*;
    use send_wrapper::SendWrapper;
    use wasm_bindgen::{JsCast, closure::Closure};
    use web_sys::{EventSource, MessageEvent};

    pub fn follow(
        latest: RwSignal<Option<Dashboard>>,
        live: RwSignal<Live>,
        heard: RwSignal<Option<chrono::DateTime<chrono::Utc>>>,
    ) {
        let Ok(source) = EventSource::new(EVENTS) else {
            live.set(Live::Stopped);
            return;
        };
        live.set(Live::Connecting);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let Some(text) = e.data().as_string() else {
                return;
            };
            match serde_json::from_str::<Dashboard>(&text) {
                Ok(d) => {
                    heard.set(Some(d.generated_at));
                    // Only a change re-renders the figures (the time stamp always moves).
                    let same = latest.with_untracked(|old| {
                        old.as_ref().is_some_and(|o| {
                            Dashboard {
                                generated_at: d.generated_at,
                                ..o.clone()
                            } == d
                        })
                    });
                    if !same {
                        latest.set(Some(d));
                    }
                    live.set(Live::On);
                }
                Err(e) => leptos::logging::warn!("dashboard event not understood: {e}"),
            }
        });
        source.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let watched = source.clone();
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            // CLOSED: the server answered with an error (e.g. 401); the browser gives up.
            live.set(if watched.ready_state() == EventSource::CLOSED {
                Live::Stopped
            } else {
                Live::Reconnecting
            });
        });
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        // The closures live as long as the source; both go when the page is left.
        let held = SendWrapper::new((source, on_message, on_error));
        on_cleanup(move || {
            let (source, _, _) = held.take();
            source.close();
        });
    }
}
