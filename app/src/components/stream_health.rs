//! How a stream launch setting is doing, in its status panel: what its running activations
//! processed and since when, failures by kind and dead letters over the last 5 minutes and the
//! last hour, its last real failure and since when it fails (docs/concepts.md, The dashboard).

use crate::components::{failures::level_path, when::When};
use am_domain::{
    display::plural,
    failing::{StreamHealth, WindowCounts},
};
use leptos::prelude::*;

#[component]
pub fn StreamHealthView(
    launch_setting: String,
    h: StreamHealth,
    /// Messages per minute, and the seconds they were measured over.
    per_minute: Option<(u64, u64)>,
) -> impl IntoView {
    let now = h.as_of;
    let processing = match h.running_since {
        Some(since) => view! {
            <span data-test="stream-processed" data-count=h.processed.to_string()>
                {format!("{} processed by the running activation", h.processed)}
            </span>
            {per_minute.map(|(n, s)| view! { " · " <span data-test="stream-rate">{format!("{n}/min over {s} s to the last broker sample")}</span> })}
            " · running since " <When at=since now />
        }
        .into_any(),
        None => view! { <span class="muted" data-test="stream-processed">"not running"</span> }.into_any(),
    };
    let row = |label: &'static str, test: &'static str, c: WindowCounts| {
        view! {
            <tr data-test=test data-failed=c.failed.to_string() data-retried=c.retried.to_string()
                data-dead-lettered=c.dead_lettered.to_string()>
                <th scope="row">{label}</th>
                <td class:bad=(c.failed > 0)>{c.failed}</td>
                <td>{c.retried}</td>
                <td>{c.unavailable}</td>
                <td class:bad=(c.dead_lettered > 0)>{c.dead_lettered}</td>
            </tr>
        }
    };
    let last = h.last_failure.clone().map(|f| {
        let at = level_path(&launch_setting, &f.activation, &f.host);
        view! {
            <div data-test="stream-last-failure">
                <span class="label">"Last failure"</span>
                <a href=at><strong>{f.error_type.clone()}</strong></a>
                " " <span class="muted">{format!("on {}", f.host)}</span> " " <When at=f.at now />
                <span class="message">{f.message.clone()}</span>
            </div>
        }
    });
    view! {
        <div class="stream-health" data-test="stream-health">
            <div><span class="label">"Processing"</span>{processing}</div>
            <table class="list compact windows">
                <thead><tr>
                    <th><span class="sr-only">"Window"</span></th><th>"Failed"</th><th>"Retried"</th><th>"Unavailable"</th><th>"Dead-lettered"</th>
                </tr></thead>
                <tbody>
                    {row("last 5 min", "stream-5min", h.last_5_min.clone())}
                    {row("last hour", "stream-1h", h.last_hour.clone())}
                </tbody>
            </table>
            {last}
            {h.failing_since.map(|t| view! {
                <div data-test="stream-failing-since">
                    <span class="label">"Failing since"</span><When at=t now />
                    " " <span class="muted">{format!("({} in the last hour)", plural(h.last_hour.failed, "failure"))}</span>
                </div>
            })}
        </div>
    }
}
