//! The frame around every page: navigation to the sections of the product, the global search
//! (`/` focuses it), the user and logout.

use super::sections::SECTIONS;
use crate::api::{Logout, whoami};
use crate::components::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{
    components::{A, Outlet},
    hooks::use_location,
};

#[component]
pub fn Layout() -> impl IntoView {
    let user = Resource::new(|| (), |_| whoami());
    let logout = ServerAction::<Logout>::new();
    let search_box = NodeRef::<leptos::html::Input>::new();
    let main_ref = NodeRef::<leptos::html::Main>::new();
    // The shortcut list (`?`), open or not.
    let help = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    {
        let handle = window_event_listener(leptos::ev::keydown, move |e| {
            if e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            let active = document().active_element();
            let typing = active.as_ref().is_some_and(|el| {
                matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT")
            });
            match e.key().as_str() {
                // `/` goes to the search box, as on GitHub or Grafana.
                "/" if !typing => {
                    if let Some(input) = search_box.get() {
                        e.prevent_default();
                        let _ = input.focus();
                    }
                }
                "?" if !typing => {
                    e.prevent_default();
                    help.update(|open| *open = !*open);
                }
                "Escape" => match escape(help, search_box) {
                    Escaped::Nothing => {}
                    Escaped::ToPage => {
                        e.prevent_default();
                        if let Some(main) = main_ref.get() {
                            let _ = main.focus();
                        }
                    }
                    Escaped::ToOpener(opener) => {
                        e.prevent_default();
                        let _ = opener.focus();
                    }
                },
                _ => {}
            }
        });
        // The last button clicked: what opened the question Esc cancels, where focus goes back.
        let clicks = window_event_listener(leptos::ev::click, move |e| {
            use leptos::wasm_bindgen::JsCast;
            let button = e
                .target()
                .and_then(|t| t.dyn_into::<leptos::web_sys::Element>().ok())
                .and_then(|el| el.closest("button").ok().flatten())
                .and_then(|b| b.dyn_into::<leptos::web_sys::HtmlElement>().ok());
            if let Some(button) = button {
                LAST_CLICKED.with(|last| *last.borrow_mut() = Some(button));
            }
        });
        on_cleanup(move || {
            handle.remove();
            clicks.remove();
        });
    }
    Effect::new(move |_| {
        if let Some(Ok(())) = logout.value().get() {
            let _ = window().location().set_href("/login");
        }
    });

    let path = use_location().pathname;
    view! {
        <Title text=move || page_title(&path.get()) />
        <div class="shell">
            // The first stop of Tab: past the header and the 17 sections, to the page itself.
            <a class="skip-link" href="#main" data-test="skip-link" on:click=move |e| {
                // Focus, not only scroll: the next Tab goes on from the page's first control.
                if let Some(main) = main_ref.get() {
                    e.prevent_default();
                    let _ = main.focus();
                }
            }>"Skip to content"</a>
            <header class="topbar">
                <a class="brand" href="/">"Agent Manager"</a>
                <form class="global-search" method="get" action="/search" role="search" aria-label="Search everywhere">
                    <input type="search" name="q" node_ref=search_box data-test="global-search"
                        placeholder="Search ids and titles   /"
                        aria-label="Search ids and titles of the catalog, hosts, activation ids (whole, first digits or as shown), message ids (shortcut: /)" />
                </form>
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
            <main class="content" id="main" tabindex="-1" node_ref=main_ref>
                <Outlet />
            </main>
            <Show when=move || help.get()>
                <Shortcuts help />
            </Show>
        </div>
    }
}

#[cfg(feature = "hydrate")]
thread_local! {
    static LAST_CLICKED: std::cell::RefCell<Option<leptos::web_sys::HtmlElement>> =
        const { std::cell::RefCell::new(None) };
}

/// Where focus goes after Esc.
#[cfg(feature = "hydrate")]
enum Escaped {
    /// Nothing was open: Esc does what the browser does.
    Nothing,
    /// To the page: what had focus is gone.
    ToPage,
    /// Back to the button that opened the question just cancelled.
    ToOpener(leptos::web_sys::HtmlElement),
}

/// What Esc closes, the first that is open: the shortcut list, the search box (left), or the
/// newest open question on the page (its Cancel button, marked `data-esc`); and where focus
/// goes then: to the button that opened the question when it is still on the page (the last
/// one clicked before the Cancel), else to the page.
#[cfg(feature = "hydrate")]
fn escape(help: RwSignal<bool>, search_box: NodeRef<leptos::html::Input>) -> Escaped {
    use leptos::wasm_bindgen::JsCast;
    if help.get_untracked() {
        help.set(false);
        return Escaped::ToPage;
    }
    let active = document().active_element();
    if let (Some(input), Some(active)) = (search_box.get_untracked(), active.as_ref())
        && active.is_same_node(Some(&input))
    {
        return Escaped::ToPage;
    }
    let Ok(open) = document().query_selector_all("[data-esc]") else {
        return Escaped::Nothing;
    };
    let newest = (0..open.length()).rev().find_map(|i| {
        open.item(i)?
            .dyn_into::<leptos::web_sys::HtmlElement>()
            .ok()
    });
    let Some(cancel) = newest else {
        return Escaped::Nothing;
    };
    // Taken before the click: the Cancel's own click becomes the last one.
    let opener = LAST_CLICKED.with(|last| last.borrow_mut().take());
    cancel.click();
    // A button inside the question (its first Delete of two) leaves with it.
    match opener.filter(|b| b.is_connected() && !b.is_same_node(Some(&cancel))) {
        Some(opener) => Escaped::ToOpener(opener),
        None => Escaped::ToPage,
    }
}

/// The keyboard shortcuts, listed by `?`; Esc or its button closes it.
#[component]
fn Shortcuts(help: RwSignal<bool>) -> impl IntoView {
    let close = NodeRef::<leptos::html::Button>::new();
    // Focus goes to the list's button, so Enter or Esc closes it at once.
    Effect::new(move |_| {
        if let Some(b) = close.get() {
            let _ = b.focus();
        }
    });
    view! {
        <div class="card shortcuts" role="dialog" aria-labelledby="shortcuts-title" data-test="shortcuts">
            <h2 id="shortcuts-title">"Keyboard shortcuts"</h2>
            <dl>
                <div><dt><kbd>"/"</kbd></dt><dd>"Search ids and titles"</dd></div>
                <div><dt><kbd>"?"</kbd></dt><dd>"Show or hide this list"</dd></div>
                <div><dt><kbd>"Esc"</kbd></dt><dd>"Close this list, leave the search box, or cancel the open question (a confirmation)"</dd></div>
                <div><dt><kbd>"Tab"</kbd></dt><dd>"First stop: Skip to content, past the menu"</dd></div>
            </dl>
            <button type="button" class="primary" data-test="shortcuts-close" node_ref=close on:click=move |_| help.set(false)>"Close"</button>
        </div>
    }
}
