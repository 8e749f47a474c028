//! Users: admins list people, create them (with a generated password shown once), change their
//! role, disable or enable them and reset their password; every user changes their own password
//! here, and manages their API tokens (`tokens.rs`). Each change is in the audit log, linked
//! from each row.

use crate::{
    api::users::{ChangePassword, CreateUser, ResetPassword, UpdateUser, UsersView, list_users},
    components::when::Ago,
};
use am_domain::{links, read::accounts::UserInfo, roles::Role};
use leptos::prelude::*;

#[component]
pub fn UsersPage() -> impl IntoView {
    let reload = RwSignal::new(0u32);
    let data = Resource::new(move || reload.get(), |_| list_users());
    // Outside the list, which a reload renders again: the outcome (a password shown once)
    // stays on screen.
    let create = ServerAction::<CreateUser>::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = create.value().get() {
            reload.update(|n| *n += 1);
        }
    });
    view! {
        <section data-test="users">
            <div class="page-head"><h1>"Users"</h1></div>
            {move || create.value().get().map(|r| match r {
                Ok(Some(p)) => view! { <p><Once password=p /></p> }.into_any(),
                Ok(None) => view! { <p class="muted" role="status" data-test="new-user-created">"created"</p> }.into_any(),
                Err(e) => view! { <p class="error" role="alert" data-test="new-user-error">{e.detail()}</p> }.into_any(),
            })}
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <Users v reload create /> }.into_any(),
                    Err(e) => view! { <p class="error" data-test="users-error">{e.detail()}</p> }.into_any(),
                })}
            </Transition>
        </section>
    }
}

#[component]
fn Users(v: UsersView, reload: RwSignal<u32>, create: ServerAction<CreateUser>) -> impl IntoView {
    let now = v.now;
    let me = v.me.clone();
    view! {
        {if v.is_admin {
            view! {
                <NewUser action=create />
                <div class="table-wrap">
                    <table class="list users" data-test="user-table">
                        <thead><tr>
                            <th>"Name"</th><th>"Role"</th><th>"State"</th><th>"Last login"</th><th>"Actions"</th>
                        </tr></thead>
                        <tbody>
                            {v.users.into_iter().map(|u| view! { <Row u now reload /> }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        } else {
            view! { <p class="muted">"Only admins manage users."</p> }.into_any()
        }}
        <OwnPassword me />
        <crate::pages::tokens::Tokens />
        <crate::pages::sessions::Sessions />
    }
}

fn role_options(current: Role) -> impl IntoView {
    Role::ALL
        .iter()
        .map(|r| view! { <option value=r.as_str() selected=*r == current>{r.as_str()}</option> })
        .collect_view()
}

/// A password shown this once, to hand to its user.
#[component]
fn Once(password: String) -> impl IntoView {
    view! {
        <span class="once" role="status">
            "Password (shown once): " <code data-test="generated-password">{password}</code>
        </span>
    }
}

#[component]
fn NewUser(action: ServerAction<CreateUser>) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let role = RwSignal::new(Role::Viewer);
    let password = RwSignal::new(String::new());
    view! {
        <form class="card inline-form" data-test="new-user" on:submit=move |ev| {
            ev.prevent_default();
            action.dispatch(CreateUser {
                name: name.get_untracked(),
                role: role.get_untracked(),
                password: password.get_untracked(),
            });
        }>
            <h2>"New user"</h2>
            <label>
                <span class="label">"Name"</span>
                <input data-test="new-user-name" autocomplete="off" required
                    prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) />
            </label>
            <label>
                <span class="label">"Role"</span>
                <select data-test="new-user-role" on:change=move |ev| {
                    if let Ok(r) = event_target_value(&ev).parse() { role.set(r) }
                }>{role_options(Role::Viewer)}</select>
            </label>
            <label>
                <span class="label">"Password"</span>
                <input type="password" autocomplete="new-password" data-test="new-user-password"
                    placeholder="empty: generate one"
                    prop:value=move || password.get() on:input=move |ev| password.set(event_target_value(&ev)) />
            </label>
            <button type="submit" data-test="new-user-create" disabled=move || action.pending().get()>"Create"</button>
            <p class="muted">"Passwords have at least 12 characters and are not the user name."</p>
        </form>
    }
}

#[component]
fn Row(u: UserInfo, now: chrono::DateTime<chrono::Utc>, reload: RwSignal<u32>) -> impl IntoView {
    let update = ServerAction::<UpdateUser>::new();
    let reset = ServerAction::<ResetPassword>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = update.value().get() {
            reload.update(|n| *n += 1);
        }
    });
    let name = u.name.clone();
    let (role_name, toggle_name, reset_name) = (name.clone(), name.clone(), name.clone());
    let disabled = u.disabled;
    view! {
        <tr data-test="user-row" data-name=name.clone() data-role=u.role.as_str() data-disabled=disabled.to_string()>
            <td data-label="Name">
                <strong>{name.clone()}</strong>
                " " <a class="muted small" href=links::history("user", &name) data-test="user-history">"history"</a>
            </td>
            <td data-label="Role">
                <select data-test="user-role" aria-label=format!("Role of {name}") disabled=move || update.pending().get() on:change=move |ev| {
                    if let Ok(role) = event_target_value(&ev).parse::<Role>() {
                        update.dispatch(UpdateUser { name: role_name.clone(), role: Some(role), disabled: None });
                    }
                }>{role_options(u.role)}</select>
            </td>
            <td data-label="State">
                <span class=if disabled { "pill failed" } else { "pill succeeded" } data-test="user-state">
                    {if disabled { "disabled" } else { "active" }}
                </span>
            </td>
            <td data-label="Last login">
                {match u.last_login_at {
                    Some(t) => view! { <Ago at=t now /> }.into_any(),
                    None => view! { <span class="muted">"never"</span> }.into_any(),
                }}
            </td>
            <td data-label="Actions" class="row-actions">
                <button type="button" class="small" data-test="user-toggle" disabled=move || update.pending().get()
                    on:click=move |_| {
                        update.dispatch(UpdateUser { name: toggle_name.clone(), role: None, disabled: Some(!disabled) });
                    }>
                    {if disabled { "Enable" } else { "Disable" }}
                </button>
                <button type="button" class="small" data-test="user-reset" disabled=move || reset.pending().get()
                    on:click=move |_| { reset.dispatch(ResetPassword { name: reset_name.clone() }); }>
                    "Reset password"
                </button>
                {move || update.value().get().and_then(Result::err).map(|e| view! {
                    <span class="error" role="alert" data-test="user-error">{e.detail()}</span>
                })}
                {move || reset.value().get().map(|r| match r {
                    Ok(p) => view! { <Once password=p /> }.into_any(),
                    Err(e) => view! { <span class="error" role="alert">{e.detail()}</span> }.into_any(),
                })}
            </td>
        </tr>
    }
}

#[component]
fn OwnPassword(me: String) -> impl IntoView {
    let action = ServerAction::<ChangePassword>::new();
    let current = RwSignal::new(String::new());
    let new = RwSignal::new(String::new());
    let again = RwSignal::new(String::new());
    let mismatch = move || again.with(|a| !a.is_empty() && *a != new.get());
    Effect::new(move |_| {
        if let Some(Ok(())) = action.value().get() {
            current.set(String::new());
            new.set(String::new());
            again.set(String::new());
        }
    });
    view! {
        <form class="card inline-form" data-test="own-password" on:submit=move |ev| {
            ev.prevent_default();
            action.dispatch(ChangePassword { current: current.get_untracked(), new: new.get_untracked() });
        }>
            <h2>{format!("Your password ({me})")}</h2>
            <label>
                <span class="label">"Current"</span>
                <input type="password" autocomplete="current-password" data-test="own-current"
                    prop:value=move || current.get() on:input=move |ev| current.set(event_target_value(&ev)) />
            </label>
            <label>
                <span class="label">"New"</span>
                <input type="password" autocomplete="new-password" data-test="own-new"
                    prop:value=move || new.get() on:input=move |ev| new.set(event_target_value(&ev)) />
            </label>
            <label>
                <span class="label">"New, again"</span>
                <input type="password" autocomplete="new-password" data-test="own-again"
                    prop:value=move || again.get() on:input=move |ev| again.set(event_target_value(&ev)) />
            </label>
            <button type="submit" data-test="own-change"
                disabled=move || mismatch() || new.with(String::is_empty) || action.pending().get()>
                "Change password"
            </button>
            {move || mismatch().then(|| view! { <span class="error" role="alert">"the two new passwords differ"</span> })}
            {move || action.value().get().map(|r| match r {
                Ok(()) => view! { <span class="muted" role="status" data-test="own-changed">"changed"</span> }.into_any(),
                Err(e) => view! { <span class="error" role="alert" data-test="own-error">{e.detail()}</span> }.into_any(),
            })}
        </form>
    }
}
