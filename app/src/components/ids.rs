//! Ids as tables show them: long catalog ids (`billing.invoice-export.nightly`) may wrap after a
//! dot, as after a hyphen, so a table fits its page; they never break inside a word, and copy
//! as they are (`<wbr>` adds no character).

use leptos::prelude::*;

/// `id` with a line-break opportunity after each dot.
#[component]
pub fn Id(#[prop(into)] id: String) -> impl IntoView {
    id.split_inclusive('.')
        .map(|part| {
            let part = part.to_owned();
            view! { {part}<wbr /> }
        })
        .collect_view()
}
