//! The delivery fields of a messages launch setting: its retry ladder, its budget for answers
//! "temporarily unavailable", and its dead-letter policy.

use crate::{components::forms::*, pages::entities::opt};
use am_domain::catalog::{DeadLetterPolicy, LaunchSetting};
use leptos::prelude::*;

/// A dead-letter policy as the select names it: its serde name, said once in the domain.
fn policy_name(p: DeadLetterPolicy) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The policies with what each does, for the select.
fn policy_options() -> Vec<(String, String)> {
    [
        (DeadLetterPolicy::DeadLetter, "to the dead-letter queue"),
        (DeadLetterPolicy::Park, "replay once after a cool-down"),
        (
            DeadLetterPolicy::RetryForever,
            "retry forever, the breaker stops it",
        ),
        (
            DeadLetterPolicy::Forward,
            "also a copy to an exchange of yours",
        ),
    ]
    .into_iter()
    .map(|(p, what)| {
        let name = policy_name(p);
        let label = format!("{name} — {what}");
        (name, label)
    })
    .collect()
}

fn policy_of(name: &str) -> DeadLetterPolicy {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).unwrap_or_default()
}

/// The fields' values while the form is edited.
#[derive(Clone, Copy)]
pub(super) struct DeliveryFields {
    initial_delay: RwSignal<String>,
    multiplier: RwSignal<String>,
    max_delay: RwSignal<String>,
    max_deliveries: RwSignal<String>,
    unavailable_for: RwSignal<String>,
    policy: RwSignal<String>,
    park: RwSignal<String>,
    forward_to: RwSignal<String>,
    notify: RwSignal<String>,
}

impl DeliveryFields {
    pub(super) fn new(ls: &LaunchSetting) -> Self {
        let text = |s: String| RwSignal::new(s);
        Self {
            initial_delay: text(ls.retry.initial_delay.to_string()),
            multiplier: text(ls.retry.multiplier.to_string()),
            max_delay: text(ls.retry.max_delay.to_string()),
            max_deliveries: text(ls.retry.max_deliveries.to_string()),
            unavailable_for: text(ls.unavailable_for.to_string()),
            policy: text(policy_name(ls.dead_letter.policy)),
            park: text(ls.dead_letter.park_cooldown.to_string()),
            forward_to: text(ls.dead_letter.forward_to.clone().unwrap_or_default()),
            notify: text(
                ls.dead_letter
                    .notify_threshold
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
            ),
        }
    }

    /// Reads the fields into `ls`; what does not parse is noted in `errs` under its path.
    pub(super) fn apply(&self, ls: &mut LaunchSetting, errs: &mut LocalErrors) {
        let get = |s: RwSignal<String>| s.get_untracked();
        if let Some(d) = parse_duration(errs, "retry.initial_delay", &get(self.initial_delay)) {
            ls.retry.initial_delay = d;
        }
        if let Some(m) =
            parse_num::<f64>(errs, "retry.multiplier", &get(self.multiplier), "a number")
        {
            ls.retry.multiplier = m;
        }
        if let Some(d) = parse_duration(errs, "retry.max_delay", &get(self.max_delay)) {
            ls.retry.max_delay = d;
        }
        if let Some(n) = parse_num::<u32>(
            errs,
            "retry.max_deliveries",
            &get(self.max_deliveries),
            "a whole number",
        ) {
            ls.retry.max_deliveries = n;
        }
        if let Some(d) = parse_duration(errs, "unavailable_for", &get(self.unavailable_for)) {
            ls.unavailable_for = d;
        }
        ls.dead_letter.policy = policy_of(&get(self.policy));
        ls.dead_letter.forward_to = opt(get(self.forward_to));
        if let Some(d) = parse_duration(errs, "dead_letter.park_cooldown", &get(self.park)) {
            ls.dead_letter.park_cooldown = d;
        }
        let n = get(self.notify);
        ls.dead_letter.notify_threshold = if n.trim().is_empty() {
            None
        } else {
            parse_num::<u32>(errs, "dead_letter.notify_threshold", &n, "a whole number")
        };
    }
}

/// Retries and dead letters, each field with its errors (`errors_at` of its path).
#[component]
pub(super) fn DeliveryFieldset(
    fields: DeliveryFields,
    errors_at: Callback<&'static str, Signal<Vec<String>>>,
    can_edit: bool,
) -> impl IntoView {
    let f = fields;
    let at = move |p: &'static str| errors_at.run(p);
    view! {
        <h3>"Retries"</h3>
        <div class="row">
            <TextField label="First delay" test="field-initial-delay" value=f.initial_delay errors=at("retry.initial_delay") readonly=!can_edit />
            <TextField label="Multiplier" test="field-multiplier" value=f.multiplier errors=at("retry.multiplier") readonly=!can_edit />
            <TextField label="Longest delay" test="field-max-delay" value=f.max_delay errors=at("retry.max_delay") readonly=!can_edit />
            <TextField label="Max deliveries" test="field-max-deliveries" value=f.max_deliveries errors=at("retry.max_deliveries") readonly=!can_edit />
            <TextField label="Unavailable for" test="field-unavailable-for" value=f.unavailable_for errors=at("unavailable_for") readonly=!can_edit
                hint="answers \"temporarily unavailable\" use no delivery; dead-lettered after this long" />
        </div>
        <h3>"Dead letters"</h3>
        <div class="row">
            <SelectField label="Policy" test="field-dead-letter" value=f.policy errors=at("dead_letter.policy") disabled=!can_edit
                options=policy_options() />
            <TextField label="Park cool-down" test="field-park-cooldown" value=f.park errors=at("dead_letter.park_cooldown") readonly=!can_edit />
            <TextField label="Forward to" test="field-forward-to" value=f.forward_to errors=at("dead_letter.forward_to") readonly=!can_edit
                hint="policy forward: the exchange that gets a copy (routing key: the launch setting's id)" />
            <TextField label="Notify at" test="field-notify" value=f.notify errors=at("dead_letter.notify_threshold") readonly=!can_edit
                hint="dead letters waiting; empty: never" />
        </div>
    }
}
