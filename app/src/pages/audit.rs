//! The audit log: who changed what, when and from where, newest first, each entry with the
//! fields it changed (secrets masked) and its cause. Filters are in the URL
//! (`?actor=&entity_type=&entity_id=&action=&from=&to=`), so an entity's page links to its
//! history; the same filters export every matching entry as JSON lines.

use crate::{
    api::audit::{AuditQuery, AuditView, list_audit},
    components::when::Ago,
};
use am_domain::{
    audit::Change,
    links::{self, href, text},
    read::audit::{AuditFilter, AuditRecord},
};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use serde_json::Value;

/// Entity kinds the log records, for the filter's suggestions.
const ENTITY_TYPES: [&str; 11] = [
    "application",
    "pool",
    "data_queue",
    "agent",
    "launch_setting",
    "schedule_group",
    "operation",
    "notification",
    "user",
    "token",
    "broker",
];

fn pairs(q: &AuditQuery) -> [(&'static str, &str); 6] {
    let f = &q.filter;
    [
        ("actor", text(&f.actor)),
        ("entity_type", text(&f.entity_type)),
        ("entity_id", text(&f.entity_id)),
        ("action", text(&f.action)),
        ("from", text(&f.from)),
        ("to", text(&f.to)),
    ]
}

fn query_href(q: &AuditQuery, after: &str) -> String {
    let mut p = pairs(q).to_vec();
    p.push(("after", after));
    href("/audit", &p)
}

#[component]
pub fn AuditPage() -> impl IntoView {
    let query_map = use_query_map();
    let query = Memo::new(move |_| {
        let m = query_map.get();
        let get = |k: &str| m.get(k).filter(|v| !v.is_empty());
        AuditQuery {
            filter: AuditFilter {
                actor: get("actor"),
                entity_type: get("entity_type"),
                entity_id: get("entity_id"),
                action: get("action"),
                from: get("from"),
                to: get("to"),
            },
            after: get("after").unwrap_or_default(),
        }
    });
    let data = Resource::new(move || query.get(), list_audit);
    view! {
        <section data-test="audit">
            <div class="page-head"><h1>"Audit log"</h1></div>
            <p class="muted">
                "Every change, run, replay and login: who, when, from where, and the fields it "
                "changed. Changes the manager made itself name the part that made them (breaker, "
                "a node's publication) and why."
            </p>
            {move || view! { <Filters q=query.get() /> }}
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <List q=query.get_untracked() v /> }.into_any(),
                    Err(e) => view! { <p class="error" data-test="audit-error">{e.to_string()}</p> }.into_any(),
                })}
            </Transition>
        </section>
    }
}

#[component]
fn Filters(q: AuditQuery) -> impl IntoView {
    let export = href("/api/v1/audit/export", &pairs(&q));
    let q = q.filter;
    view! {
        <form method="get" action="/audit" class="filters" data-test="filters">
            <label>
                <span class="label">"Who"</span>
                <input name="actor" value=text(&q.actor).to_owned() placeholder="user or breaker" data-test="filter-actor" />
            </label>
            <label>
                <span class="label">"Entity kind"</span>
                <input name="entity_type" value=text(&q.entity_type).to_owned() list="audit-entity-types"
                    placeholder="launch_setting" data-test="filter-entity-type" />
                <datalist id="audit-entity-types">
                    {ENTITY_TYPES.map(|t| view! { <option value=t></option> }).collect_view()}
                </datalist>
            </label>
            <label>
                <span class="label">"Entity id"</span>
                <input name="entity_id" value=text(&q.entity_id).to_owned() placeholder="id" data-test="filter-entity-id" />
            </label>
            <label>
                <span class="label">"Action"</span>
                <input name="action" value=text(&q.action).to_owned() placeholder="update, login…" data-test="filter-action" />
            </label>
            <label>
                <span class="label">"From (UTC)"</span>
                <input name="from" value=text(&q.from).to_owned() placeholder="2030-01-31T02:00" data-test="filter-from" />
            </label>
            <label>
                <span class="label">"To (UTC)"</span>
                <input name="to" value=text(&q.to).to_owned() placeholder="2030-01-31" data-test="filter-to" />
            </label>
            <button type="submit" data-test="filter-apply">"Filter"</button>
            <a href="/audit" data-test="filter-clear">"Clear"</a>
            <a href=export data-test="audit-export" download="audit.jsonl">"Export (JSON lines)"</a>
        </form>
    }
}

#[component]
fn List(q: AuditQuery, v: AuditView) -> impl IntoView {
    if v.page.entries.is_empty() {
        return view! { <p class="muted" data-test="no-audit">"No entry matches."</p> }.into_any();
    }
    let more = v.page.next.map(|n| query_href(&q, &n.to_string()));
    let first = (!q.after.is_empty()).then(|| query_href(&q, ""));
    let now = v.now;
    view! {
        <div class="table-wrap">
            <table class="list audit" data-test="audit-table">
                <thead><tr>
                    <th>"When"</th><th>"Who"</th><th>"What"</th><th>"Changes"</th>
                </tr></thead>
                <tbody>
                    {v.page.entries.into_iter().map(|e| view! { <Row e now /> }).collect_view()}
                </tbody>
            </table>
        </div>
        <nav class="pager" aria-label="Pages">
            {first.map(|h| view! { <a href=h data-test="page-first">"← Newest"</a> })}
            {more.map(|h| view! { <a href=h data-test="page-next">"Older →"</a> })}
        </nav>
    }
    .into_any()
}

#[component]
fn Row(e: AuditRecord, now: chrono::DateTime<chrono::Utc>) -> impl IntoView {
    let changes = e.changes();
    let page = links::entity(&e.entity_type, &e.entity_id);
    let history = links::history(&e.entity_type, &e.entity_id);
    let entity = format!("{} {}", e.entity_type.replace('_', " "), e.entity_id);
    view! {
        <tr data-test="audit-row" data-id=e.id.to_string() data-action=e.action.clone()
            data-actor=e.actor.clone() data-entity=format!("{}:{}", e.entity_type, e.entity_id)>
            <td data-label="When"><Ago at=e.at now /></td>
            <td data-label="Who">
                <span data-test="audit-actor">{e.actor.clone()}</span>
                {e.address.clone().map(|a| view! { <br /><span class="muted" data-test="audit-address">{a}</span> })}
            </td>
            <td data-label="What">
                <code class="nowrap" data-test="audit-action">{e.action.clone()}</code>
                " "
                {match page {
                    Some(p) => view! { <a href=p data-test="audit-entity">{entity}</a> }.into_any(),
                    None => view! { <span data-test="audit-entity">{entity}</span> }.into_any(),
                }}
                " " <a href=history class="muted small" data-test="audit-history">"history"</a>
                {e.cause.clone().map(|c| view! {
                    <br /><span class="message" data-test="audit-cause">{format!("why: {c}")}</span>
                })}
            </td>
            <td data-label="Changes"><Changes changes /></td>
        </tr>
    }
}

/// A value as one short line: strings bare, the rest as compact JSON.
fn short(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "—".to_owned(),
        other => other.to_string(),
    }
}

#[component]
fn Changes(changes: Vec<Change>) -> impl IntoView {
    if changes.is_empty() {
        return view! { <span class="muted">"—"</span> }.into_any();
    }
    view! {
        <ul class="changes" data-test="audit-changes">
            {changes.into_iter().map(|c| {
                // The whole entity (created or deleted) is shown folded.
                if c.path.is_empty() {
                    let (label, value) = match (&c.before, &c.after) {
                        (None, Some(a)) => ("created", a),
                        (Some(b), None) => ("deleted", b),
                        (_, Some(a)) => ("now", a),
                        (_, None) => return view! { <li></li> }.into_any(),
                    };
                    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
                    return view! {
                        <li data-test="audit-change" data-path="">
                            <details><summary>{label}</summary><pre>{pretty}</pre></details>
                        </li>
                    }.into_any();
                }
                let before = c.before.as_ref().map(short);
                let after = c.after.as_ref().map(short);
                view! {
                    <li data-test="audit-change" data-path=c.path.clone()>
                        <code>{c.path.clone()}</code> ": "
                        {before.map(|b| view! { <del data-test="audit-before">{b}</del> " → " })}
                        {match after {
                            Some(a) => view! { <ins data-test="audit-after">{a}</ins> }.into_any(),
                            None => view! { <span class="muted">"removed"</span> }.into_any(),
                        }}
                    </li>
                }.into_any()
            }).collect_view()}
        </ul>
    }
    .into_any()
}
