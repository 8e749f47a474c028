//! The failure-log drill-down: `/failures` (launch settings) → `/failures/{ls}` (its
//! activations) → `/failures/{ls}/{activation}` (its hosts) → `/failures/{ls}/{activation}/
//! {host}` (the failures). Every level shows its counts by error type; the filters (error
//! type, host, time range) stay in the URL from level to level, and `view=failures` lists the
//! failures of a level instead of its groups. Readable without JavaScript.

use crate::{
    api::failures::{FailuresQuery, FailuresView, Level, failure_logs},
    components::{
        failures::{
            ErrorTypeCounts, FailureCards, KindLinks, href, kind_noun, level_path, shown_kind,
        },
        ids::ShortId,
        when::{Ago, local_input},
    },
};
use am_domain::{
    dashboard::failure_kind,
    display,
    read::failures::{ActivationFailures, HostFailures, LaunchSettingFailures},
};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

/// The filters every level carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Carry {
    /// The launch-setting filter of the first level (deeper levels have it in the path).
    launch_setting: String,
    application: String,
    error_type: String,
    host: String,
    from: String,
    to: String,
    kind: String,
}

impl Carry {
    fn of(q: &FailuresQuery) -> Self {
        Self {
            launch_setting: if q.launch_setting.is_empty() {
                q.only_launch_setting.clone()
            } else {
                String::new()
            },
            application: q.application.clone(),
            error_type: q.error_type.clone(),
            host: q.host.clone(),
            from: q.from.clone(),
            to: q.to.clone(),
            kind: q.kind.clone(),
        }
    }

    /// `path` with these filters and `extra` parameters.
    fn link(&self, path: &str, extra: &[(&str, &str)]) -> String {
        // Deeper levels have the launch setting in their path.
        let ls = if path == "/failures" {
            self.launch_setting.as_str()
        } else {
            ""
        };
        let mut pairs: Vec<(&str, &str)> = vec![
            ("launch_setting", ls),
            ("application", &self.application),
            ("error_type", &self.error_type),
            ("host", &self.host),
            ("from", &self.from),
            ("to", &self.to),
            ("kind", &self.kind),
        ];
        for (k, v) in extra {
            pairs.retain(|(pk, _)| pk != k);
            pairs.push((*k, *v));
        }
        href(path, &pairs)
    }
}

#[component]
pub fn FailuresPage() -> impl IntoView {
    let params = use_params_map();
    let query_map = use_query_map();
    let query = Memo::new(move |_| {
        let p = params.get();
        let m = query_map.get();
        let get = |k: &str| m.get(k).unwrap_or_default();
        FailuresQuery {
            launch_setting: p.get("ls").unwrap_or_default(),
            only_launch_setting: get("launch_setting"),
            activation: p.get("activation").unwrap_or_default(),
            at_host: p.get("host").unwrap_or_default(),
            application: get("application"),
            error_type: get("error_type"),
            host: get("host"),
            from: get("from"),
            to: get("to"),
            kind: get("kind"),
            after: get("after"),
            page: get("page").parse().unwrap_or(1).max(1),
            list: get("view") == "failures",
        }
    });
    let data = Resource::new(move || query.get(), failure_logs);
    view! {
        <section data-test="failure-logs">
            <div class="page-head"><h1>"Failure logs"</h1></div>
            {move || view! { <Crumbs q=query.get() /> }}
            {move || view! { <FilterForm q=query.get() /> }}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <LevelView q=query.get_untracked() v /> }.into_any(),
                    Err(e) => view! { <p class="error" data-test="failures-error">{e.to_string()}</p> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn Crumbs(q: FailuresQuery) -> impl IntoView {
    let c = Carry::of(&q);
    let mut crumbs: Vec<(String, String, &'static str)> = vec![(
        c.link("/failures", &[]),
        "All launch settings".into(),
        "crumb-root",
    )];
    if !q.launch_setting.is_empty() {
        crumbs.push((
            c.link(&level_path(&q.launch_setting, "", ""), &[]),
            q.launch_setting.clone(),
            "crumb-launch-setting",
        ));
    }
    if !q.activation.is_empty() {
        crumbs.push((
            c.link(&level_path(&q.launch_setting, &q.activation, ""), &[]),
            format!(
                "activation {}",
                crate::api::activations::short_id(&q.activation)
            ),
            "crumb-activation",
        ));
    }
    if !q.at_host.is_empty() {
        crumbs.push((
            c.link(
                &level_path(&q.launch_setting, &q.activation, &q.at_host),
                &[],
            ),
            format!("host {}", q.at_host),
            "crumb-host",
        ));
    }
    let last = crumbs.len() - 1;
    view! {
        <nav class="crumbs" aria-label="Drill-down" data-test="crumbs">
            {crumbs.into_iter().enumerate().map(|(i, (link, label, test))| {
                let sep = (i > 0).then_some(" › ");
                if i == last {
                    view! { {sep}<span aria-current="page" data-test=test>{label}</span> }.into_any()
                } else {
                    view! { {sep}<a href=link data-test=test>{label}</a> }.into_any()
                }
            }).collect_view()}
        </nav>
    }
}

#[component]
fn FilterForm(q: FailuresQuery) -> impl IntoView {
    let path = level_path(&q.launch_setting, &q.activation, &q.at_host);
    let at_host = !q.at_host.is_empty();
    let clear = if q.list {
        href(&path, &[("view", "failures")])
    } else {
        path.clone()
    };
    let top = q.launch_setting.is_empty();
    view! {
        <form method="get" action=path class="filters" data-test="filters">
            {top.then(|| view! {
                <label>
                    <span class="label">"Launch setting"</span>
                    <input name="launch_setting" value=q.only_launch_setting.clone() data-test="filter-launch-setting" placeholder="any (exact id)" />
                </label>
            })}
            {top.then(|| view! {
                <label>
                    <span class="label">"Application"</span>
                    <input name="application" value=q.application.clone() data-test="filter-application" placeholder="any" />
                </label>
            })}
            <label>
                <span class="label">"Error type"</span>
                <input name="error_type" value=q.error_type.clone() data-test="filter-error-type" placeholder="any" />
            </label>
            {(!at_host).then(|| view! {
                <label>
                    <span class="label">"Host"</span>
                    <input name="host" value=q.host.clone() data-test="filter-host" placeholder="any" />
                </label>
            })}
            <label>
                <span class="label">"Kind"</span>
                <select name="kind" data-test="filter-kind">
                    {[("", "failures"), (failure_kind::RETRIED, "retried attempts"),
                      (failure_kind::UNAVAILABLE, "temporarily unavailable"), (failure_kind::ANY, "every report")]
                        .into_iter()
                        .map(|(value, label)| view! { <option value=value selected=q.kind == value>{label}</option> })
                        .collect_view()}
                </select>
            </label>
            <label>
                <span class="label">"From (UTC)"</span>
                <input type="datetime-local" step="1" name="from" value=local_input(&q.from) data-test="filter-from" />
            </label>
            <label>
                <span class="label">"to"</span>
                <input type="datetime-local" step="1" name="to" value=local_input(&q.to) data-test="filter-to" />
            </label>
            {q.list.then(|| view! { <input type="hidden" name="view" value="failures" /> })}
            <button type="submit" data-test="filter-apply">"Filter"</button>
            <a href=clear data-test="filter-clear">"Clear"</a>
        </form>
    }
}

#[component]
fn LevelView(q: FailuresQuery, v: FailuresView) -> impl IntoView {
    let c = Carry::of(&q);
    let path = level_path(&q.launch_setting, &q.activation, &q.at_host);
    let view_param = if q.list { "failures" } else { "" };
    let type_link = {
        let (c, path) = (c.clone(), path.clone());
        Callback::new(move |t: String| c.link(&path, &[("error_type", &t), ("view", view_param)]))
    };
    let kind_link = {
        let (c, path) = (c.clone(), path.clone());
        Callback::new(move |k: String| {
            let k = if k == failure_kind::FAILED {
                String::new()
            } else {
                k
            };
            c.link(&path, &[("kind", &k), ("view", view_param)])
        })
    };
    let at_host = !q.at_host.is_empty();
    let level_name = match &v.level {
        Level::LaunchSettings { .. } => "launch-settings",
        Level::Activations { .. } => "activations",
        Level::Hosts { .. } => "hosts",
        Level::Failures { .. } => "failures",
    };
    let scope = match &v.level {
        Level::LaunchSettings { .. } => "on the launch settings of this page",
        _ => "",
    };
    view! {
        <div class="card level-summary" data-test="level" data-level=level_name>
            <div class="level-head">
                <p>
                    <strong data-test="level-total">{v.total}</strong>
                    {format!(" {} {scope}", kind_noun(shown_kind(&q.kind), v.total))}
                    {(!q.error_type.is_empty()).then(|| view! {
                        " of type " <code>{q.error_type.clone()}</code> " · "
                        <a href=c.link(&path, &[("error_type", ""), ("view", view_param)]) data-test="clear-type">"all types"</a>
                    })}
                </p>
                {(!at_host).then(|| {
                    let grouped = c.link(&path, &[]);
                    let listed = c.link(&path, &[("view", "failures")]);
                    let group_label = match (q.launch_setting.is_empty(), q.activation.is_empty()) {
                        (true, _) => "by launch setting",
                        (false, true) => "by activation",
                        (false, false) => "by host",
                    };
                    view! {
                        <p class="tabs">
                            <a href=grouped class:active=!q.list data-test="view-grouped">{group_label}</a>
                            <a href=listed class:active=q.list data-test="view-failures">"failures"</a>
                        </p>
                    }
                })}
            </div>
            <KindLinks kinds=v.kinds current=q.kind.clone() link=kind_link />
            <ErrorTypeCounts counts=v.by_error_type.clone() current=q.error_type.clone() link=type_link />
            <p class="quick">
                <span class="muted">"Time: "</span>
                {v.quick_ranges.iter().map(|(label, from)| view! {
                    <a href=c.link(&path, &[("from", from), ("to", ""), ("view", view_param)]) data-test="quick-range">{label.clone()}</a>
                    " "
                }).collect_view()}
                {(!q.from.is_empty() || !q.to.is_empty()).then(|| view! {
                    <a href=c.link(&path, &[("from", ""), ("to", ""), ("view", view_param)]) data-test="clear-time">"any time"</a>
                })}
            </p>
        </div>
        {match v.level {
            Level::LaunchSettings { rows, next } => view! { <LaunchSettingsTable c=c.clone() rows next now=v.now /> }.into_any(),
            Level::Activations { activations, rows, page, has_more } => view! {
                <ActivationsTable c=c.clone() ls=q.launch_setting.clone() activations rows page has_more />
            }.into_any(),
            Level::Hosts { activation_status, rows } => view! {
                <HostsTable c=c.clone() ls=q.launch_setting.clone() activation=q.activation.clone() activation_status rows />
            }.into_any(),
            Level::Failures { rows, next } => {
                let more = next.map(|n| c.link(&path, &[("after", &n.to_string()), ("view", view_param)]));
                let first = (!q.after.is_empty()).then(|| c.link(&path, &[("view", view_param)]));
                view! {
                    <FailureCards rows />
                    <nav class="pager" aria-label="Pages">
                        {first.map(|h| view! { <a href=h data-test="page-first">"← Newest"</a> })}
                        {more.map(|h| view! { <a href=h data-test="page-next">"Older →"</a> })}
                    </nav>
                }.into_any()
            }
        }}
    }
}

fn counts_link(c: &Carry, path: String) -> Callback<String, String> {
    let c = c.clone();
    Callback::new(move |t: String| c.link(&path, &[("error_type", &t)]))
}

#[component]
fn LaunchSettingsTable(
    c: Carry,
    rows: Vec<LaunchSettingFailures>,
    next: Option<String>,
    now: chrono::DateTime<chrono::Utc>,
) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" data-test="no-launch-settings">"No launch setting has failures that match."</p> }.into_any();
    }
    let more = next.map(|n| c.link("/failures", &[("after", &n)]));
    view! {
        <div class="table-wrap">
            <table class="list" data-test="launch-setting-failures">
                <thead><tr>
                    <th>"Launch setting"</th><th>"Last error"</th><th>"Failures"</th><th>"By error type"</th><th>"First"</th>
                </tr></thead>
                <tbody>
                    {rows.into_iter().map(|r| {
                        let path = level_path(&r.launch_setting, "", "");
                        view! {
                            <tr data-test="launch-setting-row" data-id=r.launch_setting.clone()>
                                <td data-label="Launch setting">
                                    <a href=c.link(&path, &[]) data-test="drill">{r.launch_setting.clone()}</a>
                                    <br /><span class="muted">{match (r.application.clone(), r.agent.clone()) {
                                        (Some(a), Some(g)) => format!("{a}/{g}"),
                                        _ => "not in the catalog any more".into(),
                                    }}</span>
                                </td>
                                <td data-label="Last error" class="error-cell">
                                    {r.last_error.clone().map(|e| {
                                        let at = level_path(&r.launch_setting, &e.activation, &e.host);
                                        view! {
                                            <a href=c.link(&at, &[]) data-test="last-error"><strong>{e.error_type.clone()}</strong></a>
                                            " " <span class="muted">{format!("on {}", e.host)}</span> " " <Ago at=e.at now />
                                            <span class="message" data-test="last-message">{e.message.clone()}</span>
                                        }
                                    })}
                                </td>
                                <td data-label="Failures" data-test="row-total">{r.total}</td>
                                <td data-label="By error type"><ErrorTypeCounts counts=r.by_error_type current=c.error_type.clone() link=counts_link(&c, path) max=4 /></td>
                                <td data-label="First">{display::time_or_dash(r.first_at)}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
        <nav class="pager" aria-label="Pages">
            {more.map(|h| view! { <a href=h data-test="page-next">"Next launch settings →"</a> })}
        </nav>
    }
    .into_any()
}

#[component]
fn ActivationsTable(
    c: Carry,
    ls: String,
    activations: u64,
    rows: Vec<ActivationFailures>,
    page: u64,
    has_more: bool,
) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" data-test="no-activations">"No activation of this launch setting has failures that match."</p> }.into_any();
    }
    let base = level_path(&ls, "", "");
    let prev = (page > 1).then(|| c.link(&base, &[("page", &(page - 1).to_string())]));
    let next = has_more.then(|| c.link(&base, &[("page", &(page + 1).to_string())]));
    view! {
        <div class="table-wrap">
            <table class="list" data-test="activation-failures">
                <thead><tr>
                    <th>"Activation"</th><th>"Status"</th><th>"Failures"</th><th>"Hosts"</th><th>"By error type"</th><th>"First"</th><th>"Last"</th>
                </tr></thead>
                <tbody>
                    {rows.into_iter().map(|r| {
                        let activation = r.activation.to_string();
                        let path = level_path(&ls, &activation, "");
                        let host_links = r.hosts.iter().map(|h| {
                            let href = Carry { host: String::new(), ..c.clone() }.link(&level_path(&ls, &activation, &h.host), &[]);
                            view! { <a class="tag" href=href data-test="host-link">{format!("{} ({})", h.host, h.count)}</a>" " }
                        }).collect_view();
                        view! {
                            <tr data-test="activation-row" data-id=activation.clone()>
                                <td data-label="Activation">
                                    <ShortId id=activation.clone() href=c.link(&path, &[]) test="drill" />
                                    <br /><span class="muted">{display::time_or_dash(r.created_at)}</span>
                                    <br /><a class="muted" href=format!("/activations/{activation}")>"timeline"</a>
                                </td>
                                <td data-label="Status">{match r.status.clone() {
                                    Some(s) => view! { <span class=format!("pill {s}")>{s.clone()}</span> }.into_any(),
                                    None => view! { <span class="muted">"gone"</span> }.into_any(),
                                }}</td>
                                <td data-label="Failures" data-test="row-total">{r.total}</td>
                                <td data-label="Hosts">{host_links}</td>
                                <td data-label="By error type"><ErrorTypeCounts counts=r.by_error_type current=c.error_type.clone() link=counts_link(&c, path) max=4 /></td>
                                <td data-label="First">{display::time_or_dash(r.first_at)}</td>
                                <td data-label="Last">{display::time_or_dash(r.last_at)}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
        <nav class="pager" aria-label="Pages">
            <span class="muted">{format!("{activations} activations with failures")}</span>
            {prev.map(|h| view! { <a href=h data-test="page-prev">"← Previous"</a> })}
            <span data-test="page-number">{format!("page {page}")}</span>
            {next.map(|h| view! { <a href=h data-test="page-next">"Next →"</a> })}
        </nav>
    }
    .into_any()
}

#[component]
fn HostsTable(
    c: Carry,
    ls: String,
    activation: String,
    activation_status: Option<String>,
    rows: Vec<HostFailures>,
) -> impl IntoView {
    let timeline = format!("/activations/{activation}");
    view! {
        <p>
            "Activation "
            {activation_status.map(|s| view! { <span class=format!("pill {s}") data-test="activation-status">{s.clone()}</span> " " })}
            <a href=timeline data-test="activation-timeline">"timeline per host"</a>
        </p>
        {if rows.is_empty() {
            view! { <p class="muted" data-test="no-hosts">"No host of this activation reported failures that match."</p> }.into_any()
        } else {
            let inner = Carry { host: String::new(), ..c.clone() };
            view! {
                <div class="table-wrap">
                    <table class="list" data-test="host-failures">
                        <thead><tr>
                            <th>"Host"</th><th>"Dispatch"</th><th>"Failures"</th><th>"By error type"</th><th>"First"</th><th>"Last"</th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|r| {
                                let path = level_path(&ls, &activation, &r.host);
                                view! {
                                    <tr data-test="host-row" data-id=r.host.clone()>
                                        <td data-label="Host"><a href=inner.link(&path, &[]) data-test="drill">{r.host.clone()}</a></td>
                                        <td data-label="Dispatch">{match r.status.clone() {
                                            Some(s) => view! { <span class=format!("pill {s}")>{s.clone()}</span> }.into_any(),
                                            None => view! { <span class="muted">"—"</span> }.into_any(),
                                        }}</td>
                                        <td data-label="Failures" data-test="row-total">{r.total}</td>
                                        <td data-label="By error type"><ErrorTypeCounts counts=r.by_error_type current=c.error_type.clone() link=counts_link(&inner, path) max=6 /></td>
                                        <td data-label="First">{display::time_or_dash(r.first_at)}</td>
                                        <td data-label="Last">{display::time_or_dash(r.last_at)}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
    }
}
