//! The schedule group page: cron and time zone with a live preview of the next fire times,
//! misfire policy, and the ordered members — added from eligible launch settings only,
//! reordered by drag-and-drop or with the move buttons, saved explicitly.

use crate::{
    api::catalog::{
        AnyEntity, CatalogView, DeleteEntity, Key, SaveEntity, entity_href, server_now,
    },
    components::{
        forms::*,
        status::StatusPanel,
        webhook::{ChannelFields, ChannelSignals, WebhookTools},
        when::HistoryLink,
    },
    pages::entities::{EntityPage, delete_action, save_action},
};
use am_domain::{
    catalog::{Catalog, Concurrency, LaunchKind, MisfirePolicy, ScheduleGroup},
    roles::Role,
    schedule::{next_fire_times, parse_time_zone},
    usage::EntityRef,
};
use chrono::{DateTime, Utc};
use leptos::prelude::*;

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

/// Concurrency of the agent a launch setting runs.
fn concurrency_of(c: &Catalog, ls: &str) -> Option<Concurrency> {
    let l = c.launch_setting(ls)?;
    c.agent(&l.application, &l.agent).map(|a| a.concurrency)
}

/// Launch settings that may join: same application, scheduled, same concurrency mode as the
/// members already there, not a member yet.
fn eligible(c: &Catalog, application: &str, members: &[String]) -> Vec<(String, String)> {
    let mode = members.first().and_then(|m| concurrency_of(c, m));
    c.launch_settings
        .iter()
        .filter(|l| l.application == application && l.kind == LaunchKind::Scheduled)
        .filter(|l| !members.contains(&l.id))
        .filter(|l| mode.is_none() || concurrency_of(c, &l.id) == mode)
        .map(|l| {
            let mode = match concurrency_of(c, &l.id) {
                Some(Concurrency::Many) => "MANY",
                Some(Concurrency::Any) => "ANY",
                None => "?",
            };
            (
                l.id.clone(),
                format!("{} — agent {} ({mode})", l.id, l.agent),
            )
        })
        .collect()
}

fn move_item(v: &mut Vec<String>, from: usize, to: usize) {
    if from < v.len() && to < v.len() && from != to {
        let item = v.remove(from);
        v.insert(to, item);
    }
}

#[component]
fn ScheduleGroupForm(existing: Option<ScheduleGroup>, view: CatalogView) -> impl IntoView {
    let creating = existing.is_none();
    // A disabled group fires nothing: its page says so instead of listing fire times.
    let disabled = existing.as_ref().is_some_and(|g| !g.enabled);
    let role = view.role;
    let can_edit = role.allows(Role::Admin);
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
        webhook_url: None,
        webhook_secret: None,
        webhook_format: Default::default(),
        notify_email: None,
        webhook_events: Vec::new(),
        email_events: Vec::new(),
        members: vec![],
    });
    let id = RwSignal::new(base.id.clone());
    let title = RwSignal::new(base.title.clone());
    let application = RwSignal::new(base.application.clone());
    let cron = RwSignal::new(base.cron.clone());
    let tz = RwSignal::new(base.time_zone.clone());
    let misfire = RwSignal::new(
        match base.misfire {
            MisfirePolicy::FireOnceNow => "fire-once-now",
            MisfirePolicy::Skip => "skip",
        }
        .to_owned(),
    );
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
    let channels = ChannelSignals::new(
        base.webhook_url.as_deref(),
        base.webhook_format,
        base.notify_email.as_deref(),
        &base.webhook_events,
        &base.email_events,
    );
    let members = RwSignal::new(base.members.clone());
    let dirty = RwSignal::new(false);
    let dragging = RwSignal::new(None::<usize>);
    let drop_target = RwSignal::new(None::<usize>);
    let add_choice = RwSignal::new(String::new());
    // Read out by screen readers after a move.
    let announce = RwSignal::new(String::new());

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

    let apps: Vec<(String, String)> = view
        .catalog
        .applications
        .iter()
        .map(|a| (a.id.clone(), a.id.clone()))
        .collect();
    let choices = Signal::derive(move || {
        let app = application.get();
        let m = members.get();
        catalog.with_value(|c| eligible(c, &app, &m))
    });
    Effect::new(move |_| {
        let list = choices.get();
        if !list.iter().any(|(v, _)| *v == add_choice.get_untracked()) {
            add_choice.set(list.first().map(|(v, _)| v.clone()).unwrap_or_default());
        }
    });

    let base_for_save = base.clone();
    let on_save = Callback::new(move |()| {
        let mut g = base_for_save.clone();
        g.id = id.get_untracked().trim().to_owned();
        g.title = title.get_untracked();
        g.application = application.get_untracked();
        g.cron = cron.get_untracked().trim().to_owned();
        g.time_zone = tz.get_untracked().trim().to_owned();
        g.misfire = if misfire.get_untracked() == "skip" {
            MisfirePolicy::Skip
        } else {
            MisfirePolicy::FireOnceNow
        };
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
        g.webhook_url = channels.webhook_url();
        g.webhook_format = channels.webhook_format();
        g.notify_email = channels.notify_email();
        g.webhook_events = channels.webhook_events.get_untracked();
        g.email_events = channels.email_events.get_untracked();
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
    let shift = move |i: usize, delta: isize| {
        let j = i as isize + delta;
        members.update(|v| {
            if j >= 0 && (j as usize) < v.len() {
                move_item(v, i, j as usize);
                announce.set(format!(
                    "{} is now number {} of {}",
                    v[j as usize],
                    j + 1,
                    v.len()
                ));
            }
        });
        dirty.set(true);
        // Keep the keyboard where the moved member went.
        #[cfg(feature = "hydrate")]
        {
            let target = if j >= 0 { j as usize } else { i };
            request_animation_frame(move || {
                let sel = format!(
                    "[data-test=\"member\"][data-index=\"{target}\"] [data-test=\"{}\"]",
                    if delta < 0 {
                        "member-up"
                    } else {
                        "member-down"
                    }
                );
                if let Ok(Some(el)) = document().query_selector(&sel) {
                    use leptos::wasm_bindgen::JsCast;
                    if let Ok(el) = el.dyn_into::<leptos::web_sys::HtmlElement>() {
                        let _ = el.focus();
                    }
                }
            });
        }
    };

    let members_view = move || {
        let list = members.get();
        let n = list.len();
        if n == 0 {
            return view! { <p class="muted" data-test="no-members">"No member yet."</p> }
                .into_any();
        }
        view! {
            <ol class="members" data-test="members">
                {list.into_iter().enumerate().map(|(i, m)| {
                    let href = entity_href(&EntityRef::LaunchSetting(m.clone()));
                    let agent = catalog.with_value(|c| c.launch_setting(&m).map(|l| l.agent.clone()).unwrap_or_default());
                    view! {
                        <li
                            class="member"
                            class:drop-target=move || drop_target.get() == Some(i) && dragging.get() != Some(i)
                            data-test="member"
                            data-id=m.clone()
                            data-index=i.to_string()
                            draggable=if can_edit { "true" } else { "false" }
                            on:dragstart=move |_| dragging.set(Some(i))
                            on:dragover=move |ev| { ev.prevent_default(); drop_target.set(Some(i)); }
                            on:dragleave=move |_| drop_target.set(None)
                            on:dragend=move |_| { dragging.set(None); drop_target.set(None); }
                            on:drop=move |ev| {
                                ev.prevent_default();
                                if let Some(from) = dragging.get_untracked() {
                                    members.update(|v| {
                                        move_item(v, from, i);
                                        if let Some(m) = v.get(i) {
                                            announce.set(format!("{m} is now number {} of {}", i + 1, v.len()));
                                        }
                                    });
                                    dirty.set(true);
                                }
                                dragging.set(None);
                                drop_target.set(None);
                            }
                        >
                            {can_edit.then(|| view! { <span class="grip" aria-hidden="true" title="Drag to reorder">"⠿"</span> })}
                            <span class="pos" data-test="member-position">{(i + 1).to_string()}</span>
                            <a href=href>{m.clone()}</a>
                            <span class="muted">{agent}</span>
                            {can_edit.then(|| {
                                let m2 = m.clone();
                                view! {
                                    <span class="item-buttons">
                                        <button type="button" class="icon" data-test="member-up" aria-label=format!("Move {m} up") title="Move up"
                                            disabled=i == 0 on:click=move |_| shift(i, -1)>"↑"</button>
                                        <button type="button" class="icon" data-test="member-down" aria-label=format!("Move {m} down") title="Move down"
                                            disabled=i + 1 == n on:click=move |_| shift(i, 1)>"↓"</button>
                                        <button type="button" class="icon" data-test="member-remove" aria-label=format!("Remove {m}") title="Remove"
                                            on:click=move |_| { members.update(|v| v.retain(|x| x != &m2)); dirty.set(true); }>"✕"</button>
                                    </span>
                                }
                            })}
                        </li>
                    }
                }).collect_view()}
            </ol>
        }.into_any()
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
                options=options(&[("fire-once-now", "fire once now — run a missed fire once when the manager is back"), ("skip", "skip — drop missed fires")]) />
            <div class="field">
                <CheckField label="Continue after a failed member" test="field-continue-on-failure" value=continue_on_failure disabled=!can_edit />
                <p class="hint">"Unticked, a failed member ends the run: the group fails and the members after it are skipped."</p>
            </div>
            <TextField label="Tell when no run succeeded for" test="field-expect-success-within" value=success_window
                errors=window_errors readonly=!can_edit
                hint="Dead man's switch, e.g. 26h for a nightly group: schedule_missed is told once until a run succeeds again. Empty: off." />

            <h2>"Members, in run order"</h2>
            <p class="hint">"Members run one after another. "
                {can_edit.then_some("Drag a member, or use its ↑ ↓ buttons, to change the order; then save.")}</p>
            {members_view}
            <p class="sr-only" aria-live="polite" data-test="order-announcement">{move || announce.get()}</p>
            <FieldErrors errors=errors.under("members".into()) test="members" />
            {can_edit.then(|| view! {
                <div class="add-member">
                    {move || {
                        if choices.with(Vec::is_empty) {
                            view! {
                                <p class="muted" data-test="no-eligible">
                                    "No other scheduled launch setting of this application with the same concurrency mode. "
                                    "To add one, "<a href="/launch-settings/new">"create a scheduled launch setting"</a>
                                    " and tick this group there."
                                </p>
                            }.into_any()
                        } else {
                            view! {
                                <SelectField label="Add a launch setting" test="member-choice" value=add_choice options=choices
                                    hint="only scheduled launch settings of this application with the members' concurrency mode" />
                                <button type="button" data-test="member-add" on:click=move |_| {
                                    let c = add_choice.get_untracked();
                                    if !c.is_empty() {
                                        members.update(|v| v.push(c));
                                        dirty.set(true);
                                    }
                                }>"Add"</button>
                            }.into_any()
                        }
                    }}
                </div>
            })}
            <Show when=move || dirty.get()>
                <p class="banner warn" data-test="unsaved">"The order has changed: save to keep it."</p>
            </Show>
            <h2>"Notifications about the group"</h2>
            <ChannelFields channels errors can_edit whose="this group" placeholder="the application's"
                webhook_hint="overrides the application's webhook for what is told about the group: disabled, schedule missed" />
            <FormActions can_edit creating pending=save.pending() on_save on_delete />
        </form>
        {(!creating).then(|| view! {
            <WebhookTools key=Key::ScheduleGroup(base.id.clone()) can_edit can_operate=role.allows(Role::Operator) />
        })}
    }
}
