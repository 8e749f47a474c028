//! The schedule group page: cron and time zone with a live preview of the next fire times,
//! misfire policy, and the ordered members — added from eligible launch settings only,
//! reordered by drag-and-drop or with the move buttons, saved explicitly.

use crate::{
    api::catalog::{AnyEntity, CatalogView, DeleteEntity, Key, SaveEntity},
    components::{
        forms::*,
        status::StatusPanel,
        webhook::{ChannelFields, ChannelSignals, WebhookTools},
        when::HistoryLink,
    },
    pages::entities::{EntityPage, delete_action, save_action},
};
use am_domain::{
    catalog::{MisfirePolicy, ScheduleGroup},
    roles::Operation,
    usage::EntityRef,
};
use leptos::prelude::*;
use members::MembersFieldset;
use schedule::{ScheduleFields, ScheduleFieldset};

mod members;
mod schedule;

#[component]
pub fn ScheduleGroupPage() -> impl IntoView {
    view! {
        <EntityPage
            noun="schedule group"
            list="/schedule-groups"
            find=|v, p| match p.get("id") {
                None => Some(None),
                Some(id) => v.catalog.schedule_group(&id).cloned().map(Some),
            }
            form=|e, v| view! { <ScheduleGroupForm existing=e view=v /> }.into_any()
        />
    }
}

#[component]
fn ScheduleGroupForm(existing: Option<ScheduleGroup>, view: CatalogView) -> impl IntoView {
    let creating = existing.is_none();
    // A disabled group fires nothing: its page says so instead of listing fire times.
    let disabled = existing.as_ref().is_some_and(|g| !g.enabled);
    let role = view.role;
    let can_edit = role.may(Operation::EditCatalog);
    let catalog = StoredValue::new(view.catalog.clone());
    let errors = FormErrors::new();
    let (save, saved) = save_action(errors, creating);
    let delete = delete_action(errors, "/schedule-groups");
    let base = existing.clone().unwrap_or(ScheduleGroup {
        continue_on_failure: false,
        id: String::new(),
        title: String::new(),
        application: view
            .catalog
            .applications
            .first()
            .map(|a| a.id.clone())
            .unwrap_or_default(),
        cron: "0 2 * * *".into(),
        time_zone: "UTC".into(),
        misfire: MisfirePolicy::FireOnceNow,
        enabled: true,
        expect_success_within: None,
        channels: Default::default(),
        members: vec![],
    });
    let id = RwSignal::new(base.id.clone());
    let title = RwSignal::new(base.title.clone());
    let application = RwSignal::new(base.application.clone());
    let schedule = ScheduleFields::new(&base);
    let continue_on_failure = RwSignal::new(base.continue_on_failure);
    let success_window = RwSignal::new(
        base.expect_success_within
            .map(|d| d.to_string())
            .unwrap_or_default(),
    );
    let local = RwSignal::new(LocalErrors::default());
    let window_errors = {
        let server = errors.at("expect_success_within");
        Signal::derive(move || {
            let mut v: Vec<String> = local.with(|l| {
                l.0.get("expect_success_within")
                    .cloned()
                    .into_iter()
                    .collect()
            });
            v.extend(server.get());
            v
        })
    };
    let channels = ChannelSignals::new(&base.channels);
    let members = RwSignal::new(base.members.clone());
    let dirty = RwSignal::new(false);

    let apps: Vec<(String, String)> = view
        .catalog
        .applications
        .iter()
        .map(|a| (a.id.clone(), a.id.clone()))
        .collect();
    let base_for_save = base.clone();
    let on_save = Callback::new(move |()| {
        let mut g = base_for_save.clone();
        g.id = id.get_untracked().trim().to_owned();
        g.title = title.get_untracked();
        g.application = application.get_untracked();
        schedule.apply(&mut g);
        g.continue_on_failure = continue_on_failure.get_untracked();
        let mut errs = LocalErrors::default();
        g.expect_success_within = parse_opt_duration(
            &mut errs,
            "expect_success_within",
            &success_window.get_untracked(),
        );
        let blocked = !errs.0.is_empty();
        local.set(errs);
        if blocked {
            return;
        }
        g.channels = channels.channels();
        g.members = members.get_untracked();
        save.dispatch(SaveEntity {
            entity: AnyEntity::ScheduleGroup(g),
            create: creating,
        });
    });
    Effect::new(move |_| {
        if let Some(Ok(_)) = save.value().get() {
            dirty.set(false);
        }
    });
    let key = EntityRef::ScheduleGroup(base.id.clone());
    let on_delete = {
        let key = key.clone();
        Callback::new(move |()| {
            delete.dispatch(DeleteEntity {
                key: key.clone().into(),
            });
        })
    };
    view! {
        <h1>{match &existing { Some(e) => format!("Schedule group {}", e.id), None => "New schedule group".into() }}</h1>
        {existing.as_ref().map(|e| view! { <HistoryLink entity_type="schedule_group" id=e.id.clone() /> })}
        {existing.clone().map(|g| view! { <StatusPanel key=Key::ScheduleGroup(g.id) role /> })}
        <form class="card form" data-test="schedule-group-form" on:submit=|ev| ev.prevent_default()>
            <FormBanner errors saved />
            <TextField label="Id" test="field-id" value=id errors=errors.at("id") readonly=!creating || !can_edit />
            <TextField label="Title" test="field-title" value=title errors=errors.at("title") readonly=!can_edit />
            <SelectField label="Application" test="field-application" value=application options=apps
                errors=errors.at("application") disabled=!creating || !can_edit />
            <ScheduleFieldset fields=schedule errors disabled can_edit />
            <div class="field">
                <CheckField label="Continue after a failed member" test="field-continue-on-failure" value=continue_on_failure disabled=!can_edit />
                <p class="hint">"Unticked, a failed member ends the run: the group fails and the members after it are skipped."</p>
            </div>
            <TextField label="Tell when no run succeeded for" test="field-expect-success-within" value=success_window
                errors=window_errors readonly=!can_edit
                hint="Dead man's switch, e.g. 26h for a nightly group: schedule_missed is told once until a run succeeds again. Empty: off." />

            <MembersFieldset members dirty catalog application errors can_edit />
            <h2>"Notifications about the group"</h2>
            <ChannelFields channels errors can_edit whose="this group" placeholder="the application's"
                webhook_hint="overrides the application's webhook for what is told about the group: disabled, schedule missed" />
            <FormActions can_edit creating pending=save.pending() on_save on_delete />
        </form>
        {(!creating).then(|| view! {
            <WebhookTools key=Key::ScheduleGroup(base.id.clone()) can_edit can_operate=role.may(Operation::Notify) />
        })}
    }
}
