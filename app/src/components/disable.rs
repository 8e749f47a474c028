//! The question asked before a launch setting or schedule group is disabled, wherever its
//! *Disable…* button is (its status panel, its list's row): it says what stops, disables only on
//! its own button, and Cancel (or Esc) closes it.

use crate::api::catalog::{Key, SetEnabled};
use leptos::prelude::*;

/// The question for `key`; `asking` is cleared by either answer. `test` prefixes the
/// `data-test` names (`{test}-ask`, `{test}-yes`, `{test}-no`); `small` sizes the buttons for
/// a table row.
#[component]
pub fn DisableQuestion(
    key: Key,
    toggle: ServerAction<SetEnabled>,
    asking: RwSignal<bool>,
    test: &'static str,
    #[prop(optional)] small: bool,
) -> impl IntoView {
    let size = if small { "small " } else { "" };
    view! {
        <span class=if small { "confirm" } else { "confirm-inline" } data-test=format!("{test}-ask")>
            "Disable it? Its schedule stops and the nodes running it are told to stop. "
            <button type="button" class=format!("{size}danger") data-test=format!("{test}-yes") on:click=move |_| {
                asking.set(false);
                toggle.dispatch(SetEnabled { key: key.clone(), enabled: false });
            }>"Disable"</button>
            " "
            <button type="button" class=format!("{size}secondary") data-test=format!("{test}-no") data-esc="close"
                on:click=move |_| asking.set(false)>"Cancel"</button>
        </span>
    }
}
