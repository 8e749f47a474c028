//! The operator summary at the top of a launch setting's page, above its form: the last hour
//! (failures by kind, dead-lettered messages), the dead letters waiting, the newest runs and
//! the chart per minute. Each figure links to the list that shows exactly what it counts.

use crate::{
    api::overview::launch_setting_overview,
    components::{ids::ShortId, throughput_chart::ThroughputChartView},
};
use am_domain::{
    dashboard::failure_kind,
    display::{self, plural},
    links,
    read::overview::Overview,
};
use leptos::prelude::*;

#[component]
pub fn LaunchSettingOverview(id: String) -> impl IntoView {
    let data = {
        let id = id.clone();
        Resource::new(|| (), move |_| launch_setting_overview(id.clone()))
    };
    view! {
        <section class="card overview" data-test="ls-overview" aria-labelledby="ls-overview-title">
            <h2 id="ls-overview-title">"Last hour"</h2>
            <Suspense fallback=|| view! { <p class="muted">"…"</p> }>
                {move || {
                    let id = id.clone();
                    data.get().map(move |r| match r {
                        Ok(o) => view! { <Figures id o /> }.into_any(),
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    })
                }}
            </Suspense>
        </section>
    }
}

#[component]
fn Figures(id: String, o: Overview) -> impl IntoView {
    let now = o.generated_at;
    let hour_ago = now - chrono::Duration::hours(1);
    let figure = |test: &'static str, n: u64, label: String, href: String, bad: bool| {
        view! {
            <a class="figure" class:bad=(bad && n > 0) href=href data-test=test data-count=n.to_string()>
                <strong>{n.to_string()}</strong> " " {label}
            </a>
        }
    };
    let h = o.last_hour.clone();
    let recent = o
        .recent
        .iter()
        .map(|a| {
            view! {
                <li data-test="ls-recent-run">
                    <span class=format!("pill {}", a.status)>{a.status.clone()}</span> " "
                    <ShortId id=a.id.to_string() href=links::activation(&a.id.to_string()) />
                    " " <span class="muted">{display::time(a.created_at)}</span>
                    {a.duration(now).map(|d| view! { " · " <span class="muted">{display::duration(d)}</span> })}
                    {(a.failures > 0).then(|| view! {
                        " · " <span class="bad">{plural(a.failures, "failure")}</span>
                    })}
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="figures">
            {figure("ls-failed", h.failed, "failed".into(),
                links::ls_failures_since(&id, hour_ago, ""), true)}
            {figure("ls-retried", h.retried, "retried".into(),
                links::ls_failures_since(&id, hour_ago, failure_kind::RETRIED), false)}
            {figure("ls-unavailable", h.unavailable, "temporarily unavailable".into(),
                links::ls_failures_since(&id, hour_ago, failure_kind::UNAVAILABLE), false)}
            {figure("ls-dead-lettered", h.dead_lettered, "dead-lettered".into(),
                links::href("/dead-letters", &[("launch_setting", &id),
                    ("from", &hour_ago.to_rfc3339_opts(chrono::SecondsFormat::Micros, true))]), true)}
            {figure("ls-dead-waiting", o.dead_letters_waiting, "dead letters waiting (all time)".into(),
                links::dead_letters_of(&id), true)}
        </div>
        <ThroughputChartView t=o.throughput scope=id.clone() id="ls-throughput" />
        <h3>
            "Newest runs "
            <a href=links::runs_of(&id) class="muted" data-test="ls-runs-total" data-count=o.runs_total.to_string()>
                {format!("(all {})", o.runs_total)}
            </a>
        </h3>
        {if o.recent.is_empty() {
            view! { <p class="muted" data-test="ls-no-runs">"No run yet."</p> }.into_any()
        } else {
            view! { <ul class="recent-runs">{recent}</ul> }.into_any()
        }}
    }
}
