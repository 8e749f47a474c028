//! A stream launch setting's own fields: how it consumes (mode, message filter), its breaker's
//! threshold and its delivery (retries, dead letters).

use super::delivery::{DeliveryFields, DeliveryFieldset};
use crate::components::forms::*;
use am_domain::{
    catalog::{LaunchKind, LaunchSetting, MessageFilter, StreamMode},
    policy::same_type_threshold,
};
use leptos::prelude::*;
use std::collections::BTreeMap;

/// The fields' values while the form is edited.
#[derive(Clone, Copy)]
pub(super) struct StreamFields {
    mode: RwSignal<String>,
    filter: RwSignal<String>,
    threshold: RwSignal<String>,
    delivery: DeliveryFields,
}

impl StreamFields {
    pub(super) fn new(ls: &LaunchSetting) -> Self {
        let filter = ls
            .filter
            .as_ref()
            .map(|f| {
                f.headers
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        Self {
            mode: RwSignal::new(ls.stream_mode.unwrap_or_default().as_str().to_owned()),
            filter: RwSignal::new(filter),
            threshold: RwSignal::new(ls.failure_threshold.to_string()),
            delivery: DeliveryFields::new(ls),
        }
    }

    /// Reads the fields into `ls` (the breaker's threshold whatever its kind; the rest for a
    /// stream, cleared otherwise); what does not parse is noted in `errs` under its path.
    pub(super) fn apply(&self, ls: &mut LaunchSetting, errs: &mut LocalErrors) {
        if let Some(m) = parse_num::<u32>(
            errs,
            "failure_threshold",
            &self.threshold.get_untracked(),
            "a whole number",
        ) {
            ls.failure_threshold = m;
        }
        if ls.kind != LaunchKind::Stream {
            ls.stream_mode = None;
            ls.filter = None;
            return;
        }
        ls.stream_mode = Some(StreamMode::parse(&self.mode.get_untracked()).unwrap_or_default());
        let mut headers = BTreeMap::new();
        for line in self
            .filter
            .get_untracked()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
        {
            match line.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => {
                    headers.insert(k.trim().to_owned(), v.trim().to_owned());
                }
                _ => {
                    errs.0.insert(
                        "filter",
                        format!("'{line}': write each header as name=value"),
                    );
                }
            }
        }
        ls.filter = (!headers.is_empty()).then_some(MessageFilter { headers });
        self.delivery.apply(ls, errs);
    }
}

/// Mode, filter, breaker and delivery, each field with its errors (`errors_at` of its path).
#[component]
pub(super) fn StreamFieldset(
    fields: StreamFields,
    errors_at: Callback<&'static str, Signal<Vec<String>>>,
    can_edit: bool,
) -> impl IntoView {
    let f = fields;
    let at = move |p: &'static str| errors_at.run(p);
    let derived_n = move || {
        f.threshold
            .get()
            .trim()
            .parse::<u32>()
            .map(|m| {
                format!(
                    "N = {} (trips after N consecutive failures of one error type, or M of any)",
                    same_type_threshold(m)
                )
            })
            .unwrap_or_default()
    };
    view! {
        <h2>"Stream"</h2>
        <div class="row">
            <SelectField label="Mode" test="field-stream-mode" value=f.mode errors=at("stream_mode") disabled=!can_edit
                options=vec![
                    (StreamMode::Asap.to_string(), "ASAP — as soon as published".into()),
                    (StreamMode::Delayed.to_string(), "Delayed — after the data queue's delay".into()),
                ] />
        </div>
        <TextField label="Message filter" test="field-filter" value=f.filter errors=at("filter") readonly=!can_edit multiline=true
            placeholder="region=eu" hint="one header per line as name=value; every header must match" />
        <h3>"Breaker"</h3>
        <div class="row">
            <TextField label="Failure threshold M" test="field-threshold" value=f.threshold errors=at("failure_threshold") readonly=!can_edit />
            <p class="derived" data-test="derived-n">{derived_n}</p>
        </div>
        <DeliveryFieldset fields=f.delivery errors_at can_edit />
    }
}
