//! The Broker page: whether the broker matches the catalog (the manager declares every data
//! exchange and queue from it), when it last did, what the broker refused, and the queues on
//! their way out; operators press *Reconcile now* to have everything declared and bound again,
//! and replay what no launch setting of a data queue took once one does.
//! Readable without JavaScript; refreshes itself once hydrated.

use crate::api::broker::{
    BrokerState, ReconcileNow, ReplayUnrouted, broker_status, data_queue_unrouted,
};
use crate::components::operation::OperationProgress;
use am_domain::{
    display,
    topology::{DriftState, queue_role},
};
use leptos::prelude::*;
use std::time::Duration;

#[component]
pub fn BrokerPage() -> impl IntoView {
    let reconcile = ServerAction::<ReconcileNow>::new();
    // Outside the refreshed part, so the confirmation and the progress survive each refresh.
    let replay = ServerAction::<ReplayUnrouted>::new();
    let asked = RwSignal::new(None::<(String, u32)>);
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
            {move || asked.get().map(|(dq, n)| view! {
                <div class="card confirm" data-test="replay-unrouted-confirm">
                    <p>{format!(
                        "Give the {n} messages kept for data queue {dq} back to it? Those a launch \
                         setting's filter matches go to it; the others are kept again."
                    )}</p>
                    <button data-test="replay-unrouted-yes" on:click={
                        let dq = dq.clone();
                        move |_| {
                            replay.dispatch(ReplayUnrouted { data_queue: dq.clone() });
                            asked.set(None);
                        }
                    }>{format!("Replay {n}")}</button>
                    " "
                    <button class="secondary" data-esc="close" on:click=move |_| asked.set(None)>"Cancel"</button>
                </div>
            })}
            {move || replay.value().get().map(|r| match r {
                Ok(id) => view! { <OperationProgress id /> }.into_any(),
                Err(e) => view! { <p class="error" data-test="replay-unrouted-error">{e.to_string()}</p> }.into_any(),
            })}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <Status state=v reconcile asked /> }.into_any(),
                    Err(e) => view! { <p class="error" data-test="broker-error">{e.to_string()}</p> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn Status(
    state: BrokerState,
    reconcile: ServerAction<ReconcileNow>,
    asked: RwSignal<Option<(String, u32)>>,
) -> impl IntoView {
    let can_operate = state.can_operate;
    let v = state.broker;
    let errors: Vec<String> = v.errors().into_iter().map(str::to_owned).collect();
    // Applied the catalog's last revision, yet the broker may differ from it (an object
    // removed by hand): "in sync" only when neither.
    let (state, class) = if !v.in_sync {
        ("catching up", "pill waiting")
    } else if !v.drift.is_empty() {
        ("drift", "pill failed")
    } else {
        ("in sync", "pill succeeded")
    };
    let applied = v
        .applied_revision
        .map_or_else(|| "never".to_owned(), |r| r.to_string());
    view! {
        <dl class="facts" data-test="broker-facts">
            <div><dt>"State"</dt><dd><span class=class data-test="broker-state">{state}</span></dd></div>
            <div><dt>"Catalog revision"</dt><dd data-test="broker-catalog-revision">{v.catalog_revision}</dd></div>
            <div><dt>"Applied revision"</dt><dd data-test="broker-applied-revision">{applied}</dd></div>
            <div><dt>"Last pass"</dt><dd data-test="broker-reconciled-at">{v.reconciled_at.map_or_else(
                || view! { "none yet" }.into_any(),
                // The whole time in `datetime`: two passes within a second read alike.
                |at| view! { <time datetime=at.to_rfc3339()>{display::time(at)}</time> }.into_any(),
            )}</dd></div>
            <div><dt>"Objects kept"</dt><dd data-test="broker-objects">
                {format!("{} exchanges, {} queues, {} bindings", v.exchanges, v.queues, v.bindings)}
            </dd></div>
        </dl>
        {can_operate.then(|| view! {
            <ActionForm action=reconcile>
                <button type="submit" data-test="reconcile-now">"Reconcile now"</button>
                {v.full_requested_at.map(|at| view! {
                    <span class="muted" data-test="reconcile-requested">{format!(" last asked {}", display::time(at))}</span>
                })}
            </ActionForm>
        })}
        {(!errors.is_empty()).then(|| view! {
            <h2>"Refused on the last pass"</h2>
            <ul class="field-errors" data-test="broker-errors">
                {errors.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}
            </ul>
            <p class="hint">"Each is tried again on the next pass."</p>
        })}
        <h2>"Differences"</h2>
        {if v.drift.is_empty() {
            view! {
                <p class="muted" data-test="no-drift">
                    "None: every exchange and queue the reconciler keeps is on the broker as declared."
                </p>
            }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="list" data-test="drift">
                        <thead><tr><th>"Object"</th><th>"Name"</th><th>"State"</th><th>"Detail"</th></tr></thead>
                        <tbody>
                            {v.drift.into_iter().map(|d| {
                                let state = d.state.describe();
                                let class = if d.state == DriftState::Missing { "pill waiting" } else { "pill failed" };
                                let object = d.object.label();
                                let name = d.name.clone();
                                view! {
                                    <tr data-test="drift-row" data-name=name>
                                        <td data-label="Object">{object}</td>
                                        <td data-label="Name" class="long-name"><code>{d.name}</code></td>
                                        <td data-label="State"><span class=class data-test="drift-state">{state}</span></td>
                                        <td data-label="Detail">{d.detail}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
                <p class="hint">"Reconcile now declares missing objects again. A queue with other \
                    arguments is left as it is, with its messages: move them, delete the queue, and \
                    the next pass declares it as the catalog wants."</p>
            }.into_any()
        }}
        <h2>"What the queues hold"</h2>
        {v.depths.sampled_at.map(|at| view! { <p class="muted">{format!("sampled {}", display::time(at))}</p> })}
        {if v.depths.queues.is_empty() {
            view! { <p class="muted" data-test="no-queues">"No queue yet."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="list" data-test="queues">
                        <thead><tr>
                            <th>"Queue"</th><th>"Launch setting"</th><th>"Data queue"</th>
                            <th>"Ready"</th><th>"Consumers"</th><th><span class="sr-only">"Actions"</span></th>
                        </tr></thead>
                        <tbody>
                            {v.depths.queues.into_iter().map(|q| {
                                let ls = q.launch_setting.clone().map(|id| {
                                    let href = format!("/launch-settings/{id}");
                                    view! { <a href=href>{id}</a> }
                                });
                                let role = if q.role == queue_role::UNROUTED { "unrouted: no launch setting took these" } else { "" };
                                let (name, kind) = (q.queue.clone(), q.role.clone());
                                // What no launch setting took can go back once one may take it.
                                let replay = (can_operate && q.role == queue_role::UNROUTED && q.ready > 0)
                                    .then(|| q.data_queue.clone())
                                    .flatten()
                                    .map(|dq| {
                                        let n = q.ready;
                                        view! {
                                            <button class="small" data-test="replay-unrouted"
                                                on:click=move |_| asked.set(Some((dq.clone(), n)))>
                                                "Replay…"
                                            </button>
                                        }
                                    });
                                view! {
                                    <tr data-test="queue-row" data-queue=name data-role=kind>
                                        <td data-label="Queue" class="long-name"><code>{q.queue}</code>" "<span class="muted">{role}</span></td>
                                        <td data-label="Launch setting" class="long-name">{ls}</td>
                                        <td data-label="Data queue" class="long-name">{q.data_queue}</td>
                                        <td data-label="Ready" data-test="queue-ready">{q.ready}</td>
                                        <td data-label="Consumers" data-test="queue-consumers">{q.consumers}</td>
                                        <td>{replay}</td>
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
                                    <td data-label="Queue" class="long-name"><code>{l.queue}</code></td>
                                    <td data-label="How">{l.how}</td>
                                    <td data-label="Since">{display::time(l.since)}</td>
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

/// On a data queue's page: what its unrouted queue keeps, with the way to the Broker page where
/// an operator replays it.
#[component]
pub fn DataQueueUnrouted(id: String) -> impl IntoView {
    let held = Resource::new(move || id.clone(), data_queue_unrouted);
    view! {
        <Suspense fallback=|| ()>
            {move || held.get().map(|r| match r {
                Ok(Some(n)) => view! {
                    <p data-test="dq-unrouted" data-count=n.to_string()>
                        {format!("Unrouted messages: {n}")}
                        <span class="muted">" — kept because no launch setting took them; "</span>
                        <a href="/broker">"replay them from the Broker page"</a>
                    </p>
                }.into_any(),
                Ok(None) => view! {
                    <p class="muted" data-test="dq-unrouted">"Unrouted messages: not sampled yet"</p>
                }.into_any(),
                Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
            })}
        </Suspense>
    }
}
