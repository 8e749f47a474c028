//! Dead letters: `/dead-letters` lists them newest first with the filters in the URL
//! (`?launch_setting=&data_queue=&error_type=&status=&from=&to=&after=`), readable without
//! JavaScript; operators tick some and replay or delete them, or all matching, as a background
//! operation whose progress shows on the page (the list reloads when it ends).
//! `/dead-letters/{id}` opens one: its headers, its body, its launch setting's policy and the
//! failures reported for its message, with the same buttons.

use crate::{
    api::dead_letters::{
        BulkAction, DeadLetterView, DeadLettersBulk, DeadLettersQuery, DeadLettersView,
        dead_letter, list_dead_letters,
    },
    api::operations::operation,
    components::{
        failures::{FailureCards, href},
        live::LiveRefresh,
        operation::OperationProgress,
        replay::ReplayConfirm,
    },
    error::UiError,
};
use am_domain::{
    catalog::DeadLetterPolicy,
    display,
    links::text,
    read::dead_letters::{BodyEncoding, DeadLetterFilter},
    status::DeadLetterStatus,
};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};
use std::{collections::BTreeSet, time::Duration};

mod delete;
mod row;
mod shown;

use delete::DeleteConfirm;
use row::{Row, Status};

/// How often the page checks whether its operation ended.
const POLL: Duration = Duration::from_secs(1);

fn query_href(q: &DeadLettersQuery, after: &str) -> String {
    let f = &q.filter;
    href(
        "/dead-letters",
        &[
            ("launch_setting", text(&f.launch_setting)),
            ("data_queue", text(&f.data_queue)),
            ("error_type", text(&f.error_type)),
            ("status", text(&f.status)),
            ("from", text(&f.from)),
            ("to", text(&f.to)),
            ("after", after),
        ],
    )
}

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".into())
}

/// An error as a sentence: validation errors with their messages (a bulk request's mistakes
/// are about the selection, not about a form field).
fn explain(e: &UiError) -> String {
    match e {
        UiError::Invalid(errors) => errors
            .iter()
            .map(|f| {
                if f.path.is_empty() {
                    f.message.clone()
                } else {
                    format!("{}: {}", f.path, f.message)
                }
            })
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

/// In the browser: once `bulk` started an operation, checks it every second and calls `done`
/// when it ended, and again whenever a replay's outcomes changed, until none is awaited.
fn when_finished(bulk: ServerAction<DeadLettersBulk>, done: impl Fn() + Clone + 'static) {
    Effect::new(move |_| {
        let Some(Ok(id)) = bulk.value().get() else {
            return;
        };
        let finished = StoredValue::new(false);
        let seen = StoredValue::new(None);
        let done = done.clone();
        if let Ok(handle) = set_interval_with_handle(
            move || {
                if finished.get_value() {
                    return;
                }
                let id = id.clone();
                let done = done.clone();
                leptos::task::spawn_local(async move {
                    let Ok(op) = operation(id).await else {
                        return;
                    };
                    if op.is_active() || finished.get_value() {
                        return;
                    }
                    let outcomes = op.replay_outcomes;
                    if outcomes.is_none_or(|o| o.sent == 0) {
                        finished.set_value(true);
                    }
                    if seen.get_value() != Some(outcomes) {
                        seen.set_value(Some(outcomes));
                        done();
                    }
                });
            },
            POLL,
        ) {
            on_cleanup(move || handle.clear());
        }
    });
}

/// The operation a button started, or why it did not start.
#[component]
fn BulkOutcome(bulk: ServerAction<DeadLettersBulk>) -> impl IntoView {
    view! {
        {move || bulk.value().get().map(|r| match r {
            Ok(id) => view! { <div data-test="dl-operation"><OperationProgress id /></div> }.into_any(),
            Err(e) => view! { <p class="banner bad" data-test="dl-bulk-error">{explain(&e)}</p> }.into_any(),
        })}
        {move || bulk.pending().get().then(|| view! { <p class="muted">"Starting…"</p> })}
    }
}

#[component]
pub fn DeadLettersPage() -> impl IntoView {
    let query_map = use_query_map();
    let query = Memo::new(move |_| {
        let m = query_map.get();
        let get = |k: &str| m.get(k).filter(|v| !v.is_empty());
        DeadLettersQuery {
            filter: DeadLetterFilter {
                launch_setting: get("launch_setting"),
                data_queue: get("data_queue"),
                error_type: get("error_type"),
                status: get("status"),
                from: get("from"),
                to: get("to"),
            },
            after: get("after").unwrap_or_default(),
        }
    });
    // Bumped when an operation this page started ended, to show its effect.
    let reload = RwSignal::new(0u32);
    let data = Resource::new(
        move || (query.get(), reload.get()),
        |(q, _)| list_dead_letters(q),
    );
    let selected = RwSignal::new(BTreeSet::<i64>::new());
    let bulk = ServerAction::<DeadLettersBulk>::new();
    when_finished(bulk, move || {
        selected.set(BTreeSet::new());
        reload.update(|n| *n += 1);
    });
    view! {
        <section data-test="dead-letters">
            <div class="page-head">
                <h1>"Dead letters"</h1>
                <LiveRefresh fingerprint=|d| d.dead_letters.to_string()
                    refresh=Callback::new(move |_| reload.update(|n| *n += 1)) />
            </div>
            <p class="muted">
                "Messages a launch setting gave up on. A replay sends them back to that launch setting's own "
                "subscription (not to the data queue's other subscribers), starting again at attempt 1."
            </p>
            {move || view! { <Filters q=query.get() /> }}
            <BulkOutcome bulk />
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <List q=query.get_untracked() v selected bulk /> }.into_any(),
                    Err(e) => view! { <p class="error" data-test="dl-error">{explain(&e)}</p> }.into_any(),
                })}
            </Transition>
        </section>
    }
}

#[component]
fn Filters(q: DeadLettersQuery) -> impl IntoView {
    let q = q.filter;
    let status = text(&q.status).to_owned();
    let option = move |value: &'static str, label: &'static str| {
        view! { <option value=value selected=status == value>{label}</option> }
    };
    view! {
        <form method="get" action="/dead-letters" class="filters" data-test="filters">
            <label>
                <span class="label">"Launch setting"</span>
                <input name="launch_setting" value=text(&q.launch_setting).to_owned() data-test="filter-launch-setting" placeholder="any (exact id)" />
            </label>
            <label>
                <span class="label">"Data queue"</span>
                <input name="data_queue" value=text(&q.data_queue).to_owned() data-test="filter-data-queue" placeholder="any" />
            </label>
            <label>
                <span class="label">"Error type"</span>
                <input name="error_type" value=text(&q.error_type).to_owned() data-test="filter-error-type" placeholder="any" />
            </label>
            <label>
                <span class="label">"Status"</span>
                <select name="status" data-test="filter-status">
                    {option("", "any")}
                    {DeadLetterStatus::ALL.iter().map(|s| option(s.as_str(), s.as_str())).collect_view()}
                </select>
            </label>
            <label>
                <span class="label">"Received from (UTC)"</span>
                <input type="datetime-local" name="from" value=text(&q.from).to_owned() data-test="filter-from" />
            </label>
            <label>
                <span class="label">"to"</span>
                <input type="datetime-local" name="to" value=text(&q.to).to_owned() data-test="filter-to" />
            </label>
            <button type="submit" data-test="filter-apply">"Filter"</button>
            <a href="/dead-letters" data-test="filter-clear">"Clear"</a>
        </form>
    }
}

/// The buttons of an operator: selected ones (when some are ticked) or all matching. A replay
/// and a delete each start only after a question that says how many (a replay's also what
/// could go wrong, see `components::replay`), asked twice when the search has no filter.
#[component]
fn BulkButtons(
    q: DeadLettersQuery,
    selected: RwSignal<BTreeSet<i64>>,
    bulk: ServerAction<DeadLettersBulk>,
    /// Whether "all matching" can take anything (the search does not show only replayed ones).
    matching: bool,
) -> impl IntoView {
    // `Some(all)` while a delete waits for its confirmation.
    let confirming = RwSignal::new(None::<bool>);
    // `Some(all)` while a replay waits for its confirmation.
    let replaying = RwSignal::new(None::<bool>);
    let ids_of = move |all: bool| -> Vec<i64> {
        if all {
            vec![]
        } else {
            selected.get_untracked().into_iter().collect()
        }
    };
    let none = move || selected.with(BTreeSet::is_empty);
    let count = move || selected.with(BTreeSet::len);
    view! {
        <div class="bulk-actions dl-bulk" data-test="dl-bulk">
            <button class="primary" data-test="dl-replay-selected" disabled=none
                on:click=move |_| { confirming.set(None); replaying.set(Some(false)); }>
                {move || format!("Replay selected ({})", count())}
            </button>
            {matching.then(|| view! {
                <button data-test="dl-replay-matching"
                    on:click=move |_| { confirming.set(None); replaying.set(Some(true)); }>
                    "Replay all matching"
                </button>
            })}
            <button class="danger" data-test="dl-delete-selected" disabled=none
                on:click=move |_| { replaying.set(None); confirming.set(Some(false)); }>
                {move || format!("Delete selected ({})", count())}
            </button>
            {matching.then(|| view! {
                <button class="danger" data-test="dl-delete-matching"
                    on:click=move |_| { replaying.set(None); confirming.set(Some(true)); }>
                    "Delete all matching"
                </button>
            })}
        </div>
        {
            let q = q.clone();
            move || replaying.get().map(|all| view! {
                <ReplayConfirm ids=ids_of(all) query=q.clone() bulk
                    on_close=Callback::new(move |_| replaying.set(None)) />
            })
        }
        {move || confirming.get().map(|all| view! {
            <DeleteConfirm ids=ids_of(all) query=q.clone() bulk
                on_close=Callback::new(move |_| confirming.set(None)) />
        })}
    }
}

#[component]
fn List(
    q: DeadLettersQuery,
    v: DeadLettersView,
    selected: RwSignal<BTreeSet<i64>>,
    bulk: ServerAction<DeadLettersBulk>,
) -> impl IntoView {
    let page = v.page;
    let more = page.next.map(|n| query_href(&q, &n.to_string()));
    let first = (!q.after.is_empty()).then(|| query_href(&q, ""));
    let dead_on_page: Vec<i64> = page
        .items
        .iter()
        .filter(|r| r.is_dead())
        .map(|r| r.id)
        .collect();
    let can_operate = v.can_operate;
    // The dead letter whose own *Replay* waits for its confirmation, under its row.
    let replaying = RwSignal::new(None::<i64>);
    let matching =
        page.total > 0 && q.filter.status.as_deref() != Some(DeadLetterStatus::Replayed.as_str());
    let all_ticked = {
        let ids = dead_on_page.clone();
        move || !ids.is_empty() && selected.with(|s| ids.iter().all(|i| s.contains(i)))
    };
    let toggle_all = {
        let ids = dead_on_page.clone();
        move |ev: leptos::ev::Event| {
            let on = event_target_checked(&ev);
            selected.update(|s| {
                for i in &ids {
                    if on {
                        s.insert(*i);
                    } else {
                        s.remove(i);
                    }
                }
            });
        }
    };
    view! {
        <p data-test="dl-summary">
            <strong data-test="dl-total">{page.total}</strong>
            {if page.total == 1 { " dead letter matches" } else { " dead letters match" }}
        </p>
        {(can_operate && page.total > 0).then(|| view! { <BulkButtons q=q.clone() selected bulk matching /> })}
        {if page.items.is_empty() {
            view! { <p class="muted" data-test="no-dead-letters">"No dead letter matches."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="list dead-letters" data-test="dead-letter-table">
                        <thead><tr>
                            {can_operate.then(|| view! {
                                <th><input type="checkbox" aria-label="Select every dead one on this page"
                                    data-test="dl-select-all" prop:checked=all_ticked.clone() on:change=toggle_all.clone() /></th>
                            })}
                            <th>"Dead letter"</th><th>"Launch setting"</th><th>"Error"</th><th>"Attempts"</th>
                            <th>"Body"</th><th>"Status"</th>
                        </tr></thead>
                        <tbody>
                            {page.items.into_iter().map(|r| view! { <Row r q=q.clone() can_operate selected bulk replaying /> }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
        <nav class="pager" aria-label="Pages">
            {first.map(|h| view! { <a href=h data-test="page-first">"← Newest"</a> })}
            {more.map(|h| view! { <a href=h data-test="page-next">"Older →"</a> })}
        </nav>
    }
}

#[component]
pub fn DeadLetterPage() -> impl IntoView {
    let params = use_params_map();
    let id = Memo::new(move |_| params.get().get("id").unwrap_or_default());
    let reload = RwSignal::new(0u32);
    let data = Resource::new(move || (id.get(), reload.get()), |(id, _)| dead_letter(id));
    let bulk = ServerAction::<DeadLettersBulk>::new();
    when_finished(bulk, move || reload.update(|n| *n += 1));
    view! {
        <section data-test="dead-letter">
            <nav class="crumbs"><a href="/dead-letters" data-test="crumb-dead-letters">"Dead letters"</a></nav>
            <BulkOutcome bulk />
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <Detail v bulk /> }.into_any(),
                    Err(e) => view! {
                        <h1>"Dead letter"</h1>
                        <p class="error" data-test="dl-error">{explain(&e)}</p>
                    }.into_any(),
                })}
            </Transition>
        </section>
    }
}

#[component]
fn Detail(v: DeadLetterView, bulk: ServerAction<DeadLettersBulk>) -> impl IntoView {
    let DeadLetterView {
        detail: d,
        can_operate,
    } = v;
    let r = d.letter.clone();
    let id = r.id;
    let confirming = RwSignal::new(false);
    let replaying = RwSignal::new(false);
    let delete = move |_| {
        confirming.set(false);
        bulk.dispatch(DeadLettersBulk {
            action: BulkAction::Delete,
            ids: vec![id],
            query: DeadLettersQuery::default(),
            canary: None,
            rate_per_second: None,
        });
    };
    let encoding = match d.body.encoding {
        BodyEncoding::Json => "JSON, pretty-printed",
        BodyEncoding::Text => "text (UTF-8)",
        BodyEncoding::Base64 => "binary, shown in base64",
    };
    let (headers, properties) = (shown::pairs(&d.headers), shown::pairs(&d.properties));
    let ls_link = r
        .launch_setting
        .clone()
        .map(|ls| format!("/launch-settings/{}", crate::components::failures::enc(&ls)));
    view! {
        <div class="page-head">
            <h1>{format!("Dead letter #{id}")}</h1>
            <Status r=r.clone() />
        </div>
        {(can_operate && r.is_dead()).then(|| view! {
            <div class="actions dl-actions" data-test="dl-actions">
                <button class="primary" data-test="dl-replay"
                    on:click=move |_| { confirming.set(false); replaying.set(true); }>"Replay"</button>
                <button class="danger" data-test="dl-delete"
                    on:click=move |_| { replaying.set(false); confirming.set(true); }>"Delete"</button>
                {move || replaying.get().then(|| view! {
                    <ReplayConfirm ids=vec![id] query=DeadLettersQuery::default() bulk
                        on_close=Callback::new(move |_| replaying.set(false)) />
                })}
                {move || confirming.get().then(|| view! {
                    <span class="confirm" data-test="dl-confirm">
                        "Delete this dead letter? This cannot be undone."
                        <button class="danger" data-test="dl-confirm-delete" on:click=delete>"Delete"</button>
                        <button data-test="dl-cancel-delete" data-esc="close" on:click=move |_| confirming.set(false)>"Cancel"</button>
                    </span>
                })}
            </div>
        })}
        <div class="card">
            <dl class="facts" data-test="dl-facts">
                <div><dt>"Launch setting"</dt><dd data-test="dl-launch-setting">{match (r.launch_setting.clone(), ls_link) {
                    (Some(ls), Some(link)) => view! { <a href=link>{ls}</a> }.into_any(),
                    _ => view! { <span class="muted">"unknown"</span> }.into_any(),
                }}</dd></div>
                <div><dt>"Data queue"</dt><dd>{or_dash(r.data_queue.clone())}</dd></div>
                <div><dt>"Message id"</dt><dd><code data-test="dl-message-id">{or_dash(r.message_id.clone())}</code></dd></div>
                <div><dt>"Error type"</dt><dd data-test="dl-error-type">{or_dash(r.error_type.clone())}</dd></div>
                <div><dt>"Attempts"</dt><dd data-test="dl-attempts">{r.attempts}</dd></div>
                <div><dt>"First failure"</dt><dd>{display::time_or_dash(r.first_failure_at)}</dd></div>
                <div><dt>"Last failure"</dt><dd>{display::time_or_dash(r.last_failure_at)}</dd></div>
                <div><dt>"Host"</dt><dd>{or_dash(r.host.clone())}</dd></div>
                <div><dt>"Received"</dt><dd>{display::time(r.received_at)}</dd></div>
                <div><dt>"Routing key"</dt><dd><code>{or_dash(d.routing_key.clone())}</code></dd></div>
                <div><dt>"Content type"</dt><dd>{or_dash(d.content_type.clone())}</dd></div>
            </dl>
            <p class="dl-error-message" data-test="dl-error-message">{or_dash(r.error_message.clone())}</p>
            {r.parked_at.clone().map(|p| view! {
                <p data-test="dl-parked"><span class="pill parked">"parked before"</span>
                    {format!(" it rested in its launch setting's sump (policy park) at {p} and failed again after its extra round")}</p>
            })}
            {d.forward.as_ref().map(|f| view! { <p data-test="dl-forward">{shown::forward(f)}</p> })}
            {d.policy.clone().map(|p| view! {
                <p class="muted" data-test="dl-policy">
                    {format!("Launch setting's dead-letter policy: {}", p.policy)}
                    {(p.policy == DeadLetterPolicy::Park.as_str()).then(|| format!(" (cool-down {})", p.park_cooldown))}
                    {format!(" · at most {} deliveries", p.max_deliveries)}
                </p>
            })}
        </div>
        <h2 class="section">"Body"</h2>
        <p class="muted" data-test="dl-body-encoding" data-encoding=d.body.encoding.as_str()>
            {format!("{encoding}, {} bytes", r.body_size)}
        </p>
        <pre class="dl-body" data-test="dl-body">{d.body.text.clone()}</pre>
        <h2 class="section">"Headers"</h2>
        <KeyValues rows=headers test="dl-headers" empty="No headers." />
        {(!properties.is_empty()).then(|| view! {
            <h2 class="section">"Other properties"</h2>
            <KeyValues rows=properties test="dl-properties" empty="" />
        })}
        <h2 class="section">"Failure history"</h2>
        {if r.message_id.is_none() {
            view! { <p class="muted" data-test="dl-no-history">"The message has no id, so its failures cannot be told apart from others'."</p> }.into_any()
        } else {
            view! {
                <FailureCards rows=d.failures.clone() />
                {d.more_failures.then(|| view! { <p class="muted">"Older failures are in the failure logs."</p> })}
            }.into_any()
        }}
    }
}

#[component]
fn KeyValues(
    rows: Vec<(String, String)>,
    test: &'static str,
    empty: &'static str,
) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted">{empty}</p> }.into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="list dl-headers" data-test=test>
                <thead><tr><th>"Name"</th><th>"Value"</th></tr></thead>
                <tbody>
                    {rows.into_iter().map(|(k, v)| view! {
                        <tr data-test="dl-header" data-name=k.clone()><td><code>{k.clone()}</code></td><td><code>{v}</code></td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}
