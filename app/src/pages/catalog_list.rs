//! The list page of one kind of catalog entity: filtered and paginated on the server, the
//! filters in the URL so a view can be shared and reloaded, readable without JavaScript.
//! Launch settings and schedule groups have their actions on each row for operators (*Run
//! now*, *Disable…* asked first, *Enable*), and the same on the rows they select, asked with
//! the count.

use crate::{
    api::catalog::{Cell, Kind, ListQuery, ListView, catalog_list},
    components::{
        bulk_switch::{BulkBar, Bulks},
        ids::Id,
        row_switch::{RowOutcomes, RowSwitch},
        when::Ago,
    },
};
use am_domain::roles::Operation;
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

fn query_string(q: &ListQuery, page: u64) -> String {
    let page = if page > 1 {
        page.to_string()
    } else {
        String::new()
    };
    am_domain::links::href(
        "",
        &[
            ("q", &q.q),
            ("application", &q.application),
            ("page", &page),
        ],
    )
}

#[component]
pub fn CatalogListPage(kind: Kind) -> impl IntoView {
    let query_map = use_query_map();
    let query = Memo::new(move |_| {
        let m = query_map.get();
        ListQuery {
            q: m.get("q").unwrap_or_default(),
            application: m.get("application").unwrap_or_default(),
            page: m
                .get("page")
                .and_then(|p| p.parse().ok())
                .unwrap_or(1)
                .max(1),
        }
    });
    let data = Resource::new(move || query.get(), move |q| catalog_list(kind, q));
    // What the rows' actions did, kept while the list is read again after each.
    let outcomes = RowOutcomes::default();
    let changed = Callback::new(move |()| data.refetch());
    let bulks = Bulks::new(kind, outcomes, changed);
    Effect::new(move |_| {
        if data.get().is_some() {
            outcomes.settle();
            bulks.settle();
        }
    });

    view! {
        <section data-test=format!("list-{}", kind.path().trim_start_matches('/'))>
            <div class="page-head">
                <h1>{kind.title()}</h1>
                <Suspense fallback=|| ()>
                    {move || {
                        data.get()
                            .and_then(Result::ok)
                            .filter(|v| v.role.may(Operation::EditCatalog))
                            .map(|_| {
                                view! {
                                    <a class="button primary" href=format!("{}/new", kind.path()) data-test="new">
                                        "New"
                                    </a>
                                }
                            })
                    }}
                </Suspense>
            </div>
            <form method="get" action=kind.path() class="filters" data-test="filters">
                <label>
                    <span class="label">"Search"</span>
                    <input
                        type="search"
                        name="q"
                        data-test="filter-q"
                        placeholder="id or title"
                        value=move || query.get().q
                    />
                </label>
                {kind
                    .scoped()
                    .then(|| {
                        view! {
                            <label>
                                <span class="label">"Application"</span>
                                <select name="application" data-test="filter-application">
                                    <option value="">"all"</option>
                                    <Suspense fallback=|| ()>
                                        {move || {
                                            let current = query.get().application;
                                            data.get()
                                                .and_then(Result::ok)
                                                .map(|v| {
                                                    v.applications
                                                        .into_iter()
                                                        .map(|a| {
                                                            let selected = a == current;
                                                            view! { <option value=a.clone() selected=selected>{a.clone()}</option> }
                                                        })
                                                        .collect_view()
                                                })
                                        }}
                                    </Suspense>
                                </select>
                            </label>
                        }
                    })}
                <button type="submit" data-test="filter-apply">"Filter"</button>
            </form>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || {
                    data.get()
                        .map(|r| match r {
                            Ok(v) => view! { <ListTable kind view=v query=query.get() outcomes changed bulks /> }.into_any(),
                            Err(e) => view! { <p class="error" data-test="list-error">{e.to_string()}</p> }.into_any(),
                        })
                }}
            </Suspense>
        </section>
    }
}

#[component]
fn ListTable(
    kind: Kind,
    view: ListView,
    query: ListQuery,
    outcomes: RowOutcomes,
    changed: Callback<()>,
    bulks: Bulks,
) -> impl IntoView {
    let pages = view.total.div_ceil(view.page_size).max(1);
    let first = (view.page - 1) * view.page_size + 1;
    let last = (first + view.rows.len() as u64).saturating_sub(1);
    let summary = if view.total == 0 {
        "Nothing matches.".to_owned()
    } else {
        format!("{first}–{last} of {}", view.total)
    };
    let prev = (view.page > 1).then(|| query_string(&query, view.page - 1));
    let next = (view.page < pages).then(|| query_string(&query, view.page + 1));
    let now = view.now;
    let actions = view.role.may(Operation::Toggle) && kind.switch_key("").is_some();
    let selection = bulks.selection;
    let page_ids: Vec<String> = view.rows.iter().map(|r| r.id.clone()).collect();
    let select_page = actions.then(|| {
        let ids = page_ids.clone();
        view! {
            <input type="checkbox" class="row-select" data-test="select-page"
                aria-label="Select every row of this page"
                prop:checked=move || selection.all(&page_ids)
                on:change=move |ev| selection.set_all(&ids, event_target_checked(&ev)) />
        }
    });
    view! {
        {actions.then(|| view! { <BulkBar bulks /> })}
        <div class="table-wrap">
            <table class="list" data-test="list">
                <thead>
                    <tr>
                        <th>{select_page} "Id"</th>
                        {kind.columns().iter().map(|c| view! { <th>{*c}</th> }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {view
                        .rows
                        .into_iter()
                        .map(|r| {
                            view! {
                                <tr data-test="list-row" data-id=r.id.clone()>
                                    <td data-label="Id">
                                        {actions.then(|| {
                                            let (id, label) = (r.id.clone(), format!("Select {}", r.id));
                                            let shown = id.clone();
                                            view! {
                                                <input type="checkbox" class="row-select" data-test="row-select" aria-label=label
                                                    prop:checked=move || selection.has(&shown)
                                                    on:change=move |ev| selection.set(&id, event_target_checked(&ev)) />
                                            }
                                        })}
                                        <a href=r.href data-test="list-link"><Id id=r.id.clone() /></a>
                                        {r.title.map(|t| view! { <br /><span class="muted" data-test="list-title">{t}</span> })}
                                        // Beneath the id, not in a column of their own: the
                                        // table keeps its width at 1024 px.
                                        {kind.switch_key(&r.id).zip(r.enabled).filter(|_| actions).map(|(key, enabled)| view! {
                                            <RowSwitch key id=r.id.clone() enabled outcomes changed />
                                        })}
                                    </td>
                                    {r.cells.into_iter().zip(kind.columns()).map(|(c, h)| view! {
                                        <td data-label=*h>{cell(c, now)}</td>
                                    }).collect_view()}
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
        <nav class="pager" aria-label="Pages">
            <span class="muted" data-test="list-summary">{summary}</span>
            {prev.map(|q| view! { <a href=format!("{}{q}", kind.path()) data-test="page-prev">"← Previous"</a> })}
            <span data-test="page-number">{format!("page {} of {pages}", view.page)}</span>
            {next.map(|q| view! { <a href=format!("{}{q}", kind.path()) data-test="page-next">"Next →"</a> })}
        </nav>
    }
}

fn cell(c: Cell, now: DateTime<Utc>) -> AnyView {
    match c {
        Cell::Text(t) => t.into_any(),
        Cell::Two(main, second) => {
            view! { {main} <br /><span class="muted">{second}</span> }.into_any()
        }
        Cell::Badge { value: None, .. } => view! { <span class="muted">"—"</span> }.into_any(),
        Cell::Badge {
            value: Some(v),
            at,
            note,
        } => view! {
            <span class=format!("pill {v}") data-test="list-badge">{v.clone()}</span>
            {at.map(|t| view! { " " <Ago at=t now /> })}
            {note.map(|n| view! { <br /><span class="muted">{n}</span> })}
        }
        .into_any(),
        Cell::Time(Some(t), _) => view! { <Ago at=t now /> }.into_any(),
        Cell::Time(None, text) => view! { <span class="muted">{text}</span> }.into_any(),
    }
}
