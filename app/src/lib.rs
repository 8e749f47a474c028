//! The admin UI of Agent Manager: Leptos pages rendered on the server and hydrated in the
//! browser. Server functions are thin: they check the caller's role and call one function of
//! `am-services`; validation uses the same `am-domain` rules in the browser and on the server.

#![recursion_limit = "256"]

pub mod api;
pub mod components;
pub mod error;
pub mod pages;

use api::catalog::Kind;
use components::layout::Layout;
use leptos::prelude::*;
use leptos_meta::{MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::{
    SsrMode,
    components::{ParentRoute, Route, Router, Routes},
    path,
};
use pages::{catalog_list::CatalogListPage, entities, launch_settings, schedule_groups};

/// The Content-Security-Policy of the manager's answers (docs/operations.md, "Browser
/// safety"). Scripts come from the manager only, plus the inline scripts that carry `nonce`
/// (a page's hydration); WebAssembly may be compiled; styles may be inline (a progress bar's
/// width), which runs no code; nothing may frame a page.
pub fn content_security_policy(nonce: Option<&str>) -> String {
    let scripts = match nonce {
        Some(n) => format!("script-src 'self' 'nonce-{n}' 'wasm-unsafe-eval'"),
        None => "script-src 'self' 'wasm-unsafe-eval'".to_owned(),
    };
    format!(
        "default-src 'self'; {scripts}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
         connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
         frame-ancestors 'none'"
    )
}

/// Puts the policy with this page's nonce on the answer being rendered.
#[cfg(feature = "ssr")]
fn send_policy() {
    use leptos::nonce::use_nonce;
    if let (Some(nonce), Some(res)) = (use_nonce(), use_context::<leptos_axum::ResponseOptions>())
        && let Ok(v) =
            http::HeaderValue::from_str(&content_security_policy(Some(&nonce.to_string())))
    {
        res.insert_header(http::header::CONTENT_SECURITY_POLICY, v);
    }
}

/// The HTML document around the app, rendered on the server only.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    send_policy();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <link rel="icon" href="data:," />
                <AutoReload options=options.clone() />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    // Lets end-to-end tests wait until the page is interactive before they click.
    Effect::new(move |_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });

    view! {
        <Stylesheet id="leptos" href="/pkg/agent-manager.css" />
        <Title text="Agent Manager" />
        <Router>
            <Routes fallback=|| view! { <pages::NotFound /> }>
                <Route path=path!("/login") view=pages::login::LoginPage />
                <ParentRoute path=path!("") view=Layout>
                    <Route ssr=SsrMode::Async path=path!("") view=pages::dashboard::DashboardPage />
                    <Route ssr=SsrMode::Async path=path!("applications") view=|| view! { <CatalogListPage kind=Kind::Applications /> } />
                    <Route ssr=SsrMode::Async path=path!("applications/new") view=entities::ApplicationPage />
                    <Route ssr=SsrMode::Async path=path!("applications/:id") view=entities::ApplicationPage />
                    <Route ssr=SsrMode::Async path=path!("nodes") view=pages::nodes::NodesPage />
                    <Route ssr=SsrMode::Async path=path!("broker") view=pages::broker::BrokerPage />
                    <Route ssr=SsrMode::Async path=path!("pools") view=|| view! { <CatalogListPage kind=Kind::Pools /> } />
                    <Route ssr=SsrMode::Async path=path!("pools/new") view=entities::PoolPage />
                    <Route ssr=SsrMode::Async path=path!("pools/:id") view=entities::PoolPage />
                    <Route ssr=SsrMode::Async path=path!("data-queues") view=|| view! { <CatalogListPage kind=Kind::DataQueues /> } />
                    <Route ssr=SsrMode::Async path=path!("data-queues/new") view=entities::DataQueuePage />
                    <Route ssr=SsrMode::Async path=path!("data-queues/:id") view=entities::DataQueuePage />
                    <Route ssr=SsrMode::Async path=path!("agents") view=|| view! { <CatalogListPage kind=Kind::Agents /> } />
                    <Route ssr=SsrMode::Async path=path!("agents/new") view=entities::AgentPage />
                    <Route ssr=SsrMode::Async path=path!("agents/:application/:id") view=entities::AgentPage />
                    <Route ssr=SsrMode::Async path=path!("launch-settings") view=|| view! { <CatalogListPage kind=Kind::LaunchSettings /> } />
                    <Route ssr=SsrMode::Async path=path!("launch-settings/new") view=launch_settings::LaunchSettingPage />
                    <Route ssr=SsrMode::Async path=path!("launch-settings/:id") view=launch_settings::LaunchSettingPage />
                    <Route ssr=SsrMode::Async path=path!("schema-drift") view=pages::drift::DriftPage />
                    <Route ssr=SsrMode::Async path=path!("schedule-groups") view=|| view! { <CatalogListPage kind=Kind::ScheduleGroups /> } />
                    <Route ssr=SsrMode::Async path=path!("schedule-groups/new") view=schedule_groups::ScheduleGroupPage />
                    <Route ssr=SsrMode::Async path=path!("schedule-groups/:id") view=schedule_groups::ScheduleGroupPage />
                    <Route ssr=SsrMode::Async path=path!("activations") view=pages::activations::ActivationsPage />
                    <Route ssr=SsrMode::Async path=path!("activations/:id") view=pages::activations::ActivationPage />
                    <Route ssr=SsrMode::Async path=path!("failures") view=pages::failures::FailuresPage />
                    <Route ssr=SsrMode::Async path=path!("failures/:ls") view=pages::failures::FailuresPage />
                    <Route ssr=SsrMode::Async path=path!("failures/:ls/:activation") view=pages::failures::FailuresPage />
                    <Route ssr=SsrMode::Async path=path!("failures/:ls/:activation/:host") view=pages::failures::FailuresPage />
                    <Route ssr=SsrMode::Async path=path!("dead-letters") view=pages::dead_letters::DeadLettersPage />
                    <Route ssr=SsrMode::Async path=path!("dead-letters/:id") view=pages::dead_letters::DeadLetterPage />
                    <Route ssr=SsrMode::Async path=path!("operations") view=pages::operations::OperationsPage />
                    <Route ssr=SsrMode::Async path=path!("operations/:id") view=pages::operations::OperationPage />
                    <Route ssr=SsrMode::Async path=path!("search") view=pages::search::SearchPage />
                    <Route ssr=SsrMode::Async path=path!("notifications") view=pages::notifications::NotificationsPage />
                    <Route ssr=SsrMode::Async path=path!("audit") view=pages::audit::AuditPage />
                    <Route ssr=SsrMode::Async path=path!("users") view=pages::users::UsersPage />
                </ParentRoute>
            </Routes>
        </Router>
    }
}

/// Entry point of the browser build.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
}
