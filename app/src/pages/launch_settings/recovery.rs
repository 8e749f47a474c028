//! How the manager recovers a launch setting's runs: start and work timeouts, the longest run,
//! what a lost run does; and how long a scheduled run of a messages agent waits for messages.

use crate::components::forms::*;
use am_domain::catalog::{LaunchKind, LaunchSetting, LostPolicy};
use leptos::prelude::*;

/// The fields' values while the form is edited.
#[derive(Clone, Copy)]
pub(super) struct RecoveryFields {
    start_timeout: RwSignal<String>,
    work_timeout: RwSignal<String>,
    max_run: RwSignal<String>,
    on_lost: RwSignal<String>,
    /// Shown apart, under the schedule groups: only a scheduled run of a messages agent has it.
    pub(super) idle: RwSignal<String>,
}

impl RecoveryFields {
    pub(super) fn new(ls: &LaunchSetting) -> Self {
        let text = |s: String| RwSignal::new(s);
        let r = &ls.recovery;
        Self {
            start_timeout: text(r.start_timeout.to_string()),
            work_timeout: text(r.work_timeout.to_string()),
            max_run: text(r.max_run_time.map(|d| d.to_string()).unwrap_or_default()),
            on_lost: text(r.on_lost.as_str().to_owned()),
            idle: text(ls.idle_timeout.map(|d| d.to_string()).unwrap_or_default()),
        }
    }

    /// Reads the fields into `ls`; the idle timeout only for a scheduled launch setting of a
    /// `messages_agent`. What does not parse is noted in `errs` under its path.
    pub(super) fn apply(
        &self,
        ls: &mut LaunchSetting,
        errs: &mut LocalErrors,
        messages_agent: bool,
    ) {
        let get = |s: RwSignal<String>| s.get_untracked();
        if let Some(d) = parse_duration(errs, "recovery.start_timeout", &get(self.start_timeout)) {
            ls.recovery.start_timeout = d;
        }
        if let Some(d) = parse_duration(errs, "recovery.work_timeout", &get(self.work_timeout)) {
            ls.recovery.work_timeout = d;
        }
        ls.recovery.max_run_time =
            parse_opt_duration(errs, "recovery.max_run_time", &get(self.max_run));
        ls.recovery.on_lost = LostPolicy::parse(&get(self.on_lost)).unwrap_or_default();
        ls.idle_timeout = if ls.kind == LaunchKind::Scheduled && messages_agent {
            parse_opt_duration(errs, "idle_timeout", &get(self.idle))
        } else {
            None
        };
    }
}

/// The recovery fields, each with its errors (`errors_at` of its path).
#[component]
pub(super) fn RecoveryFieldset(
    fields: RecoveryFields,
    errors_at: Callback<&'static str, Signal<Vec<String>>>,
    can_edit: bool,
) -> impl IntoView {
    let f = fields;
    let at = move |p: &'static str| errors_at.run(p);
    view! {
        <h2>"Recovery"</h2>
        <div class="row">
            <TextField label="Start timeout" test="field-start-timeout" value=f.start_timeout errors=at("recovery.start_timeout") readonly=!can_edit
                hint="not accepted by then: another node gets it" />
            <TextField label="Work timeout" test="field-work-timeout" value=f.work_timeout errors=at("recovery.work_timeout") readonly=!can_edit
                hint="no heartbeat by then: the run is lost" />
            <TextField label="Max run time" test="field-max-run-time" value=f.max_run errors=at("recovery.max_run_time") readonly=!can_edit
                placeholder="no limit" />
            <SelectField label="When lost" test="field-on-lost" value=f.on_lost errors=at("recovery.on_lost") disabled=!can_edit
                options=word_options(&[(LostPolicy::Restart, "dispatch again"), (LostPolicy::Fail, "end as failed")]) />
        </div>
    }
}
