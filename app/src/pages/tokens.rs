//! API tokens on the Users page: one's own (admins: everyone's), each with its role, expiry and
//! last use; a new one is shown once; *Revoke* stops one at once.

use crate::{
    api::users::{CreateToken, RevokeToken, TokensView, list_tokens},
    components::when::Ago,
};
use am_domain::{read::accounts::TokenInfo, roles::Role};
use leptos::prelude::*;

#[component]
pub fn Tokens() -> impl IntoView {
    let reload = RwSignal::new(0u32);
    let data = Resource::new(move || reload.get(), |_| list_tokens());
    // Outside the list, which a reload renders again: the new token stays on screen.
    let create = ServerAction::<CreateToken>::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = create.value().get() {
            reload.update(|n| *n += 1);
        }
    });
    view! {
        <div class="card" data-test="tokens">
            <h2>"API tokens"</h2>
            {move || create.value().get().map(|r| match r {
                Ok(token) => view! {
                    <p class="once" role="status">
                        "Token (shown once): " <code data-test="new-token-secret">{token}</code>
                    </p>
                }.into_any(),
                Err(e) => view! { <p class="error" role="alert" data-test="new-token-error">{e.detail()}</p> }.into_any(),
            })}
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => view! { <List v reload create /> }.into_any(),
                    Err(e) => view! { <p class="error">{e.detail()}</p> }.into_any(),
                })}
            </Transition>
        </div>
    }
}

#[component]
fn List(v: TokensView, reload: RwSignal<u32>, create: ServerAction<CreateToken>) -> impl IntoView {
    let (now, all) = (v.now, v.all);
    view! {
        <NewToken role=v.role action=create />
        {if v.rows.is_empty() {
            view! { <p class="muted" data-test="no-tokens">"No token yet."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="list" data-test="token-table">
                        <thead><tr>
                            {all.then(|| view! { <th>"User"</th> })}
                            <th>"Name"</th><th>"Role"</th><th>"Created"</th><th>"Expires"</th><th>"Last used"</th><th><span class="sr-only">"Actions"</span></th>
                        </tr></thead>
                        <tbody>
                            {v.rows.into_iter().map(|t| view! { <Row t now all reload /> }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
    }
}

#[component]
fn NewToken(role: Role, action: ServerAction<CreateToken>) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let chosen = RwSignal::new(None::<Role>);
    let days = RwSignal::new(String::new());
    let allowed: Vec<Role> = Role::ALL.into_iter().filter(|r| role.allows(*r)).collect();
    view! {
        <form class="inline-form" data-test="new-token" on:submit=move |ev| {
            ev.prevent_default();
            action.dispatch(CreateToken {
                name: name.get_untracked(),
                role: chosen.get_untracked(),
                expires_in_days: days.get_untracked().trim().parse().ok(),
            });
        }>
            <label>
                <span class="label">"Name"</span>
                <input data-test="new-token-name" placeholder="grafana" required
                    prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) />
            </label>
            <label>
                <span class="label">"Role"</span>
                <select data-test="new-token-role" on:change=move |ev| chosen.set(event_target_value(&ev).parse().ok())>
                    <option value="">{format!("mine ({role})")}</option>
                    {allowed.into_iter().map(|r| view! { <option value=r.as_str()>{r.as_str()}</option> }).collect_view()}
                </select>
            </label>
            <label>
                <span class="label">"Expires in days"</span>
                <input type="number" min="1" data-test="new-token-days" placeholder="never"
                    prop:value=move || days.get() on:input=move |ev| days.set(event_target_value(&ev)) />
            </label>
            <button type="submit" data-test="new-token-create" disabled=move || action.pending().get()>"Create token"</button>
        </form>
    }
}

#[component]
fn Row(
    t: TokenInfo,
    now: chrono::DateTime<chrono::Utc>,
    all: bool,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let revoke = ServerAction::<RevokeToken>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = revoke.value().get() {
            reload.update(|n| *n += 1);
        }
    });
    let id = t.id;
    let revoked = t.revoked_at.is_some();
    let expired = t.expires_at.is_some_and(|e| e <= now);
    view! {
        <tr data-test="token-row" data-id=id.to_string() data-name=t.name.clone() data-revoked=revoked.to_string()>
            {all.then(|| view! { <td data-label="User">{t.user.clone()}</td> })}
            <td data-label="Name"><strong>{t.name.clone()}</strong> " " <code class="muted">{format!("{}…", t.prefix)}</code></td>
            <td data-label="Role" data-test="token-role">{t.role.as_str()}</td>
            <td data-label="Created"><Ago at=t.created_at now /></td>
            <td data-label="Expires">
                {match t.expires_at {
                    Some(e) => view! { <Ago at=e now /> }.into_any(),
                    None => view! { <span class="muted">"never"</span> }.into_any(),
                }}
            </td>
            <td data-label="Last used">
                {match t.last_used_at {
                    Some(u) => view! {
                        <Ago at=u now />
                        {t.last_used_from.clone().map(|a| view! { <span class="muted">{format!(" from {a}")}</span> })}
                    }.into_any(),
                    None => view! { <span class="muted">"never"</span> }.into_any(),
                }}
            </td>
            <td class="row-actions">
                {if revoked {
                    view! { <span class="pill failed" data-test="token-state">"revoked"</span> }.into_any()
                } else if expired {
                    view! { <span class="pill failed" data-test="token-state">"expired"</span> }.into_any()
                } else {
                    view! {
                        <button type="button" class="small danger" data-test="token-revoke"
                            disabled=move || revoke.pending().get()
                            on:click=move |_| { revoke.dispatch(RevokeToken { id }); }>"Revoke"</button>
                    }.into_any()
                }}
                {move || revoke.value().get().and_then(Result::err).map(|e| view! {
                    <span class="error" role="alert">{e.detail()}</span>
                })}
            </td>
        </tr>
    }
}
