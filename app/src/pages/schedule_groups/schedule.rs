//! A schedule group's schedule: cron and time zone with a live preview of the next fire times
//! (the clock from the server), and what a missed fire does.

use crate::{api::catalog::server_now, components::forms::*};
use am_domain::{
    catalog::{MisfirePolicy, ScheduleGroup},
    schedule::{next_fire_times, parse_time_zone},
};
use chrono::{DateTime, Utc};
use leptos::prelude::*;

/// The fields' values while the form is edited.
#[derive(Clone, Copy)]
pub(super) struct ScheduleFields {
    cron: RwSignal<String>,
    tz: RwSignal<String>,
    misfire: RwSignal<String>,
}

impl ScheduleFields {
    pub(super) fn new(g: &ScheduleGroup) -> Self {
        Self {
            cron: RwSignal::new(g.cron.clone()),
            tz: RwSignal::new(g.time_zone.clone()),
            misfire: RwSignal::new(g.misfire.as_str().to_owned()),
        }
    }

    pub(super) fn apply(&self, g: &mut ScheduleGroup) {
        g.cron = self.cron.get_untracked().trim().to_owned();
        g.time_zone = self.tz.get_untracked().trim().to_owned();
        g.misfire = MisfirePolicy::parse(&self.misfire.get_untracked()).unwrap_or_default();
    }
}

/// Cron, time zone, the next fire times (or why there are none: `disabled`, a schedule that
/// never fires again or does not parse) and the misfire policy.
#[component]
pub(super) fn ScheduleFieldset(
    fields: ScheduleFields,
    errors: FormErrors,
    disabled: bool,
    can_edit: bool,
) -> impl IntoView {
    let ScheduleFields { cron, tz, misfire } = fields;
    // The clock comes from the server: the browser's wasm has no clock of its own here.
    let now = Resource::new(|| (), |_| server_now());
    let preview = Memo::new(move |_| {
        let now_ms = now.get().and_then(Result::ok)?;
        let after = DateTime::<Utc>::from_timestamp_millis(now_ms)?;
        let (c, z) = (cron.get(), tz.get());
        Some(match next_fire_times(&c, &z, after, 5) {
            Ok(times) => {
                let zone = parse_time_zone(&z).ok();
                Ok(times
                    .into_iter()
                    .map(|t| match zone {
                        Some(zone) => t
                            .with_timezone(&zone)
                            .format("%a %Y-%m-%d %H:%M:%S %Z")
                            .to_string(),
                        None => t.format("%a %Y-%m-%d %H:%M:%S UTC").to_string(),
                    })
                    .collect::<Vec<_>>())
            }
            Err(errs) => Err(errs.0),
        })
    });
    let preview_errors = move |path: &'static str| {
        let server = errors.at(path);
        Signal::derive(move || {
            let mut v: Vec<String> = match preview.get() {
                Some(Err(list)) => list
                    .into_iter()
                    .filter(|e| e.path == path)
                    .map(|e| e.message)
                    .collect(),
                _ => vec![],
            };
            for m in server.get() {
                if !v.contains(&m) {
                    v.push(m);
                }
            }
            v
        })
    };
    view! {
    <div class="row">
                <TextField label="Cron" test="field-cron" value=cron errors=preview_errors("cron") readonly=!can_edit
                    hint="[seconds] minutes hours day-of-month month day-of-week, e.g. 0 2 * * MON-FRI" />
                <TextField label="Time zone" test="field-time-zone" value=tz errors=preview_errors("time_zone") readonly=!can_edit
                    hint="IANA name, e.g. Europe/Paris" />
            </div>
            <div class="preview" data-test="fire-preview">
                <span class="label">{if disabled { "Fire times once enabled" } else { "Next fire times" }}</span>
                {disabled.then(|| view! {
                    <p class="muted" data-test="fire-preview-disabled">"Disabled: nothing fires until it is enabled."</p>
                })}
                {move || match preview.get() {
                    None => view! { <p class="muted">"…"</p> }.into_any(),
                    Some(Ok(times)) if times.is_empty() => view! { <p class="muted">"This schedule never fires again."</p> }.into_any(),
                    Some(Ok(times)) => view! {
                        <ol>{times.into_iter().map(|t| view! { <li data-test="fire-time">{t}</li> }).collect_view()}</ol>
                    }.into_any(),
                    Some(Err(_)) => view! { <p class="error" data-test="fire-preview-error">"Fix the schedule to see when it fires."</p> }.into_any(),
                }}
            </div>
            <SelectField label="Missed fires" test="field-misfire" value=misfire errors=errors.at("misfire") disabled=!can_edit
                options=word_options(&[
                        (MisfirePolicy::FireOnceNow, "fire once now — run a missed fire once when the manager is back"),
                        (MisfirePolicy::Skip, "skip — drop missed fires"),
                    ]) />
    }
}
