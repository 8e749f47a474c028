//! The move and remove buttons of one entry of a list parameter, shared by the plain and the
//! classifier controls.

use crate::components::param_state::Item;
use leptos::prelude::*;

/// Move, remove buttons of one entry of a list.
#[component]
pub(crate) fn ItemButtons(
    items: RwSignal<Vec<Item>>,
    key: u64,
    test: String,
    touched: RwSignal<bool>,
) -> impl IntoView {
    let shift = move |delta: isize| {
        items.update(|v| {
            if let Some(i) = v.iter().position(|x| x.key == key) {
                let j = i as isize + delta;
                if j >= 0 && (j as usize) < v.len() {
                    v.swap(i, j as usize);
                }
            }
        });
        touched.set(true);
    };
    view! {
        <span class="item-buttons">
            <button type="button" class="icon" title="Move up" aria-label="Move up" data-test=format!("{test}-up") on:click=move |_| shift(-1)>"↑"</button>
            <button type="button" class="icon" title="Move down" aria-label="Move down" data-test=format!("{test}-down") on:click=move |_| shift(1)>"↓"</button>
            <button type="button" class="icon" title="Remove" aria-label="Remove" data-test=format!("{test}-remove")
                on:click=move |_| {
                    items.update(|v| v.retain(|x| x.key != key));
                    touched.set(true);
                }>"✕"</button>
        </span>
    }
}
