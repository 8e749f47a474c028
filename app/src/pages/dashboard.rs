//! The dashboard: health of the manager's dependencies, activations by status, the active ones,
//! live nodes and their load, dead letters waiting, what is disabled and why, and failures per
//! hour over the last 24 hours by error type.
//!
//! The server renders the figures of the moment (complete without JavaScript). Once hydrated,
//! the page follows the live feed (`/api/v1/dashboard/events`, server-sent events every 2 s) and
//! closes it when the page is left.

use crate::api::{ComponentStatus, dashboard::dashboard_figures, health};
use am_domain::dashboard::{
    BrokerBacklog, Dashboard, Disabled, FailureChart, NodeLoad, OTHER_ERROR_TYPES,
    RunningActivation, StatusCount,
};
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

fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

#[component]
pub fn DashboardPage() -> impl IntoView {
    let health = Resource::new(|| (), |_| health());
    let initial = Resource::new(|| (), |_| dashboard_figures());
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
                    figures.map(|r| match r {
                        Ok(d) => view! { <Figures d=d /> }.into_any(),
                        Err(e) => view! { <p class="error" data-test="dashboard-error">{e.to_string()}</p> }.into_any(),
                    })
                }}
            </Suspense>
        </section>
    }
}

#[component]
fn Figures(d: Dashboard) -> impl IntoView {
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
    view! {
        <p class="muted" data-test="generated-at" data-at=d.generated_at.to_rfc3339()>
            "Figures of " {time(d.generated_at)}
        </p>
        <div class="dash-grid">
            <div class="card dash-counts" data-test="activation-counts">
                <h2>"Runs"</h2>
                <p class="muted">"a group's run counts once, with its members"</p>
                <StatusCounts title="Active now" counts=active />
                <StatusCounts title="Finished, created in the last 24 h" counts=finished />
            </div>
            <div class="card dash-figure" data-test="dead-letters" data-count=d.dead_letters.to_string()>
                <h2>"Dead letters"</h2>
                <a class="big" href="/dead-letters" data-test="dead-letters-link">{d.dead_letters.to_string()}</a>
                <p class="muted">"waiting for an operator"</p>
            </div>
            <div class="card dash-figure" data-test="failures-last-hour" data-count=d.failures_last_hour.to_string()>
                <h2>"Failures"</h2>
                <a class="big" href="/failures">{d.failures_last_hour.to_string()}</a>
                <p class="muted">"in the last hour"</p>
            </div>
            <BacklogFigure b=d.backlog />
        </div>
        <div class="card">
            <h2>"Failures per hour, last 24 h"</h2>
            <FailureChartView chart=d.failures_per_hour />
        </div>
        <div class="dash-grid wide">
            <div class="card" data-test="running" data-count=d.running_total.to_string()>
                <h2>"Active activations " <span class="muted">{format!(
                    "({} {})",
                    d.running_total,
                    if d.running_total == 1 { "run" } else { "runs" }
                )}</span></h2>
                <RunningList rows=d.running />
                {running_note.map(|n| view! {
                    <p class="hint">{n} " " <a href="/activations?status=running">"All running"</a></p>
                })}
            </div>
            <div class="card" data-test="nodes" data-count=nodes.to_string()>
                <h2>"Live nodes " <span class="muted">{format!("({nodes})")}</span></h2>
                <NodeLoads nodes=d.nodes />
            </div>
        </div>
        <div class="card" data-test="disabled" data-count=d.disabled_launch_settings_total.to_string()
            data-groups=d.disabled_groups_total.to_string()>
            <h2>"Disabled"</h2>
            <DisabledList kind="launch setting" path="/launch-settings" test="disabled-ls"
                rows=d.disabled_launch_settings total=d.disabled_launch_settings_total />
            <DisabledList kind="schedule group" path="/schedule-groups" test="disabled-group"
                rows=d.disabled_groups total=d.disabled_groups_total />
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
fn StatusCounts(title: &'static str, counts: Vec<StatusCount>) -> impl IntoView {
    view! {
        <p class="label">{title}</p>
        <ul class="counts">
            {counts.into_iter().map(|c| {
                let href = format!("/activations?status={}", c.status);
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
fn RunningList(rows: Vec<RunningActivation>) -> impl IntoView {
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
                        let short: String = a.id.chars().take(8).collect();
                        let what = match (&a.launch_setting, &a.group) {
                            (Some(ls), _) => ls.clone(),
                            (None, Some(g)) => format!("group {g}"),
                            (None, None) => String::new(),
                        };
                        let hosts = if a.hosts.is_empty() { "—".to_owned() } else { a.hosts.join(", ") };
                        let since = time(a.started_at.unwrap_or(a.created_at));
                        view! {
                            <tr data-test="running-row" data-id=a.id.clone() data-status=a.status.clone()>
                                <td data-label="Activation"><a href=href data-test="running-link"><code>{short}</code></a></td>
                                <td data-label="Runs">{what}</td>
                                <td data-label="Status"><span class=format!("pill {}", a.status)>{a.status.clone()}</span></td>
                                <td data-label="Hosts" data-test="running-hosts">{hosts}</td>
                                <td data-label="Since">{since}</td>
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

#[component]
fn DisabledList(
    kind: &'static str,
    path: &'static str,
    test: &'static str,
    rows: Vec<Disabled>,
    total: u64,
) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted">{format!("No {kind} is disabled.")}</p> }.into_any();
    }
    let more =
        (total > rows.len() as u64).then(|| format!("… and {} more", total - rows.len() as u64));
    view! {
        <ul class="disabled-list">
            {rows.into_iter().map(|r| {
                let href = format!("{path}/{}", r.id);
                let reason = r.reason.clone().unwrap_or_else(|| "no reason recorded".into());
                view! {
                    <li data-test=test data-id=r.id.clone()>
                        <a href=href data-test="disabled-link"><code>{r.id.clone()}</code></a>
                        " " <span class="muted">{r.application.clone()}</span>
                        {r.disabled_at.map(|t| view! { " " <span class="muted">{format!("since {}", time(t))}</span> })}
                        <p class="reason" data-test="disabled-reason">{reason}</p>
                    </li>
                }
            }).collect_view()}
        </ul>
        {more.map(|m| view! { <p class="hint">{m}</p> })}
    }
    .into_any()
}

/// Fill colours of the chart's error types, in legend order; the summed rest is grey.
const PALETTE: [&str; 8] = [
    "#c2352b", "#2557d6", "#d48a00", "#18794e", "#7b3fb8", "#0b8a9e", "#b8457b", "#5d6575",
];
const OTHER_COLOUR: &str = "#aab1be";

const CHART_W: f64 = 720.0;
const CHART_H: f64 = 200.0;
const PLOT_LEFT: f64 = 36.0;
const PLOT_TOP: f64 = 8.0;
const PLOT_BOTTOM: f64 = 176.0;

/// Failures per hour as stacked bars (one colour per error type), in inline SVG: readable
/// without JavaScript, each bar segment titled for pointers and screen readers.
#[component]
fn FailureChartView(chart: FailureChart) -> impl IntoView {
    let peak = chart.peak();
    let total = chart.total();
    let colour = |error_type: &str| -> &'static str {
        if error_type == OTHER_ERROR_TYPES {
            return OTHER_COLOUR;
        }
        chart
            .error_types
            .iter()
            .position(|t| t.error_type == error_type)
            .and_then(|i| PALETTE.get(i).copied())
            .unwrap_or(OTHER_COLOUR)
    };
    let hours = chart.hours.len().max(1) as f64;
    let slot = (CHART_W - PLOT_LEFT) / hours;
    let bar = (slot * 0.75).max(1.0);
    let plot_h = PLOT_BOTTOM - PLOT_TOP;
    let scale = if peak == 0 { 0.0 } else { plot_h / peak as f64 };
    let bars = chart
        .hours
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let x = PLOT_LEFT + i as f64 * slot + (slot - bar) / 2.0;
            let label = format!(
                "{}–{} UTC",
                h.start.format("%H:%M"),
                (h.start + chrono::Duration::hours(1)).format("%H:%M")
            );
            let mut y = PLOT_BOTTOM;
            let segments = h
                .by_error_type
                .iter()
                .map(|t| {
                    let height = t.count as f64 * scale;
                    y -= height;
                    let title = format!("{label}: {} × {}", t.count, t.error_type);
                    view! {
                        <rect x=format!("{x:.1}") y=format!("{y:.1}") width=format!("{bar:.1}")
                            height=format!("{height:.1}") fill=colour(&t.error_type)
                            data-error-type=t.error_type.clone() data-count=t.count.to_string()>
                            <title>{title}</title>
                        </rect>
                    }
                })
                .collect_view();
            let tick = (i % 3 == 0).then(|| {
                view! {
                    <text class="tick" x=format!("{:.1}", x + bar / 2.0) y=format!("{:.1}", PLOT_BOTTOM + 16.0)
                        text-anchor="middle">{h.start.format("%H:%M").to_string()}</text>
                }
            });
            view! {
                <g data-test="chart-hour" data-start=h.start.to_rfc3339() data-total=h.total.to_string()>
                    <title>{format!("{label}: {} failures", h.total)}</title>
                    {segments}
                </g>
                {tick}
            }
        })
        .collect_view();
    let summary = if total == 0 {
        "No failure in the last 24 hours.".to_owned()
    } else {
        format!("{total} failures in the last 24 hours, at most {peak} in one hour.")
    };
    let legend = chart
        .error_types
        .iter()
        .map(|t| {
            let href = if t.error_type == OTHER_ERROR_TYPES {
                "/failures".to_owned()
            } else {
                crate::components::failures::href("/failures", &[("error_type", &t.error_type)])
            };
            view! {
                <li data-test="legend-item" data-error-type=t.error_type.clone() data-count=t.count.to_string()>
                    <span class="swatch" style=format!("background: {}", colour(&t.error_type))></span>
                    <a href=href>{t.error_type.clone()}</a> " " <span class="muted">{t.count.to_string()}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <figure class="chart" data-test="failure-chart" data-total=total.to_string() data-peak=peak.to_string()>
            <svg viewBox=format!("0 0 {CHART_W} {CHART_H}") role="img" aria-labelledby="chart-title chart-desc"
                preserveAspectRatio="xMidYMid meet">
                <title id="chart-title">"Failures per hour over the last 24 hours, by error type"</title>
                <desc id="chart-desc">{summary.clone()}</desc>
                <line class="axis" x1=PLOT_LEFT.to_string() y1=PLOT_BOTTOM.to_string()
                    x2=CHART_W.to_string() y2=PLOT_BOTTOM.to_string() />
                <text class="tick" x=(PLOT_LEFT - 6.0).to_string() y=(PLOT_TOP + 8.0).to_string()
                    text-anchor="end">{peak.to_string()}</text>
                <text class="tick" x=(PLOT_LEFT - 6.0).to_string() y=PLOT_BOTTOM.to_string()
                    text-anchor="end">"0"</text>
                {bars}
            </svg>
            <figcaption>
                <p class="muted">{summary}</p>
                <ul class="legend">{legend}</ul>
            </figcaption>
        </figure>
    }
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
