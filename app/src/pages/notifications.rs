//! Notifications: what operators were told, newest first, each with its event, what it is
//! about, where it went and how its delivery went (pending with its next try, delivered,
//! failed with the last error), the payload, and *Resend* for operators. Filters are in the URL
//! (`?event=&status=&application=&launch_setting=`); the page reads without JavaScript and
//! refreshes itself every 5 s while something is pending.

use crate::{
    api::notifications::{
        NotificationsQuery, NotificationsView, ResendNotification, list_notifications,
    },
    components::{failures::href, when::Ago},
};
use am_domain::{
    links::text,
    notify::{Delivery, Event},
    read::notifications::{NotificationEntry, NotificationFilter},
};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use std::time::Duration;

const REFRESH: Duration = Duration::from_secs(5);

fn query_href(q: &NotificationsQuery, after: &str) -> String {
    href(
        "/notifications",
        &[
            ("event", text(&q.filter.event)),
            ("status", text(&q.filter.status)),
            ("application", text(&q.filter.application)),
            ("launch_setting", text(&q.filter.launch_setting)),
            ("after", after),
        ],
    )
}

#[component]
pub fn NotificationsPage() -> impl IntoView {
    let query_map = use_query_map();
    let query = Memo::new(move |_| {
        let m = query_map.get();
        let get = |k: &str| m.get(k).filter(|v| !v.is_empty());
        NotificationsQuery {
            filter: NotificationFilter {
                event: get("event"),
                status: get("status"),
                application: get("application"),
                launch_setting: get("launch_setting"),
            },
            after: get("after").unwrap_or_default(),
        }
    });
    let reload = RwSignal::new(0u32);
    let data = Resource::new(
        move || (query.get(), reload.get()),
        |(q, _)| list_notifications(q),
    );
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(
            move || {
                let pending = data
                    .get_untracked()
                    .and_then(Result::ok)
                    .is_some_and(|v| v.page.items.iter().any(|r| r.status == Delivery::Pending));
                if pending {
                    reload.update(|n| *n += 1);
                }
            },
            REFRESH,
        ) {
            on_cleanup(move || handle.clear());
        }
    });
    view! {
        <section data-test="notifications">
            <div class="page-head"><h1>"Notifications"</h1></div>
            <p class="muted">
                "What operators were told, at the webhook of the application (or of the launch setting, "
                "when it names one). Repeats of an event within 10 minutes are counted on the first."
            </p>
            {move || view! { <Filters q=query.get() /> }}
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <List q=query.get_untracked() v reload /> }.into_any(),
                    Err(e) => view! { <p class="error" data-test="notifications-error">{e.to_string()}</p> }.into_any(),
                })}
            </Transition>
        </section>
    }
}

#[component]
fn Filters(q: NotificationsQuery) -> impl IntoView {
    let q = q.filter;
    let option = |value: &str, current: &str| {
        view! { <option value=value.to_owned() selected=value == current>{value.to_owned()}</option> }
    };
    view! {
        <form method="get" action="/notifications" class="filters" data-test="filters">
            <label>
                <span class="label">"Event"</span>
                <select name="event" data-test="filter-event">
                    <option value="">"any"</option>
                    {Event::ALL.iter().map(|e| option(e.as_str(), text(&q.event))).collect_view()}
                </select>
            </label>
            <label>
                <span class="label">"Status"</span>
                <select name="status" data-test="filter-status">
                    <option value="">"any"</option>
                    {Delivery::ALL.iter().map(|d| option(d.as_str(), text(&q.status))).collect_view()}
                </select>
            </label>
            <label>
                <span class="label">"Application"</span>
                <input name="application" value=text(&q.application).to_owned() placeholder="id" data-test="filter-application" />
            </label>
            <label>
                <span class="label">"Launch setting"</span>
                <input name="launch_setting" value=text(&q.launch_setting).to_owned() placeholder="id" data-test="filter-launch-setting" />
            </label>
            <button type="submit" data-test="filter-apply">"Filter"</button>
            <a href="/notifications" data-test="filter-clear">"Clear"</a>
        </form>
    }
}

#[component]
fn List(q: NotificationsQuery, v: NotificationsView, reload: RwSignal<u32>) -> impl IntoView {
    if v.page.items.is_empty() {
        return view! { <p class="muted" data-test="no-notifications">"No notification matches."</p> }
            .into_any();
    }
    let more = v.page.next.map(|n| query_href(&q, &n.to_string()));
    let first = (!q.after.is_empty()).then(|| query_href(&q, ""));
    let (now, can_operate) = (v.now, v.can_operate);
    view! {
        <div class="table-wrap">
            <table class="list notifications" data-test="notification-table">
                <thead><tr>
                    <th>"Raised"</th><th>"Event"</th><th>"What happened"</th><th>"Sent to"</th><th>"Delivery"</th>
                </tr></thead>
                <tbody>
                    {v.page.items.into_iter().map(|n| view! { <Row n now can_operate reload /> }).collect_view()}
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
fn Row(
    n: NotificationEntry,
    now: chrono::DateTime<chrono::Utc>,
    can_operate: bool,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let id = n.id;
    let status = n.status;
    let notice = n.payload.clone();
    let payload = serde_json::to_string_pretty(&n.payload).unwrap_or_default();
    view! {
        <tr data-test="notification-row" id=format!("n-{id}") data-id=id.to_string() data-event=notice.event.as_str()
            data-status=status.as_str() data-attempts=n.attempts.to_string()>
            <td data-label="Raised">
                <Ago at=n.created_at now />
                {(n.count > 1).then(|| view! {
                    <br /><span class="muted" data-test="notification-count">{format!("{} times", n.count)}</span>
                })}
            </td>
            <td data-label="Event"><code class="nowrap">{notice.event.as_str()}</code></td>
            <td data-label="What happened" class="error-cell">
                <a href=notice.url.clone() data-test="notification-link">{notice.summary.clone()}</a>
                <details class="payload">
                    <summary>"Payload"</summary>
                    <pre data-test="notification-payload">{payload}</pre>
                </details>
            </td>
            <td data-label="Sent to">
                <code class="endpoint">{n.endpoint.clone()}</code>
                <br /><span class="muted" data-test="notification-channel">
                    {format!("{}{}", n.channel, if n.signed { ", signed" } else { "" })}
                </span>
            </td>
            <td data-label="Delivery">
                <span class=format!("pill notify-{}", status.as_str()) data-test="notification-status">{status.as_str()}</span>
                " " <span class="muted nowrap">{am_domain::display::plural(u64::try_from(n.attempts).unwrap_or(0), "attempt")}</span>
                {n.delivered_at.map(|t| view! { <br /><span class="muted">"delivered "<Ago at=t now /></span> })}
                {n.next_attempt_at.filter(|_| n.attempts > 0).map(|t| view! {
                    <br /><span class="muted">"next try "<Ago at=t now /></span>
                })}
                {n.last_error.clone().map(|e| view! { <br /><span class="message" data-test="notification-error">{e}</span> })}
                {(can_operate && status != Delivery::Pending).then(|| view! { <Resend id reload /> })}
            </td>
        </tr>
    }
}

#[component]
fn Resend(id: i64, reload: RwSignal<u32>) -> impl IntoView {
    let action = ServerAction::<ResendNotification>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = action.value().get() {
            reload.update(|n| *n += 1);
        }
    });
    view! {
        <span class="row-actions">
            <button type="button" class="small" data-test="notification-resend"
                disabled=move || action.pending().get()
                on:click=move |_| { action.dispatch(ResendNotification { id }); }>
                "Resend"
            </button>
            {move || action.value().get().and_then(Result::err).map(|e| view! {
                <span class="error" role="alert">{e.to_string()}</span>
            })}
        </span>
    }
}
