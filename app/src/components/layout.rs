//! The frame around every page: navigation to the sections of the product, the user and logout.

use crate::api::{Logout, whoami};
use leptos::prelude::*;
use leptos_router::components::{A, Outlet};

/// Sections of the admin UI, in the order operators use them.
pub const SECTIONS: &[(&str, &str)] = &[
    ("/", "Dashboard"),
    ("/applications", "Applications"),
    ("/nodes", "Nodes"),
    ("/pools", "Pools"),
    ("/data-queues", "Data queues"),
    ("/broker", "Broker"),
    ("/agents", "Agents"),
    ("/launch-settings", "Launch settings"),
    ("/schema-drift", "Schema drift"),
    ("/schedule-groups", "Schedule groups"),
    ("/activations", "Activations"),
    ("/failures", "Failure logs"),
    ("/dead-letters", "Dead letters"),
    ("/operations", "Operations"),
    ("/audit", "Audit log"),
    ("/users", "Users"),
];

#[component]
pub fn Layout() -> impl IntoView {
    let user = Resource::new(|| (), |_| whoami());
    let logout = ServerAction::<Logout>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = logout.value().get() {
            let _ = window().location().set_href("/login");
        }
    });

    view! {
        <div class="shell">
            <header class="topbar">
                <a class="brand" href="/">"Agent Manager"</a>
                <Suspense fallback=|| ()>
                    {move || {
                        user.get()
                            .map(|u| match u {
                                Ok(u) => {
                                    view! {
                                        <span class="user" data-test="current-user">
                                            {u.name}
                                            <span class="role" data-test="current-role">{u.role.to_string()}</span>
                                        </span>
                                    }
                                        .into_any()
                                }
                                Err(_) => view! { <a href="/login">"Log in"</a> }.into_any(),
                            })
                    }}
                </Suspense>
                <ActionForm action=logout attr:class="logout">
                    <button type="submit" data-test="logout">"Log out"</button>
                </ActionForm>
            </header>
            <nav class="sidebar" aria-label="Sections">
                <ul>
                    {SECTIONS
                        .iter()
                        .map(|(href, label)| {
                            view! {
                                <li>
                                    <A href=*href exact=true attr:data-test=format!("nav-{}", href.trim_start_matches('/'))>
                                        {*label}
                                    </A>
                                </li>
                            }
                        })
                        .collect_view()}
                </ul>
            </nav>
            <main class="content">
                <Outlet />
            </main>
        </div>
    }
}
