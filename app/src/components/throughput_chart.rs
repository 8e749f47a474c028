//! The chart of the last hour minute by minute: messages processed, real failures and retried
//! attempts as stacked bars, the broker's backlog as a line on its own scale. Inline SVG:
//! readable without JavaScript, each minute titled for pointers and screen readers.

use am_domain::{display::plural, throughput::Throughput};
use leptos::prelude::*;

const PROCESSED_COLOUR: &str = "#18794e";
const FAILED_COLOUR: &str = "#c2352b";
const RETRIED_COLOUR: &str = "#9db4e8";
const BACKLOG_COLOUR: &str = "#d48a00";

const CHART_W: f64 = 720.0;
const CHART_H: f64 = 180.0;
const PLOT_LEFT: f64 = 40.0;
const PLOT_RIGHT: f64 = 680.0;
const PLOT_TOP: f64 = 8.0;
const PLOT_BOTTOM: f64 = 156.0;

/// The chart of `t`; `scope` says whose figures they are ("every launch setting", an id), for
/// the chart's title. `id` keeps the SVG's title ids unique on the page.
#[component]
pub fn ThroughputChartView(t: Throughput, scope: String, id: &'static str) -> impl IntoView {
    let peak = t.peak();
    let peak_backlog = t.peak_backlog();
    let slots = t.minutes.len().max(1) as f64;
    let slot = (PLOT_RIGHT - PLOT_LEFT) / slots;
    let bar = (slot * 0.7).max(1.0);
    let plot_h = PLOT_BOTTOM - PLOT_TOP;
    let scale = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            n as f64 * plot_h / of as f64
        }
    };
    let minutes = t
        .minutes
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let x = PLOT_LEFT + i as f64 * slot + (slot - bar) / 2.0;
            let label = m.start.format("%H:%M UTC").to_string();
            let backlog = m
                .backlog
                .map(|b| format!(", at most {b} waiting"))
                .unwrap_or_default();
            let title = format!(
                "{label}: {} processed, {}, {} retried{backlog}",
                m.processed,
                plural(m.failed, "failure"),
                m.retried
            );
            let mut y = PLOT_BOTTOM;
            let segments = [
                (m.processed, PROCESSED_COLOUR, "processed"),
                (m.failed, FAILED_COLOUR, "failed"),
                (m.retried, RETRIED_COLOUR, "retried"),
            ]
            .into_iter()
            .filter(|(n, ..)| *n > 0)
            .map(|(n, fill, kind)| {
                let height = scale(n, peak);
                y -= height;
                view! {
                    <rect x=format!("{x:.1}") y=format!("{y:.1}") width=format!("{bar:.1}")
                        height=format!("{height:.1}") fill=fill data-kind=kind />
                }
            })
            .collect_view();
            let tick = (i % 10 == 0).then(|| {
                view! {
                    <text class="tick" x=format!("{:.1}", x + bar / 2.0) y=format!("{:.1}", PLOT_BOTTOM + 16.0)
                        text-anchor="middle">{m.start.format("%H:%M").to_string()}</text>
                }
            });
            view! {
                <g data-test="chart-minute" data-start=m.start.to_rfc3339() data-processed=m.processed.to_string()
                    data-failed=m.failed.to_string() data-retried=m.retried.to_string()
                    data-backlog=m.backlog.map(|b| b.to_string()).unwrap_or_default()>
                    <title>{title}</title>
                    // The whole slot answers the pointer, not only the drawn bar.
                    <rect x=format!("{:.1}", PLOT_LEFT + i as f64 * slot) y=PLOT_TOP.to_string()
                        width=format!("{slot:.1}") height=plot_h.to_string() fill="transparent" />
                    {segments}
                </g>
                {tick}
            }
        })
        .collect_view();
    // One line through the minutes that have a sample; a minute without one breaks nothing.
    let line: Vec<String> = t
        .minutes
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let b = m.backlog?;
            let x = PLOT_LEFT + i as f64 * slot + slot / 2.0;
            Some(format!(
                "{x:.1},{:.1}",
                PLOT_BOTTOM - scale(b, peak_backlog)
            ))
        })
        .collect();
    let summary = {
        let backlog = match t.latest_backlog() {
            Some(b) => format!(
                "; at most {peak_backlog} waiting in the broker, {b} in the last minute sampled"
            ),
            None => String::new(),
        };
        format!(
            "{} processed, {}, {} retried in the last hour{backlog}.",
            t.processed(),
            plural(t.failed(), "failure"),
            t.retried()
        )
    };
    let title_id = format!("{id}-title");
    let desc_id = format!("{id}-desc");
    let labelled_by = format!("{title_id} {desc_id}");
    view! {
        <figure class="chart" data-test="throughput-chart" data-processed=t.processed().to_string()
            data-failed=t.failed().to_string() data-retried=t.retried().to_string()>
            <svg viewBox=format!("0 0 {CHART_W} {CHART_H}") role="img"
                aria-labelledby=labelled_by preserveAspectRatio="xMidYMid meet">
                <title id=title_id>{format!("Messages per minute over the last hour, {scope}")}</title>
                <desc id=desc_id>{summary.clone()}</desc>
                <line class="axis" x1=PLOT_LEFT.to_string() y1=PLOT_BOTTOM.to_string()
                    x2=PLOT_RIGHT.to_string() y2=PLOT_BOTTOM.to_string() />
                <text class="tick" x=(PLOT_LEFT - 6.0).to_string() y=(PLOT_TOP + 8.0).to_string()
                    text-anchor="end">{peak.to_string()}</text>
                <text class="tick" x=(PLOT_LEFT - 6.0).to_string() y=PLOT_BOTTOM.to_string()
                    text-anchor="end">"0"</text>
                {(peak_backlog > 0).then(|| view! {
                    <text class="tick backlog" x=(PLOT_RIGHT + 6.0).to_string() y=(PLOT_TOP + 8.0).to_string()
                        text-anchor="start">{peak_backlog.to_string()}</text>
                })}
                {minutes}
                {(!line.is_empty()).then(|| view! {
                    <polyline class="backlog-line" points=line.join(" ") fill="none"
                        stroke=BACKLOG_COLOUR stroke-width="2" data-test="backlog-line" />
                })}
            </svg>
            <figcaption>
                <p class="muted" data-test="throughput-summary">{summary}</p>
                <ul class="legend">
                    <li><span class="swatch" style=format!("background: {PROCESSED_COLOUR}")></span>"processed"</li>
                    <li><span class="swatch" style=format!("background: {FAILED_COLOUR}")></span>"failed"</li>
                    <li><span class="swatch" style=format!("background: {RETRIED_COLOUR}")></span>"retried (tried again)"</li>
                    <li><span class="swatch" style=format!("background: {BACKLOG_COLOUR}")></span>
                        "most waiting in the broker (right scale)"</li>
                </ul>
            </figcaption>
        </figure>
    }
}
