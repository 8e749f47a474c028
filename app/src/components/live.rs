//! Lists that refresh themselves while they are on screen: they follow the dashboard's live
//! feed (`/api/v1/dashboard/events`, a message every 2 s) and fetch their rows again when the
//! figures they show moved. The operator can pause them; a list never refreshes under an open
//! question (a `.confirm` panel), a ticked box or the result of an action taken on the page
//! (anything marked `data-live-hold`), so nothing they were doing or reading is swept away:
//! it says it is held, and a reload or *Resume* catches up.

use am_domain::dashboard::Dashboard;
use leptos::prelude::*;

/// Where a live list stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Server-rendered and not (yet) hydrated: no JavaScript, nothing follows.
    Off,
    On,
    Paused,
    /// Something changed, but the page shows what the operator is doing or just did. Only
    /// the browser's side finds that out.
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    Held,
    /// The feed is refused (the session ended) or lost: the list stays as it is. Only the
    /// browser's side finds that out.
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    Stopped,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::Off => "off",
            State::On => "live",
            State::Paused => "paused",
            State::Held => "held",
            State::Stopped => "stopped",
        }
    }
}

/// The toggle of a live list, which follows the feed and calls `refresh` when
/// `fingerprint` of the figures changes (and once on resuming, if it changed meanwhile).
#[component]
pub fn LiveRefresh(
    /// What of the dashboard's figures the list depends on.
    fingerprint: fn(&Dashboard) -> String,
    /// Fetches the list again.
    refresh: Callback<()>,
) -> impl IntoView {
    let state = RwSignal::new(State::Off);
    let paused = RwSignal::new(false);
    // A change seen while paused or held, owed to the list.
    let owed = RwSignal::new(false);
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        feed::follow(fingerprint, refresh, state, paused, owed);
        #[cfg(not(feature = "hydrate"))]
        let _ = (fingerprint, refresh, owed);
    });
    let toggle = move |_| {
        let now_paused = !paused.get_untracked();
        paused.set(now_paused);
        if now_paused {
            state.set(State::Paused);
        } else {
            // Resuming is asking for the list as it is now, results shown or not.
            state.set(State::On);
            if owed.get_untracked() {
                owed.set(false);
                refresh.run(());
            }
        }
    };
    view! {
        <span class="live-list" data-test="live-list" data-state=move || state.get().as_str()>
            <button type="button" class="secondary small" data-test="live-toggle"
                hidden=move || matches!(state.get(), State::Off | State::Stopped)
                aria-pressed=move || paused.get().to_string() on:click=toggle>
                {move || if paused.get() { "Resume live updates" } else { "Pause live updates" }}
            </button>
            <span class="muted" role="status">
                {move || match state.get() {
                    State::On => "live",
                    State::Paused => "paused",
                    State::Held => "held: an answer or a result is on screen",
                    State::Stopped => "not live: reload to follow again",
                    State::Off => "",
                }}
            </span>
        </span>
    }
}

#[cfg(feature = "hydrate")]
mod feed {
    //! The browser's side: one `EventSource` per live list, closed when the page is left.

    use super::State;
    use crate::api::dashboard::EVENTS;
    use am_domain::dashboard::Dashboard;
    use leptos::prelude::*;
    use send_wrapper::SendWrapper;
    use wasm_bindgen::{JsCast, closure::Closure};
    use web_sys::{EventSource, MessageEvent};

    /// Something the operator is in the middle of or reading: an open question, a ticked box,
    /// the result of an action taken on the page.
    fn held() -> bool {
        document()
            .query_selector(
                "main .confirm, main input[type=checkbox]:checked, main [data-live-hold]",
            )
            .ok()
            .flatten()
            .is_some()
    }

    pub fn follow(
        fingerprint: fn(&Dashboard) -> String,
        refresh: Callback<()>,
        state: RwSignal<State>,
        paused: RwSignal<bool>,
        owed: RwSignal<bool>,
    ) {
        let Ok(source) = EventSource::new(EVENTS) else {
            state.set(State::Stopped);
            return;
        };
        let mut last: Option<String> = None;
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let Some(text) = e.data().as_string() else {
                return;
            };
            let Ok(d) = serde_json::from_str::<Dashboard>(&text) else {
                return;
            };
            if state.get_untracked() == State::Off {
                state.set(State::On);
            }
            let print = fingerprint(&d);
            // The first message is the page as loaded: nothing to fetch yet.
            let changed = last.as_ref().is_some_and(|l| *l != print);
            last = Some(print);
            if changed || owed.get_untracked() {
                if paused.get_untracked() {
                    owed.set(true);
                } else if held() {
                    owed.set(true);
                    state.set(State::Held);
                } else {
                    owed.set(false);
                    state.set(State::On);
                    refresh.run(());
                }
            }
        });
        source.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let watched = source.clone();
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            // CLOSED: the server refused the feed (e.g. 401); the browser gives up.
            if watched.ready_state() == EventSource::CLOSED {
                state.set(State::Stopped);
            }
        });
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let held_source = SendWrapper::new((source, on_message, on_error));
        on_cleanup(move || {
            let (source, _, _) = held_source.take();
            source.close();
        });
    }
}
