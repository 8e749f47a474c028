//! The login page: a plain form that works before hydration and shows why a login failed.

use crate::api::Login;
use crate::components::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let error = move || {
        login
            .value()
            .get()
            .and_then(|r| r.err())
            .map(|e| e.to_string())
    };
    Effect::new(move |_| {
        if let Some(Ok(_)) = login.value().get() {
            let _ = window().location().set_href("/");
        }
    });

    view! {
        <Title text=page_title("/login") />
        <main class="login">
            <h1>"Agent Manager"</h1>
            <ActionForm action=login attr:class="card login-form" attr:data-test="login-form">
                <label>
                    "User name"
                    <input type="text" name="name" autocomplete="username" required data-test="login-name" />
                </label>
                <label>
                    "Password"
                    <input type="password" name="password" autocomplete="current-password" required data-test="login-password" />
                </label>
                <Show when=move || error().is_some()>
                    <p class="error" role="alert" data-test="login-error">{error}</p>
                </Show>
                <button type="submit" disabled=move || login.pending().get() data-test="login-submit">
                    "Log in"
                </button>
            </ActionForm>
        </main>
    }
}
