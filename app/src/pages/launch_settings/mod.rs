//! The launch setting page: which agent runs, where, with which typed parameters; the stream
//! options (mode, filter, breaker, retries, dead letters) or the schedule groups; enable and
//! disable for operators.

mod delivery;

use crate::{
    api::catalog::{CatalogView, DeleteEntity, Key, SaveLaunchSetting},
    components::{
        forms::*,
        overview::LaunchSettingOverview,
        params::{ParamForm, ParamState, collect_errors, collect_values, param_states},
        status::StatusPanel,
        webhook::{ChannelFields, ChannelSignals},
        when::HistoryLink,
    },
    pages::{
        drift::PublishedDrift,
        entities::{EntityPage, delete_action, just_created},
    },
};
use am_domain::{
    catalog::{
        Catalog, InputKind, LaunchKind, LaunchSetting, LostPolicy, MessageFilter, StreamMode,
    },
    policy::same_type_threshold,
    roles::Role,
    usage::EntityRef,
};
use delivery::{DeliveryFields, DeliveryFieldset};
use leptos::prelude::*;
use leptos_router::hooks::use_navigate;
use std::collections::BTreeMap;

#[component]
pub fn LaunchSettingPage() -> impl IntoView {
    view! {
        <EntityPage
            noun="launch setting"
            list="/launch-settings"
            find=|v, p| match p.get("id") {
                None => Some(None),
                Some(id) => v.catalog.launch_setting(&id).cloned().map(Some),
            }
            form=|e, v| view! { <LaunchSettingForm existing=e view=v /> }.into_any()
        />
    }
}

fn new_setting(c: &Catalog) -> LaunchSetting {
    let application = c
        .applications
        .first()
        .map(|a| a.id.clone())
        .unwrap_or_default();
    LaunchSetting {
        id: String::new(),
        title: String::new(),
        agent: c
            .agents
            .iter()
            .find(|a| a.application == application)
            .map(|a| a.id.clone())
            .unwrap_or_default(),
        application,
        kind: LaunchKind::Scheduled,
        enabled: true,
        pool: None,
        parameters: Default::default(),
        stream_mode: None,
        filter: None,
        failure_threshold: am_domain::catalog::DEFAULT_FAILURE_THRESHOLD,
        retry: Default::default(),
        unavailable_for: am_domain::catalog::default_unavailable_for(),
        dead_letter: Default::default(),
        recovery: Default::default(),
        idle_timeout: None,
        webhook_url: None,
        webhook_secret: None,
        webhook_format: Default::default(),
        notify_email: None,
        webhook_events: Vec::new(),
        email_events: Vec::new(),
        notify_on_failure: false,
    }
}

#[component]
fn LaunchSettingForm(existing: Option<LaunchSetting>, view: CatalogView) -> impl IntoView {
    let creating = existing.is_none();
    let role = view.role;
    let can_edit = role.allows(Role::Admin);
    let catalog = StoredValue::new(view.catalog.clone());
    let errors = FormErrors::new();
    let delete = delete_action(errors, "/launch-settings");
    let base = existing
        .clone()
        .unwrap_or_else(|| new_setting(&view.catalog));

    let id = RwSignal::new(base.id.clone());
    let title = RwSignal::new(base.title.clone());
    let application = RwSignal::new(base.application.clone());
    let agent = RwSignal::new(base.agent.clone());
    let kind = RwSignal::new(base.kind.as_str().to_owned());
    let pool = RwSignal::new(base.pool.clone().unwrap_or_default());
    let mode = RwSignal::new(base.stream_mode.unwrap_or_default().as_str().to_owned());
    let filter = RwSignal::new(
        base.filter
            .as_ref()
            .map(|f| {
                f.headers
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
    );
    let threshold = RwSignal::new(base.failure_threshold.to_string());
    let delivery = DeliveryFields::new(&base);
    let groups = RwSignal::new(
        view.catalog
            .schedule_groups
            .iter()
            .filter(|g| g.members.contains(&base.id) && !base.id.is_empty())
            .map(|g| g.id.clone())
            .collect::<Vec<_>>(),
    );
    let start_timeout = RwSignal::new(base.recovery.start_timeout.to_string());
    let work_timeout = RwSignal::new(base.recovery.work_timeout.to_string());
    let max_run = RwSignal::new(
        base.recovery
            .max_run_time
            .map(|d| d.to_string())
            .unwrap_or_default(),
    );
    let on_lost = RwSignal::new(base.recovery.on_lost.as_str().to_owned());
    let idle = RwSignal::new(base.idle_timeout.map(|d| d.to_string()).unwrap_or_default());
    let channels = ChannelSignals::new(
        base.webhook_url.as_deref(),
        base.webhook_format,
        base.notify_email.as_deref(),
        &base.webhook_events,
        &base.email_events,
    );
    let notify_on_failure = RwSignal::new(base.notify_on_failure);
    let local = RwSignal::new(LocalErrors::default());
    let show_errors = RwSignal::new(false);

    // Parameter controls, rebuilt when another agent is chosen (values of the saved agent kept).
    let saved_params = base.parameters.clone();
    let saved_agent = (base.application.clone(), base.agent.clone());
    let states: Memo<Vec<ParamStateBox>> = Memo::new(move |_| {
        let (app, ag) = (application.get(), agent.get());
        let specs = catalog
            .with_value(|c| c.agent(&app, &ag).map(|a| a.parameters.clone()))
            .unwrap_or_default();
        let values = if (app.clone(), ag.clone()) == saved_agent {
            saved_params.clone()
        } else {
            Default::default()
        };
        param_states(&specs, &values)
            .into_iter()
            .map(ParamStateBox)
            .collect()
    });

    let agent_row = Memo::new(move |_| {
        let (app, ag) = (application.get(), agent.get());
        catalog.with_value(|c| c.agent(&app, &ag).cloned())
    });
    let is_messages = Signal::derive(move || {
        agent_row.with(|a| a.as_ref().is_some_and(|a| a.input == InputKind::Messages))
    });

    let apps: Vec<(String, String)> = view
        .catalog
        .applications
        .iter()
        .map(|a| (a.id.clone(), a.id.clone()))
        .collect();
    let agents = Signal::derive(move || {
        let app = application.get();
        catalog.with_value(|c| {
            c.agents
                .iter()
                .filter(|a| a.application == app)
                .map(|a| {
                    let input = a.input;
                    (a.id.clone(), format!("{} ({input})", a.id))
                })
                .collect::<Vec<_>>()
        })
    });
    let pools = Signal::derive(move || {
        let app = application.get();
        catalog.with_value(|c| {
            let default = c
                .application(&app)
                .map(|a| a.default_pool.clone())
                .unwrap_or_default();
            let mut v = vec![(String::new(), format!("application's default ({default})"))];
            v.extend(c.pools.iter().map(|p| (p.id.clone(), p.id.clone())));
            v
        })
    });
    let kinds = Signal::derive(move || {
        if is_messages.get() {
            word_options(&[
                (LaunchKind::Stream, "runs continuously"),
                (LaunchKind::Scheduled, "run by schedule groups"),
            ])
        } else {
            word_options(&[(LaunchKind::Scheduled, "run by schedule groups")])
        }
    });
    // Another application: pick one of its agents rather than keep a stale one.
    Effect::new(move |_| {
        let list = agents.get();
        if !list.iter().any(|(v, _)| *v == agent.get_untracked()) {
            agent.set(list.first().map(|(v, _)| v.clone()).unwrap_or_default());
        }
    });
    // A standalone agent has no stream launch settings.
    Effect::new(move |_| {
        if !is_messages.get() && kind.get_untracked() == LaunchKind::Stream.as_str() {
            kind.set(LaunchKind::Scheduled.as_str().into());
        }
    });
    let group_choices = Signal::derive(move || {
        let app = application.get();
        catalog.with_value(|c| {
            c.schedule_groups
                .iter()
                .filter(|g| g.application == app)
                .map(|g| {
                    (
                        g.id.clone(),
                        format!("{} — {} ({})", g.id, g.cron, g.time_zone),
                    )
                })
                .collect::<Vec<_>>()
        })
    });

    let lerr = move |p: &'static str| {
        let server = errors.at(p);
        Signal::derive(move || {
            let mut v: Vec<String> = local.with(|l| l.0.get(p).cloned().into_iter().collect());
            v.extend(server.get());
            v
        })
    };

    // Save.
    let save = ServerAction::<SaveLaunchSetting>::new();
    let saved = just_created();
    let navigate = use_navigate();
    Effect::new(move |_| match save.value().get() {
        Some(Ok(href)) => {
            errors.0.set(None);
            saved.set(true);
            if creating {
                navigate(&format!("{href}?created"), Default::default());
            }
        }
        Some(Err(e)) => {
            saved.set(false);
            errors.0.set(Some(e));
        }
        None => {}
    });
    let base_for_save = base.clone();
    let on_save = Callback::new(move |()| {
        show_errors.set(true);
        saved.set(false);
        let mut errs = LocalErrors::default();
        let mut ls = base_for_save.clone();
        ls.id = id.get_untracked().trim().to_owned();
        ls.title = title.get_untracked();
        ls.application = application.get_untracked();
        ls.agent = agent.get_untracked();
        ls.kind = LaunchKind::parse(&kind.get_untracked()).unwrap_or(LaunchKind::Scheduled);
        ls.pool = Some(pool.get_untracked()).filter(|p| !p.is_empty());
        let st: Vec<ParamState> = states.get_untracked().into_iter().map(|b| b.0).collect();
        ls.parameters = collect_values(&st);
        let param_errors = collect_errors(&st, &ls.application);
        if let Some(m) = parse_num::<u32>(
            &mut errs,
            "failure_threshold",
            &threshold.get_untracked(),
            "a whole number",
        ) {
            ls.failure_threshold = m;
        }
        if ls.kind == LaunchKind::Stream {
            ls.stream_mode = Some(StreamMode::parse(&mode.get_untracked()).unwrap_or_default());
            let mut headers = BTreeMap::new();
            for line in filter
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
            delivery.apply(&mut ls, &mut errs);
        } else {
            ls.stream_mode = None;
            ls.filter = None;
        }
        if let Some(d) = parse_duration(
            &mut errs,
            "recovery.start_timeout",
            &start_timeout.get_untracked(),
        ) {
            ls.recovery.start_timeout = d;
        }
        if let Some(d) = parse_duration(
            &mut errs,
            "recovery.work_timeout",
            &work_timeout.get_untracked(),
        ) {
            ls.recovery.work_timeout = d;
        }
        ls.recovery.max_run_time =
            parse_opt_duration(&mut errs, "recovery.max_run_time", &max_run.get_untracked());
        ls.recovery.on_lost = LostPolicy::parse(&on_lost.get_untracked()).unwrap_or_default();
        ls.idle_timeout = if ls.kind == LaunchKind::Scheduled
            && agent_row
                .with_untracked(|a| a.as_ref().is_some_and(|a| a.input == InputKind::Messages))
        {
            parse_opt_duration(&mut errs, "idle_timeout", &idle.get_untracked())
        } else {
            None
        };
        ls.webhook_url = channels.webhook_url();
        ls.webhook_format = channels.webhook_format();
        ls.notify_email = channels.notify_email();
        ls.webhook_events = channels.webhook_events.get_untracked();
        ls.email_events = channels.email_events.get_untracked();
        ls.notify_on_failure = notify_on_failure.get_untracked();
        let blocked = !errs.0.is_empty() || !param_errors.is_empty();
        local.set(errs);
        if blocked {
            errors.0.set(None);
            return;
        }
        let groups = (ls.kind == LaunchKind::Scheduled).then(|| groups.get_untracked());
        save.dispatch(SaveLaunchSetting {
            setting: ls,
            groups,
            create: creating,
        });
    });
    let key = EntityRef::LaunchSetting(base.id.clone());
    let on_delete = {
        let key = key.clone();
        Callback::new(move |()| {
            delete.dispatch(DeleteEntity {
                key: key.clone().into(),
            });
        })
    };
    let server_errors = Callback::new(move |p: String| errors.under(p));
    // Saved values the agent's published schema no longer declares.
    let drift: Vec<String> = view
        .catalog
        .agent(&base.application, &base.agent)
        .map(|a| {
            base.parameters
                .keys()
                .filter(|k| !a.parameters.iter().any(|p| &p.name == *k))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let derived_n = move || {
        threshold
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
    let stream = move || kind.get() == LaunchKind::Stream.as_str();
    let app_for_params = move || application.get();

    view! {
        <h1>{match &existing { Some(e) => format!("Launch setting {}", e.id), None => "New launch setting".into() }}</h1>
        {existing.as_ref().map(|e| view! { <HistoryLink entity_type="launch_setting" id=e.id.clone() /> })}
        {existing.clone().map(|e| view! { <StatusPanel key=Key::LaunchSetting(e.id) role /> })}
        {existing.clone().map(|e| view! { <LaunchSettingOverview id=e.id /> })}
        <form class="card form" data-test="launch-setting-form" on:submit=|ev| ev.prevent_default()>
            <FormBanner errors saved />
            <TextField label="Id" test="field-id" value=id errors=lerr("id") readonly=!creating || !can_edit
                hint="names the broker subscription, e.g. billing.invoice-export.1" />
            <TextField label="Title" test="field-title" value=title errors=lerr("title") readonly=!can_edit />
            <div class="row">
                <SelectField label="Application" test="field-application" value=application options=apps
                    errors=lerr("application") disabled=!creating || !can_edit />
                <SelectField label="Agent" test="field-agent" value=agent options=agents errors=lerr("agent") disabled=!creating || !can_edit />
            </div>
            <div class="row">
                <SelectField label="Kind" test="field-kind" value=kind options=kinds errors=lerr("kind") disabled=!can_edit />
                <SelectField label="Pool" test="field-pool" value=pool options=pools errors=lerr("pool") disabled=!can_edit />
            </div>

            <h2>"Parameters"</h2>
            {existing.clone().map(|e| view! { <PublishedDrift launch_setting=e.id application=e.application /> })}
            {(!drift.is_empty()).then(|| view! {
                <p class="banner warn" data-test="schema-drift">
                    "Saved values for " {drift.join(", ")}
                    " are not in the agent's published schema; saving drops them."
                </p>
            })}
            {move || {
                let st: Vec<ParamState> = states.get().into_iter().map(|b| b.0).collect();
                view! { <ParamForm states=st application=app_for_params() readonly=!can_edit show_errors server_errors /> }
            }}
            <FieldErrors errors=errors.at("parameters") test="parameters" />

            <Show when=stream>
                <h2>"Stream"</h2>
                <div class="row">
                    <SelectField label="Mode" test="field-stream-mode" value=mode errors=lerr("stream_mode") disabled=!can_edit
                        options=vec![
                            (StreamMode::Asap.to_string(), "ASAP — as soon as published".into()),
                            (StreamMode::Delayed.to_string(), "Delayed — after the data queue's delay".into()),
                        ] />
                </div>
                <TextField label="Message filter" test="field-filter" value=filter errors=lerr("filter") readonly=!can_edit multiline=true
                    placeholder="region=eu" hint="one header per line as name=value; every header must match" />
                <h3>"Breaker"</h3>
                <div class="row">
                    <TextField label="Failure threshold M" test="field-threshold" value=threshold errors=lerr("failure_threshold") readonly=!can_edit />
                    <p class="derived" data-test="derived-n">{derived_n}</p>
                </div>
                <DeliveryFieldset fields=delivery errors_at=Callback::new(lerr) can_edit />
            </Show>
            <Show when=move || !stream()>
                <h2>"Schedule groups"</h2>
                <p class="hint">"A scheduled launch setting runs when a group that contains it fires; it must be in at least one."</p>
                <div class="checks" data-test="field-groups">
                    {move || {
                        let choices = group_choices.get();
                        if choices.is_empty() {
                            return view! {
                                <p class="muted">"This application has no schedule group yet. "
                                <a href="/schedule-groups/new">"Create one"</a>" first."</p>
                            }.into_any();
                        }
                        choices.into_iter().map(|(g, text)| {
                            let gid = g.clone();
                            let checked = move || groups.with(|v| v.contains(&gid));
                            let gid2 = g.clone();
                            view! {
                                <label class="field check">
                                    <input type="checkbox" data-test="group-choice" data-group=g.clone() disabled=!can_edit
                                        checked=checked() prop:checked=checked
                                        on:change=move |ev| {
                                            let on = event_target_checked(&ev);
                                            groups.update(|v| {
                                                v.retain(|x| x != &gid2);
                                                if on { v.push(gid2.clone()); }
                                            });
                                        } />
                                    <span>{text}</span>
                                </label>
                            }
                        }).collect_view().into_any()
                    }}
                </div>
                <FieldErrors errors=errors.under("groups".into()) test="groups" />
            </Show>
            <Show when=move || !stream() && is_messages.get()>
                <TextField label="Idle timeout" test="field-idle-timeout" value=idle errors=lerr("idle_timeout") readonly=!can_edit
                    placeholder="e.g. 1m" hint="a scheduled run of a messages agent ends when its queue stays empty this long" />
            </Show>
            <h2>"Recovery"</h2>
            <div class="row">
                <TextField label="Start timeout" test="field-start-timeout" value=start_timeout errors=lerr("recovery.start_timeout") readonly=!can_edit
                    hint="not accepted by then: another node gets it" />
                <TextField label="Work timeout" test="field-work-timeout" value=work_timeout errors=lerr("recovery.work_timeout") readonly=!can_edit
                    hint="no heartbeat by then: the run is lost" />
                <TextField label="Max run time" test="field-max-run-time" value=max_run errors=lerr("recovery.max_run_time") readonly=!can_edit
                    placeholder="no limit" />
                <SelectField label="When lost" test="field-on-lost" value=on_lost errors=lerr("recovery.on_lost") disabled=!can_edit
                    options=word_options(&[(LostPolicy::Restart, "dispatch again"), (LostPolicy::Fail, "end as failed")]) />
            </div>
            <ChannelFields channels errors can_edit whose="this launch setting" placeholder="the application's"
                webhook_hint="overrides the application's webhook for this launch setting" />
            <CheckField label="Tell every failed activation (not only breaker trips)" test="field-notify-on-failure"
                value=notify_on_failure disabled=!can_edit />
            <FormActions can_edit creating pending=save.pending() on_save on_delete />
        </form>
        {(!creating).then(|| view! {
            <crate::components::webhook::WebhookTools key=crate::api::catalog::Key::LaunchSetting(base.id.clone())
                can_edit can_operate=role.allows(Role::Operator) />
        })}
    }
}

/// A `ParamState` in a memo: states compare by identity of their signals.
#[derive(Clone)]
struct ParamStateBox(ParamState);

impl PartialEq for ParamStateBox {
    fn eq(&self, other: &Self) -> bool {
        self.0.items == other.0.items
    }
}
