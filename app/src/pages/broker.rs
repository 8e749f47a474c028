//! The Broker page: whether the broker matches the catalog (the manager declares every data
//! exchange and queue from it), when it last did, what the broker refused, and the queues on
//! their way out; operators press *Reconcile now* to have everything declared and bound again.
//! Readable without JavaScript; refreshes itself once hydrated.

use crate::api::broker::{BrokerState, ReconcileNow, broker_status};
use leptos::prelude::*;
use std::time::Duration;

#[component]
pub fn BrokerPage() -> impl IntoView {
    let reconcile = ServerAction::<ReconcileNow>::new();
    let data = Resource::new(move || reconcile.version().get(), |_| broker_status());
    Effect::new(move |_| {
        set_interval(move || data.refetch(), Duration::from_secs(2));
    });
    view! {
        <section data-test="broker">
            <div class="page-head">
                <h1>"Broker"</h1>
            </div>
            <p class="hint">
                "The manager keeps the broker's data exchanges and queues as the catalog describes \
                 them: within a second of every catalog change, and all of them again every few \
                 minutes or when asked."
            </p>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <Status v reconcile /> }.into_any(),
                    Err(e) => view! { <p class="error" data-test="broker-error">{e.to_string()}</p> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn Status(v: BrokerState, reconcile: ServerAction<ReconcileNow>) -> impl IntoView {
    let (state, class) = if v.in_sync {
        ("in sync", "pill succeeded")
    } else {
        ("catching up", "pill waiting")
    };
    let applied = v
        .applied_revision
        .map_or_else(|| "never".to_owned(), |r| r.to_string());
    view! {
        <dl class="facts" data-test="broker-facts">
            <div><dt>"State"</dt><dd><span class=class data-test="broker-state">{state}</span></dd></div>
            <div><dt>"Catalog revision"</dt><dd data-test="broker-catalog-revision">{v.catalog_revision}</dd></div>
            <div><dt>"Applied revision"</dt><dd data-test="broker-applied-revision">{applied}</dd></div>
            <div><dt>"Last pass"</dt><dd data-test="broker-reconciled-at">{v.reconciled_at.unwrap_or_else(|| "none yet".into())}</dd></div>
            <div><dt>"Objects kept"</dt><dd data-test="broker-objects">
                {format!("{} exchanges, {} queues, {} bindings", v.exchanges, v.queues, v.bindings)}
            </dd></div>
        </dl>
        {v.can_operate.then(|| view! {
            <ActionForm action=reconcile>
                <button type="submit" data-test="reconcile-now">"Reconcile now"</button>
                {v.full_requested_at.clone().map(|at| view! {
                    <span class="muted" data-test="reconcile-requested">{format!(" last asked {at}")}</span>
                })}
            </ActionForm>
        })}
        {(!v.errors.is_empty()).then(|| view! {
            <h2>"Refused on the last pass"</h2>
            <ul class="field-errors" data-test="broker-errors">
                {v.errors.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}
            </ul>
            <p class="hint">"Each is tried again on the next pass."</p>
        })}
        <h2>"What the queues hold"</h2>
        {v.sampled_at.clone().map(|at| view! { <p class="muted">{format!("sampled {at}")}</p> })}
        {if v.depths.is_empty() {
            view! { <p class="muted" data-test="no-queues">"No queue yet."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="list" data-test="queues">
                        <thead><tr>
                            <th>"Queue"</th><th>"Launch setting"</th><th>"Data queue"</th>
                            <th>"Ready"</th><th>"Consumers"</th>
                        </tr></thead>
                        <tbody>
                            {v.depths.into_iter().map(|q| {
                                let ls = q.launch_setting.clone().map(|id| {
                                    let href = format!("/launch-settings/{id}");
                                    view! { <a href=href>{id}</a> }
                                });
                                let role = if q.role == "unrouted" { "unrouted: no launch setting took these" } else { "" };
                                let (name, kind) = (q.queue.clone(), q.role.clone());
                                view! {
                                    <tr data-test="queue-row" data-queue=name data-role=kind>
                                        <td data-label="Queue"><code>{q.queue}</code>" "<span class="muted">{role}</span></td>
                                        <td data-label="Launch setting">{ls}</td>
                                        <td data-label="Data queue">{q.data_queue}</td>
                                        <td data-label="Ready" data-test="queue-ready">{q.ready}</td>
                                        <td data-label="Consumers" data-test="queue-consumers">{q.consumers}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
        <h2>"Queues on their way out"</h2>
        {if v.leaving.is_empty() {
            view! { <p class="muted" data-test="no-leaving">"None."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="list" data-test="leaving">
                        <thead><tr><th>"Queue"</th><th>"How"</th><th>"Since"</th><th>"Why"</th></tr></thead>
                        <tbody>
                            {v.leaving.into_iter().map(|l| view! {
                                <tr data-test="leaving-row">
                                    <td data-label="Queue"><code>{l.queue}</code></td>
                                    <td data-label="How">{l.how}</td>
                                    <td data-label="Since">{l.since}</td>
                                    <td data-label="Why">{l.reason.unwrap_or_else(|| "drains into where its messages go".into())}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
    }
}
