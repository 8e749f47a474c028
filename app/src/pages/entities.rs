//! Detail pages of applications, pools, data queues and agents: one form each, read-only for
//! viewers, saved through the catalog server functions with errors next to their fields.

use crate::{
    api::catalog::{AnyEntity, CatalogView, DeleteEntity, SaveEntity, load_catalog_view},
    components::{
        forms::*,
        webhook::{ChannelFields, ChannelSignals},
        when::HistoryLink,
    },
    pages::{broker::DataQueueUnrouted, published::ApplicationPublished},
};
use am_domain::{
    HumanDuration,
    catalog::{
        Agent, Application, Concurrency, DataQueue, DataQueueKind, InputKind, OverlapPolicy, Pool,
    },
    roles::Operation,
    usage::EntityRef,
};
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_params_map, use_query_map};

/// Saves through [`SaveEntity`]; after a create it opens the new entity's page.
pub fn save_action(
    errors: FormErrors,
    creating: bool,
) -> (ServerAction<SaveEntity>, RwSignal<bool>) {
    let action = ServerAction::<SaveEntity>::new();
    let saved = just_created();
    follow_saved(action.value().into(), errors, saved, creating);
    (action, saved)
}

/// What a save answered: saved (a new entity opens at its own address, `href`) or its errors.
pub fn follow_saved(
    answer: Signal<Option<Result<String, crate::error::UiError>>>,
    errors: FormErrors,
    saved: RwSignal<bool>,
    creating: bool,
) {
    let navigate = use_navigate();
    Effect::new(move |_| match answer.get() {
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
}

/// Whether the page was opened right after creating its entity (`?created`), so the form says so.
pub fn just_created() -> RwSignal<bool> {
    let created = use_query_map().with_untracked(|q| q.get("created").is_some());
    RwSignal::new(created)
}

/// Deletes through [`DeleteEntity`] and returns to the list.
pub fn delete_action(errors: FormErrors, list: &'static str) -> ServerAction<DeleteEntity> {
    let action = ServerAction::<DeleteEntity>::new();
    let navigate = use_navigate();
    Effect::new(move |_| match action.value().get() {
        Some(Ok(())) => navigate(list, Default::default()),
        Some(Err(e)) => errors.0.set(Some(e)),
        None => {}
    });
    action
}

/// Loads the catalog and hands the entity named by the URL (or none, to create one) to `form`.
#[component]
pub fn EntityPage<F, V>(
    noun: &'static str,
    list: &'static str,
    find: fn(&CatalogView, &leptos_router::params::ParamsMap) -> Option<Option<V>>,
    form: F,
) -> impl IntoView
where
    F: Fn(Option<V>, CatalogView) -> AnyView + Send + Sync + Clone + 'static,
    V: Send + Sync + 'static,
{
    let params = use_params_map();
    let data = Resource::new(move || params.get(), |_| load_catalog_view());
    view! {
        <section>
            <p class="crumbs"><a href=list>{format!("← All {noun}s")}</a></p>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || {
                    let form = form.clone();
                    data.get().map(move |r| match r {
                        Ok(v) => match find(&v, &params.get_untracked()) {
                            Some(existing) => form(existing, v),
                            None => view! {
                                <h1>{format!("No such {noun}")}</h1>
                                <p data-test="not-found">"It may have been deleted or renamed."</p>
                            }.into_any(),
                        },
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    })
                }}
            </Suspense>
        </section>
    }
}

/// `Some(None)` to create, `Some(Some(e))` for an existing one, `None` when it does not exist.
fn by_id<V: Clone>(
    params: &leptos_router::params::ParamsMap,
    find: impl Fn(&str) -> Option<V>,
) -> Option<Option<V>> {
    match params.get("id") {
        None => Some(None),
        Some(id) => find(&id).map(Some),
    }
}

fn heading(noun: &str, id: Option<&str>) -> String {
    match id {
        Some(id) => format!("{} {id}", capitalize(noun)),
        None => format!("New {noun}"),
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// A text field's value: `None` when blank, else trimmed.
pub(crate) fn opt(s: String) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

// ----- applications -----

#[component]
pub fn ApplicationPage() -> impl IntoView {
    view! {
        <EntityPage
            noun="application"
            list="/applications"
            find=|v, p| by_id(p, |id| v.catalog.application(id).cloned())
            form=|e, v| view! { <ApplicationForm existing=e view=v /> }.into_any()
        />
    }
}

#[component]
fn ApplicationForm(existing: Option<Application>, view: CatalogView) -> impl IntoView {
    let creating = existing.is_none();
    let can_edit = view.role.may(Operation::EditCatalog);
    let errors = FormErrors::new();
    let (save, saved) = save_action(errors, creating);
    let delete = delete_action(errors, "/applications");
    let base = existing.clone().unwrap_or(Application {
        id: String::new(),
        title: String::new(),
        default_pool: view
            .catalog
            .pools
            .first()
            .map(|p| p.id.clone())
            .unwrap_or_default(),
        channels: Default::default(),
    });
    let id = RwSignal::new(base.id.clone());
    let title = RwSignal::new(base.title.clone());
    let pool = RwSignal::new(base.default_pool.clone());
    let channels = ChannelSignals::new(&base.channels);
    let pools: Vec<(String, String)> = view
        .catalog
        .pools
        .iter()
        .map(|p| (p.id.clone(), p.id.clone()))
        .collect();
    let on_save = Callback::new(move |()| {
        save.dispatch(SaveEntity {
            entity: AnyEntity::Application(Application {
                id: id.get_untracked().trim().to_owned(),
                title: title.get_untracked(),
                default_pool: pool.get_untracked(),
                channels: channels.channels(),
            }),
            create: creating,
        });
    });
    let app_id = base.id.clone();
    let on_delete = Callback::new(move |()| {
        delete.dispatch(DeleteEntity {
            key: EntityRef::Application(app_id.clone()).into(),
        });
    });
    view! {
        <h1>{heading("application", existing.as_ref().map(|e| e.id.as_str()))}</h1>
        {existing.as_ref().map(|e| view! { <HistoryLink entity_type="application" id=e.id.clone() /> })}
        <form class="card form" data-test="application-form" on:submit=|ev| ev.prevent_default()>
            <FormBanner errors saved />
            <TextField label="Id" test="field-id" value=id errors=errors.at("id") readonly=!creating || !can_edit
                hint="lower-case letters, digits, '.', '_' and '-'; cannot be changed later" />
            <TextField label="Title" test="field-title" value=title errors=errors.at("title") readonly=!can_edit />
            <SelectField label="Default pool" test="field-default-pool" value=pool options=pools
                errors=errors.at("default_pool") disabled=!can_edit hint="used by launch settings that name no pool" />
            <ChannelFields channels errors can_edit whose="the application"
                webhook_hint="gets every notification of the application: breaker trips, disabled items, lost runs and nodes" />
            <FormActions can_edit creating pending=save.pending() on_save on_delete />
        </form>
        {(!creating).then(|| view! {
            <crate::components::webhook::WebhookTools key=crate::api::catalog::Key::Application(base.id.clone())
                can_edit can_operate=view.role.may(Operation::Notify) />
            <ApplicationPublished application=base.id.clone() />
        })}
    }
}

// ----- pools -----

#[component]
pub fn PoolPage() -> impl IntoView {
    view! {
        <EntityPage
            noun="pool"
            list="/pools"
            find=|v, p| by_id(p, |id| v.catalog.pool(id).cloned())
            form=|e, v| view! { <PoolForm existing=e view=v /> }.into_any()
        />
    }
}

#[component]
fn PoolForm(existing: Option<Pool>, view: CatalogView) -> impl IntoView {
    let creating = existing.is_none();
    let can_edit = view.role.may(Operation::EditCatalog);
    let errors = FormErrors::new();
    let (save, saved) = save_action(errors, creating);
    let delete = delete_action(errors, "/pools");
    let base = existing.clone().unwrap_or(Pool {
        id: String::new(),
        title: String::new(),
        hosts: vec![],
    });
    let id = RwSignal::new(base.id.clone());
    let title = RwSignal::new(base.title.clone());
    let hosts = RwSignal::new(base.hosts.join("\n"));
    let on_save = Callback::new(move |()| {
        let list = hosts
            .get_untracked()
            .split(['\n', ','])
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(str::to_owned)
            .collect();
        save.dispatch(SaveEntity {
            entity: AnyEntity::Pool(Pool {
                id: id.get_untracked().trim().to_owned(),
                title: title.get_untracked(),
                hosts: list,
            }),
            create: creating,
        });
    });
    let key = EntityRef::Pool(base.id.clone());
    let on_delete = Callback::new(move |()| {
        delete.dispatch(DeleteEntity {
            key: key.clone().into(),
        });
    });
    view! {
        <h1>{heading("pool", existing.as_ref().map(|e| e.id.as_str()))}</h1>
        {existing.as_ref().map(|e| view! { <HistoryLink entity_type="pool" id=e.id.clone() /> })}
        <form class="card form" data-test="pool-form" on:submit=|ev| ev.prevent_default()>
            <FormBanner errors saved />
            <TextField label="Id" test="field-id" value=id errors=errors.at("id") readonly=!creating || !can_edit />
            <TextField label="Title" test="field-title" value=title errors=errors.at("title") readonly=!can_edit />
            <TextField label="Hosts" test="field-hosts" value=hosts errors=errors.under("hosts".into()) readonly=!can_edit
                multiline=true hint="one host name per line; a host may be in several pools" />
            <FormActions can_edit creating pending=save.pending() on_save on_delete />
        </form>
    }
}

// ----- data queues -----

#[component]
pub fn DataQueuePage() -> impl IntoView {
    view! {
        <EntityPage
            noun="data queue"
            list="/data-queues"
            find=|v, p| by_id(p, |id| v.catalog.data_queue(id).cloned())
            form=|e, v| view! { <DataQueueForm existing=e view=v /> }.into_any()
        />
    }
}

#[component]
fn DataQueueForm(existing: Option<DataQueue>, view: CatalogView) -> impl IntoView {
    let creating = existing.is_none();
    let can_edit = view.role.may(Operation::EditCatalog);
    let errors = FormErrors::new();
    let (save, saved) = save_action(errors, creating);
    let delete = delete_action(errors, "/data-queues");
    let base = existing.clone().unwrap_or(DataQueue {
        id: String::new(),
        title: String::new(),
        kind: DataQueueKind::Queue,
        address: None,
        delay: None,
    });
    let id = RwSignal::new(base.id.clone());
    let title = RwSignal::new(base.title.clone());
    let kind = RwSignal::new(base.kind.as_str().to_owned());
    let address = RwSignal::new(base.address.clone().unwrap_or_default());
    let delay = RwSignal::new(base.delay.map(|d| d.to_string()).unwrap_or_default());
    let delay_error = RwSignal::new(Vec::<String>::new());
    let server_delay = errors.at("delay");
    let on_save = Callback::new(move |()| {
        let d = delay.get_untracked();
        let parsed = match opt(d) {
            None => None,
            Some(t) => match t.parse::<HumanDuration>() {
                Ok(v) => Some(v),
                Err(e) => {
                    delay_error.set(vec![e.to_string()]);
                    return;
                }
            },
        };
        delay_error.set(vec![]);
        save.dispatch(SaveEntity {
            entity: AnyEntity::DataQueue(DataQueue {
                id: id.get_untracked().trim().to_owned(),
                title: title.get_untracked(),
                kind: DataQueueKind::parse(&kind.get_untracked()).unwrap_or(DataQueueKind::Queue),
                address: opt(address.get_untracked()),
                delay: parsed,
            }),
            create: creating,
        });
    });
    let key = EntityRef::DataQueue(base.id.clone());
    let on_delete = Callback::new(move |()| {
        delete.dispatch(DeleteEntity {
            key: key.clone().into(),
        });
    });
    let delay_errors = Signal::derive(move || {
        let mut v = delay_error.get();
        v.extend(server_delay.get());
        v
    });
    view! {
        <h1>{heading("data queue", existing.as_ref().map(|e| e.id.as_str()))}</h1>
        {existing.as_ref().map(|e| view! { <HistoryLink entity_type="data_queue" id=e.id.clone() /> })}
        <form class="card form" data-test="data-queue-form" on:submit=|ev| ev.prevent_default()>
            <FormBanner errors saved />
            <TextField label="Id" test="field-id" value=id errors=errors.at("id") readonly=!creating || !can_edit
                hint="lower-case letters, digits, '.', '_' and '-'" />
            <TextField label="Title" test="field-title" value=title errors=errors.at("title") readonly=!can_edit />
            <SelectField label="Kind" test="field-kind" value=kind disabled=!can_edit
                options=word_options(&[(DataQueueKind::Queue, "point to point"), (DataQueueKind::Topic, "every launch setting gets a copy")]) />
            <TextField label="Address" test="field-address" value=address errors=errors.at("address") readonly=!can_edit
                hint="broker exchange producers publish to; the id when empty" />
            <TextField label="Delay" test="field-delay" value=delay errors=delay_errors readonly=!can_edit
                placeholder="e.g. 5m" hint="how long messages wait before Delayed stream launch settings get them" />
            <FormActions can_edit creating pending=save.pending() on_save on_delete />
        </form>
        {(!creating).then(|| view! { <DataQueueUnrouted id=base.id.clone() /> })}
    }
}

// ----- agents -----

#[component]
pub fn AgentPage() -> impl IntoView {
    view! {
        <EntityPage
            noun="agent"
            list="/agents"
            find=|v, p| match (p.get("application"), p.get("id")) {
                (Some(a), Some(id)) => v.catalog.agent(&a, &id).cloned().map(Some),
                _ => Some(None),
            }
            form=|e, v| view! { <AgentForm existing=e view=v /> }.into_any()
        />
    }
}

#[component]
fn AgentForm(existing: Option<Agent>, view: CatalogView) -> impl IntoView {
    let creating = existing.is_none();
    let can_edit = view.role.may(Operation::EditCatalog);
    let errors = FormErrors::new();
    let (save, saved) = save_action(errors, creating);
    let delete = delete_action(errors, "/agents");
    let base = existing.clone().unwrap_or(Agent {
        application: view
            .catalog
            .applications
            .first()
            .map(|a| a.id.clone())
            .unwrap_or_default(),
        id: String::new(),
        title: String::new(),
        input: InputKind::Standalone,
        data_queue: None,
        concurrency: Concurrency::Any,
        overlap: OverlapPolicy::Skip,
        parameters: vec![],
    });
    let application = RwSignal::new(base.application.clone());
    let id = RwSignal::new(base.id.clone());
    let title = RwSignal::new(base.title.clone());
    let input = RwSignal::new(base.input.as_str().to_owned());
    let queue = RwSignal::new(base.data_queue.clone().unwrap_or_default());
    let concurrency = RwSignal::new(base.concurrency.as_str().to_owned());
    let overlap = RwSignal::new(base.overlap.as_str().to_owned());
    let apps: Vec<(String, String)> = view
        .catalog
        .applications
        .iter()
        .map(|a| (a.id.clone(), a.id.clone()))
        .collect();
    let mut queues: Vec<(String, String)> = vec![(String::new(), "— none —".into())];
    queues.extend(
        view.catalog
            .data_queues
            .iter()
            .map(|q| (q.id.clone(), q.id.clone())),
    );
    let published = !base.parameters.is_empty();
    let params = base.parameters.clone();
    let base_for_save = base.clone();
    let on_save = Callback::new(move |()| {
        let mut a = base_for_save.clone();
        a.application = application.get_untracked();
        a.id = id.get_untracked().trim().to_owned();
        a.title = title.get_untracked();
        a.input = InputKind::parse(&input.get_untracked()).unwrap_or(InputKind::Standalone);
        a.data_queue = if a.input == InputKind::Messages {
            opt(queue.get_untracked())
        } else {
            None
        };
        a.concurrency =
            Concurrency::parse(&concurrency.get_untracked()).unwrap_or(Concurrency::Any);
        a.overlap = OverlapPolicy::parse(&overlap.get_untracked()).unwrap_or(OverlapPolicy::Skip);
        save.dispatch(SaveEntity {
            entity: AnyEntity::Agent(a),
            create: creating,
        });
    });
    let key = EntityRef::agent(&base.application, &base.id);
    let on_delete = Callback::new(move |()| {
        delete.dispatch(DeleteEntity {
            key: key.clone().into(),
        });
    });
    view! {
        <h1>{heading("agent", existing.as_ref().map(|e| e.id.as_str()))}</h1>
        {existing.as_ref().map(|e| view! { <HistoryLink entity_type="agent" id=format!("{}/{}", e.application, e.id) /> })}
        {existing.as_ref().filter(|e| e.needs_data_queue()).map(|_| view! {
            <p class="banner warn" data-test="agent-needs-data-queue">
                "Needs a data queue: its nodes published it with one that is not in the catalog. "
                "Pick one below; until then it can have no launch setting."
            </p>
        })}
        <form class="card form" data-test="agent-form" on:submit=|ev| ev.prevent_default()>
            <FormBanner errors saved />
            <SelectField label="Application" test="field-application" value=application options=apps
                errors=errors.at("application") disabled=!creating || !can_edit />
            <TextField label="Id" test="field-id" value=id errors=errors.at("id") readonly=!creating || !can_edit
                hint="unique in its application" />
            <TextField label="Title" test="field-title" value=title errors=errors.at("title") readonly=!can_edit />
            <SelectField label="Input" test="field-input" value=input errors=errors.at("input") disabled=!creating || !can_edit
                options=word_options(&[(InputKind::Standalone, "run by schedule"), (InputKind::Messages, "consumes a data queue")])
                hint="owned by the agent's code; nodes publish it" />
            <Show when=move || input.get() == InputKind::Messages.as_str()>
                <SelectField label="Data queue" test="field-data-queue" value=queue options=queues.clone()
                    errors=errors.at("data_queue") disabled=!can_edit />
            </Show>
            <SelectField label="Concurrency" test="field-concurrency" value=concurrency errors=errors.at("concurrency") disabled=!can_edit
                options=word_options(&[(Concurrency::Any, "one node of the pool"), (Concurrency::Many, "every node of the pool")]) />
            <SelectField label="Overlap policy" test="field-overlap" value=overlap errors=errors.at("overlap") disabled=!can_edit
                options=word_options(&[(OverlapPolicy::Allow, "run beside the running one"), (OverlapPolicy::Skip, "refuse the new run"), (OverlapPolicy::Interrupt, "stop the running one first")]) />
            <FormActions can_edit creating pending=save.pending() on_save on_delete />
        </form>
        <div class="card">
            <h2>"Parameter schema"</h2>
            {if published {
                view! {
                    <p class="muted">"Published by the agent's code; read-only here."</p>
                    <div class="table-wrap">
                    <table class="list" data-test="agent-schema">
                        <thead><tr><th>"Name"</th><th>"Type"</th><th>"Required"</th><th>"Default"</th><th>"Bounds"</th></tr></thead>
                        <tbody>
                            {params.into_iter().map(|p| view! {
                                <tr>
                                    <td><code>{p.name.clone()}</code>" "<span class="muted">{p.title.clone()}</span></td>
                                    <td>{format!("{}{}", p.ty, if p.array { "[]" } else { "" })}</td>
                                    <td>{if p.required { "yes" } else { "no" }}</td>
                                    <td>{p.default.as_ref().map(|d| d.to_string()).unwrap_or_default()}</td>
                                    <td>{crate::components::params::bounds_text(&p)}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    </div>
                }.into_any()
            } else {
                view! { <p class="muted">"No parameters published yet."</p> }.into_any()
            }}
        </div>
    }
}
