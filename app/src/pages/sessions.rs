//! One's own login sessions on the Users page: where and when each started, when it was last
//! used and when it ends; *Sign out* ends another one at once.

use crate::{
    api::sessions::{RevokeSession, list_sessions},
    components::when::Ago,
};
use am_domain::read::accounts::SessionInfo;
use leptos::prelude::*;

#[component]
pub fn Sessions() -> impl IntoView {
    let reload = RwSignal::new(0u32);
    let data = Resource::new(move || reload.get(), |_| list_sessions());
    view! {
        <div class="card" data-test="sessions">
            <h2>"Your sessions"</h2>
            <p class="muted">"Signed-in browsers. A session ends when unused for a while and, at the latest, some days after login; a new password signs out all the others."</p>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || data.get().map(|r| match r {
                    Ok(v) => {
                        let now = v.now;
                        view! {
                            <div class="table-wrap">
                                <table class="list" data-test="session-table">
                                    <thead><tr>
                                        <th>"From"</th><th>"Browser"</th><th>"Signed in"</th><th>"Last used"</th><th>"Ends"</th><th><span class="sr-only">"Actions"</span></th>
                                    </tr></thead>
                                    <tbody>
                                        {v.rows.into_iter().map(|s| view! { <Row s now reload /> }).collect_view()}
                                    </tbody>
                                </table>
                            </div>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="error">{e.detail()}</p> }.into_any(),
                })}
            </Transition>
        </div>
    }
}

#[component]
fn Row(s: SessionInfo, now: chrono::DateTime<chrono::Utc>, reload: RwSignal<u32>) -> impl IntoView {
    let revoke = ServerAction::<RevokeSession>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = revoke.value().get() {
            reload.update(|n| *n += 1);
        }
    });
    let handle = s.handle.clone();
    view! {
        <tr data-test="session-row" data-current=s.current.to_string()>
            <td data-label="From">{s.address.clone().unwrap_or_else(|| "—".into())}</td>
            <td data-label="Browser" class="muted">{s.user_agent.clone().unwrap_or_else(|| "—".into())}</td>
            <td data-label="Signed in"><Ago at=s.created_at now /></td>
            <td data-label="Last used"><Ago at=s.last_seen_at now /></td>
            <td data-label="Ends"><Ago at=s.expires_at now /></td>
            <td class="row-actions">
                {if s.current {
                    view! { <span class="pill" data-test="session-current">"this browser"</span> }.into_any()
                } else {
                    view! {
                        <button type="button" class="small danger" data-test="session-revoke"
                            disabled=move || revoke.pending().get()
                            on:click=move |_| { revoke.dispatch(RevokeSession { handle: handle.clone() }); }>"Sign out"</button>
                    }.into_any()
                }}
                {move || revoke.value().get().and_then(Result::err).map(|e| view! {
                    <span class="error" role="alert">{e.detail()}</span>
                })}
            </td>
        </tr>
    }
}
