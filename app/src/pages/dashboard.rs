//! The dashboard: health of the manager's dependencies now; live runtime figures later.

use crate::api::{ComponentStatus, health};
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

#[component]
pub fn DashboardPage() -> impl IntoView {
    let health = Resource::new(|| (), |_| health());
    // Refreshes in the browser only; the server renders the first figures.
    Effect::new(move |_| {
        set_interval(move || health.refetch(), Duration::from_secs(5));
    });

    view! {
        <section>
            <h1>"Dashboard"</h1>
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
        </section>
    }
}
