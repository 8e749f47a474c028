//! Activations: the list, filtered on the server with the filters in the URL
//! (`?launch_setting=&group=&application=&host=&status=&error_type=&from=&to=&page=`), and one activation
//! with its member runs, its timeline per host and its failures. Both read without JavaScript.

use crate::{
    api::activations::{
        ActivationDetailView, ActivationsQuery, ActivationsView, activation_detail,
        list_activations,
    },
    components::{
        failures::{ErrorTypeCounts, FailureCards, enc, href, kind_noun, level_path},
        ids::{Id, ShortId},
        live::LiveRefresh,
        operation::OperationProgress,
        rerun::RerunPanel,
        run_actions::{InterruptButton, RerunButton},
        when::{Ago, local_input},
    },
};
use am_domain::{
    dashboard::cut,
    display,
    links::text,
    read::activations::{ActivationFilter, ActivationPage, ActivationSummary, HostTimeline},
};
use bulk::{InterruptMatching, RerunMatching};

mod bulk;

/// Characters of an activation's error the list shows; its page has the whole text.
const LIST_MESSAGE: usize = 160;
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

fn query_href(q: &ActivationsQuery, page: u64) -> String {
    query_href_with(q, page, "")
}

/// The list's address with the bulk operation `operation` started from it: shown above the
/// list while the address says so, so a reload or a live refresh keeps it in sight.
pub(crate) fn with_operation(q: &ActivationsQuery, operation: &str) -> String {
    query_href_with(q, q.page, operation)
}

fn query_href_with(q: &ActivationsQuery, page: u64, operation: &str) -> String {
    let page = if page > 1 {
        page.to_string()
    } else {
        String::new()
    };
    let f = &q.filter;
    href(
        "/activations",
        &[
            ("launch_setting", text(&f.launch_setting)),
            ("group", text(&f.group)),
            ("application", text(&f.application)),
            ("host", text(&f.host)),
            ("status", text(&f.status)),
            ("error_type", text(&f.error_type)),
            ("from", text(&f.from)),
            ("to", text(&f.to)),
            (
                "top_level",
                if f.top_level == Some(true) {
                    "true"
                } else {
                    ""
                },
            ),
            ("page", &page),
            ("operation", operation),
        ],
    )
}

#[component]
pub fn ActivationsPage() -> impl IntoView {
    let query_map = use_query_map();
    let query = Memo::new(move |_| {
        let m = query_map.get();
        let get = |k: &str| m.get(k).filter(|v| !v.is_empty());
        ActivationsQuery {
            filter: ActivationFilter {
                launch_setting: get("launch_setting"),
                group: get("group"),
                application: get("application"),
                host: get("host"),
                status: get("status"),
                error_type: get("error_type"),
                from: get("from"),
                to: get("to"),
                top_level: (get("top_level").as_deref() == Some("true")).then_some(true),
            },
            page: get("page").and_then(|p| p.parse().ok()).unwrap_or(1).max(1),
        }
    });
    let data = Resource::new(move || query.get(), list_activations);
    let operation = Memo::new(move |_| query_map.get().get("operation").filter(|o| !o.is_empty()));

    view! {
        <section data-test="activations">
            <div class="page-head">
                <h1>"Activations"</h1>
                <LiveRefresh fingerprint=runs_moved refresh=Callback::new(move |_| data.refetch()) />
            </div>
            {move || operation.get().map(|id| view! {
                <div class="card" data-test="bulk-operation">
                    <h2>"Bulk action started here"</h2>
                    <OperationProgress id />
                </div>
            })}
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| {
                    let q = query.get_untracked();
                    match r {
                        Ok(v) => view! {
                            <Filters q=q.clone() view=v.clone() />
                            {(v.can_operate && !v.page.items.is_empty()).then(|| view! {
                                <RerunMatching q=q.clone() />
                                <InterruptMatching q=q.clone() />
                            })}
                            <ActivationsTable q view=v />
                        }.into_any(),
                        Err(e) => view! {
                            <Filters q view=ActivationsView {
                                page: ActivationPage { items: vec![], total: 0, page: 1, limit: 0, has_more: false },
                                applications: vec![], launch_settings: vec![], groups: vec![], statuses: vec![],
                                can_operate: false, now: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH } />
                            <p class="error" data-test="list-error">{e.to_string()}</p>
                        }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// What the activations list shows moved: a run changed status or a new one began.
fn runs_moved(d: &am_domain::dashboard::Dashboard) -> String {
    let counts: Vec<String> = d.activations.iter().map(|c| c.count.to_string()).collect();
    let running: Vec<&str> = d.running.iter().map(|r| r.id.as_str()).collect();
    format!("{} {}", counts.join(","), running.join(","))
}

#[component]
fn Filters(q: ActivationsQuery, view: ActivationsView) -> impl IntoView {
    let q = q.filter;
    let option = |value: String, current: &str| {
        let selected = value == current;
        view! { <option value=value.clone() selected=selected>{value.clone()}</option> }
    };
    view! {
        <form method="get" action="/activations" class="filters" data-test="filters">
            <label>
                <span class="label">"Launch setting"</span>
                <input name="launch_setting" list="activation-ls" value=text(&q.launch_setting).to_owned()
                    data-test="filter-launch-setting" placeholder="id" />
                <datalist id="activation-ls">
                    {view.launch_settings.iter().map(|l| view! { <option value=l.clone() /> }).collect_view()}
                </datalist>
            </label>
            <label>
                <span class="label">"Group"</span>
                <input name="group" list="activation-groups" value=text(&q.group).to_owned() data-test="filter-group" placeholder="id" />
                <datalist id="activation-groups">
                    {view.groups.iter().map(|g| view! { <option value=g.clone() /> }).collect_view()}
                </datalist>
            </label>
            <label>
                <span class="label">"Application"</span>
                <select name="application" data-test="filter-application">
                    <option value="">"all"</option>
                    {view.applications.iter().map(|a| option(a.clone(), text(&q.application))).collect_view()}
                </select>
            </label>
            <label>
                <span class="label">"Host"</span>
                <input name="host" value=text(&q.host).to_owned() data-test="filter-host" placeholder="host name" />
            </label>
            <label>
                <span class="label">"Status"</span>
                <select name="status" data-test="filter-status">
                    <option value="">"any"</option>
                    {view.statuses.iter().map(|s| option(s.clone(), text(&q.status))).collect_view()}
                </select>
            </label>
            <label>
                <span class="label">"Error type"</span>
                <input name="error_type" value=text(&q.error_type).to_owned() data-test="filter-error-type" placeholder="any" />
            </label>
            <label>
                <span class="label">"Created from (UTC)"</span>
                <input type="datetime-local" step="1" name="from" value=local_input(text(&q.from)) data-test="filter-from" />
            </label>
            <label>
                <span class="label">"to"</span>
                <input type="datetime-local" step="1" name="to" value=local_input(text(&q.to)) data-test="filter-to" />
            </label>
            <label class="check">
                <input type="checkbox" name="top_level" value="true" checked=q.top_level == Some(true) data-test="filter-top-level" />
                " runs only (a group once, its members not again)"
            </label>
            <button type="submit" data-test="filter-apply">"Filter"</button>
            <a href="/activations" data-test="filter-clear">"Clear"</a>
        </form>
    }
}

/// What ran: the launch setting, or the group for a group activation.
fn what(a: &ActivationSummary) -> AnyView {
    match (&a.launch_setting, &a.group, a.position) {
        (Some(ls), Some(g), Some(p)) => view! {
            <a href=format!("/launch-settings/{ls}")><Id id=ls.clone() /></a>
            <br /><span class="muted">{format!("member {} of ", p + 1)}<a href=format!("/schedule-groups/{g}")><Id id=g.clone() /></a></span>
        }
        .into_any(),
        (Some(ls), _, _) => view! { <a href=format!("/launch-settings/{ls}")><Id id=ls.clone() /></a> }.into_any(),
        (None, Some(g), _) => view! {
            <span class="muted">"group "</span><a href=format!("/schedule-groups/{g}")><Id id=g.clone() /></a>
        }
        .into_any(),
        (None, None, _) => view! { <span class="muted">"—"</span> }.into_any(),
    }
}

fn failures_cell(a: &ActivationSummary) -> AnyView {
    match (&a.launch_setting, a.failures) {
        (_, 0) => view! { <span class="muted">"0"</span> }.into_any(),
        (Some(ls), n) => view! {
            <a href=level_path(ls, &a.id.to_string(), "") data-test="activation-failures">{n}</a>
        }
        .into_any(),
        (None, n) => view! { <span data-test="activation-failures">{n}</span> }.into_any(),
    }
}

#[component]
fn ActivationsTable(q: ActivationsQuery, view: ActivationsView) -> impl IntoView {
    let page = view.page;
    if page.items.is_empty() {
        return view! {
            <p class="muted" data-test="no-activations">
                <span data-test="activations-total" data-count="0">"No activation matches."</span>
            </p>
        }
        .into_any();
    }
    let prev = (page.page > 1).then(|| query_href(&q, page.page - 1));
    let next = page.has_more.then(|| query_href(&q, page.page + 1));
    let now = view.now;
    let can_operate = view.can_operate;
    view! {
        <p class="muted" data-test="activations-total" data-count=page.total.to_string()>
            {if page.total == 1 { "1 activation matches".to_owned() } else { format!("{} activations match", page.total) }}
        </p>
        <div class="table-wrap">
            <table class="list" data-test="activation-list">
                <thead>
                    <tr>
                        <th>"Activation"</th><th>"Runs"</th><th>"Status"</th>
                        <th>"Created"</th><th>"Hosts"</th><th>"Failures"</th>
                    </tr>
                </thead>
                <tbody>
                    {page.items.into_iter().map(|a| view! { <ActivationLine a now can_operate /> }).collect_view()}
                </tbody>
            </table>
        </div>
        <nav class="pager" aria-label="Pages">
            {prev.map(|h| view! { <a href=h data-test="page-prev">"← Newer"</a> })}
            <span data-test="page-number">{format!("page {}", page.page)}</span>
            {next.map(|h| view! { <a href=h data-test="page-next">"Older →"</a> })}
        </nav>
    }
    .into_any()
}

#[component]
fn ActivationLine(
    a: ActivationSummary,
    now: chrono::DateTime<chrono::Utc>,
    /// Whether the row offers *Interrupt* or *Re-run*.
    can_operate: bool,
) -> impl IntoView {
    let id = a.id.to_string();
    let href = format!("/activations/{id}");
    view! {
        <tr data-test="activation-row" data-id=id.clone() data-status=a.status.clone()>
            <td data-label="Activation"><ShortId id=id.clone() href=href /></td>
            <td data-label="Runs">{what(&a)}</td>
            <td data-label="Status" class="error-cell">
                <span class=format!("pill {}", a.status) data-test="activation-status">{a.status.clone()}</span>
                {a.duration(now).map(|d| view! { " " <span class="muted nowrap" data-test="activation-duration">{display::duration(d)}</span> })}
                {a.error.clone().map(|e| view! {
                    <span class="message" data-test="activation-error">{cut(&e, LIST_MESSAGE)}</span>
                })}
                {can_operate.then(|| row_action(&a))}
            </td>
            <td data-label="Created">
                <Ago at=a.created_at now />
                <br /><span class="muted" data-test="activation-trigger">
                    {a.trigger.clone()}{a.requested_by.clone().map(|u| format!(" by {u}"))}
                </span>
            </td>
            <td data-label="Hosts">{a.hosts.join(", ")}</td>
            <td data-label="Failures">{failures_cell(&a)}</td>
        </tr>
    }
}

/// *Interrupt* on an active row; *Re-run* on an ended one that did not succeed (a member run
/// re-runs its group from that member).
fn row_action(a: &ActivationSummary) -> Option<AnyView> {
    if a.is_active() {
        Some(view! { <InterruptButton id=a.id.to_string() /> }.into_any())
    } else if a.is_rerunnable() {
        Some(view! { <RerunButton id=a.id.to_string() /> }.into_any())
    } else {
        None
    }
}

#[component]
pub fn ActivationPage() -> impl IntoView {
    let params = use_params_map();
    let id = Memo::new(move |_| params.get().get("id").unwrap_or_default());
    let data = Resource::new(move || id.get(), activation_detail);
    view! {
        <section data-test="activation">
            <p class="crumbs"><a href="/activations">"Activations"</a>" › "<code>{move || id.get()}</code></p>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <ActivationDetail v /> }.into_any(),
                    Err(e) => view! { <p class="error" data-test="activation-error">{e.to_string()}</p> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn ActivationDetail(v: ActivationDetailView) -> impl IntoView {
    let ActivationDetailView {
        detail,
        rerun,
        can_operate,
        now,
    } = v;
    let a = detail.activation;
    let id = a.id.to_string();
    let failures = detail.failures;
    let drill = a.launch_setting.clone().map(|ls| level_path(&ls, &id, ""));
    let none = || "—".to_owned();
    let counts_link = {
        let drill = drill.clone();
        Callback::new(move |t: String| match &drill {
            Some(p) => href(p, &[("error_type", &t)]),
            None => "#".into(),
        })
    };
    view! {
        <h1>"Activation " <ShortId id=id.clone() /></h1>
        <div class="card">
            <dl class="facts wide">
                <div><dt>"Status"</dt><dd><span class=format!("pill {}", a.status) data-test="activation-status">{a.status.clone()}</span></dd></div>
                <div><dt>"Runs"</dt><dd data-test="activation-what">{what(&a)}</dd></div>
                {a.parent.map(|p| view! {
                    <div><dt>"Group activation"</dt><dd><a href=format!("/activations/{p}") data-test="activation-parent"><code>{p.to_string()}</code></a></dd></div>
                })}
                <div><dt>"Application"</dt><dd>{a.application.clone().unwrap_or_else(|| "—".into())}</dd></div>
                <div><dt>"Trigger"</dt><dd data-test="activation-trigger">{a.trigger.clone()}{a.requested_by.clone().map(|u| format!(" by {u}"))}</dd></div>
                <div><dt>"Created"</dt><dd>{display::time(a.created_at)}</dd></div>
                <div><dt>"Started"</dt><dd>{display::time_or_dash(a.started_at)}</dd></div>
                <div><dt>"Finished"</dt><dd>{display::time_or_dash(a.finished_at)}</dd></div>
                <div><dt>"Duration"</dt><dd>{a.duration(now).map(display::duration).unwrap_or_else(none)}</dd></div>
                <div><dt>"Id"</dt><dd><code>{id.clone()}</code></dd></div>
            </dl>
            {a.error.clone().map(|e| view! { <p class="banner bad" data-test="activation-error-text">{e}</p> })}
            {rerun.map(|choices| view! { <RerunPanel activation=id.clone() choices /> })}
            {(can_operate && a.is_active()).then(|| view! {
                <div class="actions" data-test="interrupt-panel"><InterruptButton id=id.clone() /></div>
            })}
            <p class="links">
                {a.launch_setting.clone().map(|ls| view! {
                    <a href=href("/activations", &[("launch_setting", &ls)])>"Other activations of this launch setting"</a>
                })}
            </p>
        </div>
        {(!detail.members.is_empty()).then(|| view! {
            <h2 class="section">"Member runs"</h2>
            <div class="table-wrap">
                <table class="list" data-test="members">
                    <thead><tr><th>"#"</th><th>"Activation"</th><th>"Launch setting"</th><th>"Status"</th><th>"Duration"</th><th>"Hosts"</th><th>"Failures"</th></tr></thead>
                    <tbody>
                        {detail.members.iter().map(|m| view! {
                            <tr data-test="member-row" data-status=m.status.clone()>
                                <td data-label="#">{m.position.map(|p| p + 1)}</td>
                                <td data-label="Activation"><ShortId id=m.id.to_string() href=format!("/activations/{}", m.id) /></td>
                                <td data-label="Launch setting">{m.launch_setting.clone()}</td>
                                <td data-label="Status"><span class=format!("pill {}", m.status)>{m.status.clone()}</span></td>
                                <td data-label="Duration">{m.duration(now).map(display::duration).unwrap_or_else(none)}</td>
                                <td data-label="Hosts">{m.hosts.join(", ")}</td>
                                <td data-label="Failures">{failures_cell(m)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        })}
        <h2 class="section">"Timeline"</h2>
        <div class="timeline" data-test="timeline">
            {detail.timeline.into_iter().map(|l| view! { <Lane lane=l launch_setting=a.launch_setting.clone() activation=id.clone() /> }).collect_view()}
        </div>
        <h2 class="section">"Failures"</h2>
        <div class="card" data-test="activation-failures-card">
            <p><strong data-test="failures-total">{failures.total}</strong>{if failures.total == 1 { " failure" } else { " failures" }}
                {drill.clone().filter(|_| failures.total > 0).map(|p| view! {
                    " · " <a href=href(&p, &[]) data-test="failures-drill">"by host"</a>
                    " · " <a href=href(&p, &[("view", "failures")]) data-test="failures-all">"all failures"</a>
                })}
            </p>
            <ErrorTypeCounts counts=failures.by_error_type current=String::new() link=counts_link />
            <Besides kinds=failures.kinds drill=drill.clone() />
        </div>
        <FailureCards rows=failures.entries />
        {failures.next.is_some().then(|| view! { <p class="muted">"Only the newest are shown; the drill-down has them all."</p> })}
    }
}

/// The reports of an activation that are not failures, each a link to them in the drill-down
/// (when the activation has a launch setting to drill into).
#[component]
fn Besides(kinds: am_domain::failing::KindCounts, drill: Option<String>) -> impl IntoView {
    use am_domain::dashboard::failure_kind;
    let items: Vec<(&'static str, u64)> = [failure_kind::RETRIED, failure_kind::UNAVAILABLE]
        .into_iter()
        .map(|k| (k, kinds.of(k)))
        .filter(|(_, n)| *n > 0)
        .collect();
    (!items.is_empty()).then(|| view! {
        <p class="muted" data-test="failures-besides">"Not failures: "
            {items.into_iter().enumerate().map(|(i, (k, n))| {
                let sep = (i > 0).then_some(" · ");
                let label = format!("{n} {}", kind_noun(k, n));
                match &drill {
                    Some(p) => view! { {sep}<a href=href(p, &[("kind", k), ("view", "failures")]) data-test="kind" data-kind=k data-count=n.to_string()>{label}</a> }.into_any(),
                    None => view! { {sep}<span data-test="kind" data-kind=k data-count=n.to_string()>{label}</span> }.into_any(),
                }
            }).collect_view()}
        </p>
    })
}

#[component]
fn Lane(lane: HostTimeline, launch_setting: Option<String>, activation: String) -> impl IntoView {
    let host = lane.host.clone();
    let title = host.clone().unwrap_or_else(|| "Manager".into());
    let failures_link = match (&launch_setting, &host) {
        (Some(ls), Some(h)) if lane.failures > 0 => Some(level_path(ls, &activation, h)),
        _ => None,
    };
    view! {
        <div class="card lane" data-test="lane" data-host=host.clone().unwrap_or_default()>
            <div class="lane-head">
                <h3>{title}</h3>
                {failures_link.map(|l| view! {
                    <a href=l data-test="lane-failures">{am_domain::display::plural(lane.failures, "failure")}</a>
                })}
            </div>
            {(!lane.runs.is_empty()).then(|| view! {
                <div class="table-wrap">
                    <table class="list runs" data-test="runs">
                        <thead><tr>
                            <th>"Attempt"</th><th>"Status"</th><th>"Dispatched"</th><th>"Started"</th>
                            <th title="Last heartbeat">"Heartbeat"</th><th>"Finished"</th><th>"Messages"</th>
                        </tr></thead>
                        <tbody>
                            {lane.runs.iter().map(|r| view! {
                                <tr data-test="run" data-status=r.status.clone()>
                                    <td data-label="Attempt">{r.attempt}<br /><span class="muted">{format!("token {}", r.fencing_token)}</span></td>
                                    <td data-label="Status">
                                        <span class=format!("pill {}", r.status) data-test="run-status">{r.status.clone()}</span>
                                        {r.error.clone().map(|e| view! { <br /><span class="error">{e}</span> })}
                                        {r.stop_requested_at.map(|t| view! { <br /><span class="muted">{format!("stop requested {}", display::time(t))}</span> })}
                                    </td>
                                    <td data-label="Dispatched">{display::time(r.dispatched_at)}
                                        <br /><span class="muted">{match r.accepted_at {
                                            Some(t) => format!("accepted {}", display::time(t)),
                                            None => "not accepted".to_owned(),
                                        }}</span></td>
                                    <td data-label="Started">{display::time_or_dash(r.started_at)}</td>
                                    <td data-label="Last heartbeat" data-test="run-heartbeat">{display::time_or_dash(r.last_heartbeat_at)}</td>
                                    <td data-label="Finished">{display::time_or_dash(r.finished_at)}</td>
                                    <td data-label="Messages" data-test="run-counters">
                                        {format!("{} processed", r.processed)}<br />
                                        <span class="muted">{format!("{} failed · {} retried · {} dead-lettered", r.failed, r.retried, r.dead_lettered)}</span>
                                    </td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            })}
            <ol class="events" data-test="events">
                {lane.events.into_iter().map(|e| {
                    let (kind, reason) = e.kind_and_reason();
                    let (class, reason) = (format!("event {kind}"), reason.map(str::to_owned));
                    let kind = kind.to_owned();
                    view! {
                        <li data-test="event" data-kind=kind.clone() class=class>
                            <time title=display::time(e.at)>{display::clock(e.at)}</time>
                            <span class="kind">{kind.clone()}</span>
                            {reason.map(|r| view! { <span class="reason" data-test="event-reason">{r}</span> })}
                            {e.detail.map(|d| view! { <span class="muted detail">{d}</span> })}
                        </li>
                    }
                }).collect_view()}
            </ol>
        </div>
    }
}

/// A link to the activations of a launch setting, for other pages.
pub fn activations_of(launch_setting: &str) -> String {
    format!("/activations?launch_setting={}", enc(launch_setting))
}
