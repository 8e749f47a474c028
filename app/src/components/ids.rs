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

/// A long id (an activation's UUID) as lists show it: shortened on one line, the whole id on
/// hover and in a copy button beside it; the search box finds it in either form. With `href`,
/// the shortened id is a link (`data-test` `test`, else `activation-link`).
#[component]
pub fn ShortId(
    #[prop(into)] id: String,
    #[prop(optional, into)] href: Option<String>,
    #[prop(optional)] test: Option<&'static str>,
) -> impl IntoView {
    let short = am_domain::shortened::shorten(&id);
    let code = view! { <code class="nowrap" title=id.clone()>{short}</code> };
    let full = id.clone();
    view! {
        <span class="short-id" data-full=full>
            {match href {
                Some(h) => {
                    view! { <a href=h data-test=test.unwrap_or("activation-link")>{code}</a> }
                        .into_any()
                }
                None => code.into_any(),
            }}
            <CopyButton text=id />
        </span>
    }
}

/// Copies `text` to the clipboard; says so for a moment.
#[component]
pub fn CopyButton(text: String) -> impl IntoView {
    let copied = RwSignal::new(false);
    let copy = move |_| {
        #[cfg(feature = "hydrate")]
        {
            let _ = window().navigator().clipboard().write_text(&text);
            copied.set(true);
            set_timeout(
                move || copied.set(false),
                std::time::Duration::from_millis(1500),
            );
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &text;
    };
    view! {
        <button type="button" class="icon copy" data-test="copy-id" title="Copy the whole id"
            aria-label=move || if copied.get() { "Copied" } else { "Copy the whole id" } on:click=copy>
            {move || if copied.get() { "✓" } else { "⧉" }}
        </button>
    }
}
