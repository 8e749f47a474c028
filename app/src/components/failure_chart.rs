//! The dashboard's chart of failures per hour over the last 24 hours: real failures stacked by
//! error type, then the retried attempts and the "temporarily unavailable" answers in their own
//! pale colours, so a storm of retries never reads as a storm of failures. Inline SVG: readable
//! without JavaScript, each segment titled for pointers and screen readers.

use am_domain::dashboard::{FailureChart, OTHER_ERROR_TYPES};
use leptos::prelude::*;

/// Fill colours of the chart's error types, in legend order; the summed rest is grey.
const PALETTE: [&str; 8] = [
    "#c2352b", "#2557d6", "#d48a00", "#18794e", "#7b3fb8", "#0b8a9e", "#b8457b", "#5d6575",
];
const OTHER_COLOUR: &str = "#aab1be";
/// Retried attempts and "unavailable" answers: pale, so real failures stand out.
const RETRIED_COLOUR: &str = "#c9d6f2";
const UNAVAILABLE_COLOUR: &str = "#e8e2c4";

const CHART_W: f64 = 720.0;
const CHART_H: f64 = 200.0;
const PLOT_LEFT: f64 = 36.0;
const PLOT_TOP: f64 = 8.0;
const PLOT_BOTTOM: f64 = 176.0;

/// Failures per hour as stacked bars: one colour per error type of the real failures, then the
/// retried attempts and the "unavailable" answers.
#[component]
pub fn FailureChartView(chart: FailureChart) -> impl IntoView {
    let peak = chart.peak();
    let total = chart.total();
    let colour = |error_type: &str| colour_of(&chart, error_type);
    let hours = chart.hours.len().max(1) as f64;
    let slot = (CHART_W - PLOT_LEFT) / hours;
    let bar = (slot * 0.75).max(1.0);
    let plot_h = PLOT_BOTTOM - PLOT_TOP;
    let scale = if peak == 0 { 0.0 } else { plot_h / peak as f64 };
    let bars = chart
        .hours
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let x = PLOT_LEFT + i as f64 * slot + (slot - bar) / 2.0;
            let label = format!(
                "{}–{} UTC",
                h.start.format("%H:%M"),
                (h.start + chrono::Duration::hours(1)).format("%H:%M")
            );
            let mut y = PLOT_BOTTOM;
            let segments = h
                .by_error_type
                .iter()
                .map(|t| {
                    let height = t.count as f64 * scale;
                    y -= height;
                    let title = format!("{label}: {} × {}", t.count, t.error_type);
                    view! {
                        <rect x=format!("{x:.1}") y=format!("{y:.1}") width=format!("{bar:.1}")
                            height=format!("{height:.1}") fill=colour(&t.error_type)
                            data-error-type=t.error_type.clone() data-count=t.count.to_string()>
                            <title>{title}</title>
                        </rect>
                    }
                })
                .collect_view();
            let others = [
                (h.retried, "retried", RETRIED_COLOUR, "retried (tried again)"),
                (h.unavailable, "unavailable", UNAVAILABLE_COLOUR, "temporarily unavailable (not counted)"),
            ]
            .into_iter()
            .filter(|(n, ..)| *n > 0)
            .map(|(n, kind, fill, what)| {
                let height = n as f64 * scale;
                y -= height;
                view! {
                    <rect x=format!("{x:.1}") y=format!("{y:.1}") width=format!("{bar:.1}")
                        height=format!("{height:.1}") fill=fill data-kind=kind data-count=n.to_string()>
                        <title>{format!("{label}: {n} × {what}")}</title>
                    </rect>
                }
            })
            .collect_view();
            let tick = (i % 3 == 0).then(|| {
                view! {
                    <text class="tick" x=format!("{:.1}", x + bar / 2.0) y=format!("{:.1}", PLOT_BOTTOM + 16.0)
                        text-anchor="middle">{h.start.format("%H:%M").to_string()}</text>
                }
            });
            view! {
                <g data-test="chart-hour" data-start=h.start.to_rfc3339() data-total=h.total.to_string()
                    data-retried=h.retried.to_string() data-unavailable=h.unavailable.to_string()>
                    <title>{format!(
                        "{label}: {}, {} retried, {} unavailable",
                        am_domain::display::plural(h.total, "failure"), h.retried, h.unavailable
                    )}</title>
                    {segments}
                    {others}
                </g>
                {tick}
            }
        })
        .collect_view();
    let besides = format!(
        "{} retried, {} temporarily unavailable",
        chart.retried, chart.unavailable
    );
    let summary = if total == 0 {
        format!("No failure in the last 24 hours ({besides}).")
    } else {
        format!(
            "{} in the last 24 hours ({besides}); at most {peak} reports in one hour.",
            am_domain::display::plural(total, "failure")
        )
    };
    let legend = legend(&chart);
    view! {
        <figure class="chart" data-test="failure-chart" data-total=total.to_string() data-peak=peak.to_string()>
            <svg viewBox=format!("0 0 {CHART_W} {CHART_H}") role="img" aria-labelledby="chart-title chart-desc"
                preserveAspectRatio="xMidYMid meet">
                <title id="chart-title">"Failures per hour over the last 24 hours, by error type"</title>
                <desc id="chart-desc">{summary.clone()}</desc>
                <line class="axis" x1=PLOT_LEFT.to_string() y1=PLOT_BOTTOM.to_string()
                    x2=CHART_W.to_string() y2=PLOT_BOTTOM.to_string() />
                <text class="tick" x=(PLOT_LEFT - 6.0).to_string() y=(PLOT_TOP + 8.0).to_string()
                    text-anchor="end">{peak.to_string()}</text>
                <text class="tick" x=(PLOT_LEFT - 6.0).to_string() y=PLOT_BOTTOM.to_string()
                    text-anchor="end">"0"</text>
                {bars}
            </svg>
            <figcaption>
                <p class="muted">{summary}</p>
                <ul class="legend">{legend}</ul>
            </figcaption>
        </figure>
    }
}

/// The colour of `error_type` in `chart`: its place in the legend, grey past the palette.
fn colour_of(chart: &FailureChart, error_type: &str) -> &'static str {
    if error_type == OTHER_ERROR_TYPES {
        return OTHER_COLOUR;
    }
    chart
        .error_types
        .iter()
        .position(|t| t.error_type == error_type)
        .and_then(|i| PALETTE.get(i).copied())
        .unwrap_or(OTHER_COLOUR)
}

/// The legend: each error type with its colour, count and a link to its failures, then the
/// retried attempts and "unavailable" answers when there are any.
fn legend(chart: &FailureChart) -> impl IntoView + use<> {
    let types = chart
        .error_types
        .iter()
        .map(|t| {
            let href = if t.error_type == OTHER_ERROR_TYPES {
                "/failures".to_owned()
            } else {
                crate::components::failures::href("/failures", &[("error_type", &t.error_type)])
            };
            view! {
                <li data-test="legend-item" data-error-type=t.error_type.clone() data-count=t.count.to_string()>
                    <span class="swatch" style=format!("background: {}", colour_of(chart, &t.error_type))></span>
                    <a href=href>{t.error_type.clone()}</a> " " <span class="muted">{t.count.to_string()}</span>
                </li>
            }
        })
        .collect_view();
    let pale = [
        (
            chart.retried,
            "retried",
            RETRIED_COLOUR,
            "retried: the attempt failed, the message is tried again",
        ),
        (
            chart.unavailable,
            "unavailable",
            UNAVAILABLE_COLOUR,
            "temporarily unavailable: waits, not a failure",
        ),
    ]
    .into_iter()
    .filter(|(n, ..)| *n > 0)
    .map(|(n, kind, fill, what)| {
        view! {
            <li data-test="legend-item" data-kind=kind data-count=n.to_string()>
                <span class="swatch" style=format!("background: {fill}")></span>
                {what} " " <span class="muted">{n.to_string()}</span>
            </li>
        }
    })
    .collect_view();
    (types, pale)
}
