//! The launch setting page: which agent runs, where, with which typed parameters; the stream
//! options (mode, filter, breaker, retries, dead letters) or the schedule groups; enable and
//! disable for operators.

mod choices;
mod delivery;
mod groups;
mod recovery;
mod stream;

use crate::{
    api::catalog::{CatalogView, DeleteEntity, Key, SaveLaunchSetting},
    components::{
        forms::*,
        overview::LaunchSettingOverview,
        param_state::{ParamState, collect_errors, collect_values, param_states},
        params::ParamForm,
        status::StatusPanel,
        webhook::{ChannelFields, ChannelSignals},
        when::HistoryLink,
    },
    pages::{
        drift::PublishedDrift,
        entities::{EntityPage, delete_action, follow_saved, just_created},
    },
};
use am_domain::{
    catalog::{Catalog, InputKind, LaunchKind, LaunchSetting},
    roles::Operation,
    usage::EntityRef,
};
use choices::Choices;
use groups::GroupsFieldset;
use leptos::prelude::*;
use recovery::{RecoveryFields, RecoveryFieldset};
use stream::{StreamFields, StreamFieldset};

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
        channels: Default::default(),
        notify_on_failure: false,
    }
}

#[component]
fn LaunchSettingForm(existing: Option<LaunchSetting>, view: CatalogView) -> impl IntoView {
    let creating = existing.is_none();
    let role = view.role;
    let can_edit = role.may(Operation::EditCatalog);
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
    let stream_fields = StreamFields::new(&base);
    let recovery = RecoveryFields::new(&base);
    let groups = RwSignal::new(
        view.catalog
            .schedule_groups
            .iter()
            .filter(|g| g.members.contains(&base.id) && !base.id.is_empty())
            .map(|g| g.id.clone())
            .collect::<Vec<_>>(),
    );
    let channels = ChannelSignals::new(&base.channels);
    let notify_on_failure = RwSignal::new(base.notify_on_failure);
    let local = RwSignal::new(LocalErrors::default());
    let show_errors = RwSignal::new(false);

    let states = param_memo(catalog, application, agent, &base);
    let agent_row = Memo::new(move |_| {
        let (app, ag) = (application.get(), agent.get());
        catalog.with_value(|c| c.agent(&app, &ag).cloned())
    });
    let is_messages = Signal::derive(move || {
        agent_row.with(|a| a.as_ref().is_some_and(|a| a.input == InputKind::Messages))
    });

    let choices = Choices::new(catalog, application, agent, kind, is_messages);

    let lerr = move |p: &'static str| both_errors(errors, local, p);

    // Save.
    let save = ServerAction::<SaveLaunchSetting>::new();
    let saved = just_created();
    follow_saved(save.value().into(), errors, saved, creating);
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
        stream_fields.apply(&mut ls, &mut errs);
        let messages_agent = agent_row
            .with_untracked(|a| a.as_ref().is_some_and(|a| a.input == InputKind::Messages));
        recovery.apply(&mut ls, &mut errs, messages_agent);
        ls.channels = channels.channels();
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
    let drift = undeclared(&view.catalog, &base);
    let stream = move || kind.get() == LaunchKind::Stream.as_str();

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
                <SelectField label="Application" test="field-application" value=application options=choices.apps.clone()
                    errors=lerr("application") disabled=!creating || !can_edit />
                <SelectField label="Agent" test="field-agent" value=agent options=choices.agents errors=lerr("agent") disabled=!creating || !can_edit />
            </div>
            <div class="row">
                <SelectField label="Kind" test="field-kind" value=kind options=choices.kinds errors=lerr("kind") disabled=!can_edit />
                <SelectField label="Pool" test="field-pool" value=pool options=choices.pools errors=lerr("pool") disabled=!can_edit />
            </div>

            <ParamsSection existing=existing.clone() drift states application can_edit show_errors errors />

            <Show when=stream>
                <StreamFieldset fields=stream_fields errors_at=Callback::new(lerr) can_edit />
            </Show>
            <Show when=move || !stream()>
                <GroupsFieldset groups choices=choices.groups errors=errors.under("groups".into()) can_edit />
            </Show>
            <Show when=move || !stream() && is_messages.get()>
                <TextField label="Idle timeout" test="field-idle-timeout" value=recovery.idle errors=lerr("idle_timeout") readonly=!can_edit
                    placeholder="e.g. 1m" hint="a scheduled run of a messages agent ends when its queue stays empty this long" />
            </Show>
            <RecoveryFieldset fields=recovery errors_at=Callback::new(lerr) can_edit />
            <ChannelFields channels errors can_edit whose="this launch setting" placeholder="the application's"
                webhook_hint="overrides the application's webhook for this launch setting" />
            <CheckField label="Tell every failed activation (not only breaker trips)" test="field-notify-on-failure"
                value=notify_on_failure disabled=!can_edit />
            <FormActions can_edit creating pending=save.pending() on_save on_delete />
        </form>
        {(!creating).then(|| view! {
            <crate::components::webhook::WebhookTools key=crate::api::catalog::Key::LaunchSetting(base.id.clone())
                can_edit can_operate=role.may(Operation::Notify) />
        })}
    }
}

/// The agent's parameters: each with its control and errors, and what the published schema no
/// longer declares (`drift`: the saved values a save drops).
#[component]
fn ParamsSection(
    existing: Option<LaunchSetting>,
    drift: Vec<String>,
    states: Memo<Vec<ParamStateBox>>,
    application: RwSignal<String>,
    can_edit: bool,
    show_errors: RwSignal<bool>,
    errors: FormErrors,
) -> impl IntoView {
    let server_errors = Callback::new(move |p: String| errors.under(p));
    view! {
        <h2>"Parameters"</h2>
        {existing.map(|e| view! { <PublishedDrift launch_setting=e.id application=e.application /> })}
        {(!drift.is_empty()).then(|| view! {
            <p class="banner warn" data-test="schema-drift">
                "Saved values for " {drift.join(", ")}
                " are not in the agent's published schema; saving drops them."
            </p>
        })}
        {move || {
            let st: Vec<ParamState> = states.get().into_iter().map(|b| b.0).collect();
            view! { <ParamForm states=st application=application.get() readonly=!can_edit show_errors server_errors /> }
        }}
        <FieldErrors errors=errors.at("parameters") test="parameters" />
    }
}

/// A field's errors: those the form found (`local`) and those the server gave (`errors`).
fn both_errors(
    errors: FormErrors,
    local: RwSignal<LocalErrors>,
    path: &'static str,
) -> Signal<Vec<String>> {
    let server = errors.at(path);
    Signal::derive(move || {
        let mut v: Vec<String> = local.with(|l| l.0.get(path).cloned().into_iter().collect());
        v.extend(server.get());
        v
    })
}

/// Saved values the agent's published schema no longer declares.
fn undeclared(catalog: &Catalog, ls: &LaunchSetting) -> Vec<String> {
    catalog
        .agent(&ls.application, &ls.agent)
        .map(|a| {
            ls.parameters
                .keys()
                .filter(|k| !a.parameters.iter().any(|p| &p.name == *k))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The parameter controls of the chosen agent, rebuilt when another is chosen (the values of
/// the saved agent kept).
fn param_memo(
    catalog: StoredValue<Catalog>,
    application: RwSignal<String>,
    agent: RwSignal<String>,
    base: &LaunchSetting,
) -> Memo<Vec<ParamStateBox>> {
    let saved_params = base.parameters.clone();
    let saved_agent = (base.application.clone(), base.agent.clone());
    Memo::new(move |_| {
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
    })
}

/// A `ParamState` in a memo: states compare by identity of their signals.
#[derive(Clone)]
struct ParamStateBox(ParamState);

impl PartialEq for ParamStateBox {
    fn eq(&self, other: &Self) -> bool {
        self.0.items == other.0.items
    }
}
