//! The global search's page (`/search?q=`): what matches, by kind, each a link. The box in
//! the top bar (focused by `/` from any page) leads here; readable without JavaScript. When
//! the text named one hit whole (its id, a whole activation id, a message id), the page goes
//! straight on to it.

use crate::api::search::search;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

#[component]
pub fn SearchPage() -> impl IntoView {
    let query_map = use_query_map();
    let q = Memo::new(move |_| query_map.get().get("q").unwrap_or_default());
    let hits = Resource::new(move || q.get(), search);
    let navigate = leptos_router::hooks::use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(list)) = hits.get() {
            let mut exact = list.iter().filter(|h| h.exact);
            if let (Some(only), None) = (exact.next(), exact.next()) {
                navigate(
                    &only.found.href(),
                    leptos_router::NavigateOptions {
                        replace: true,
                        ..Default::default()
                    },
                );
            }
        }
    });
    view! {
        <section data-test="search">
            <h1>"Search"</h1>
            <form method="get" action="/search" class="filters" role="search" aria-label="Search again">
                <label>
                    <span class="label">"Id, title, host, error type, activation id (or its first digits), message id or #dead letter"</span>
                    <input type="search" name="q" value=move || q.get() data-test="search-q" />
                </label>
                <button type="submit">"Search"</button>
            </form>
            <Suspense fallback=|| view! { <p class="muted">"Searching…"</p> }>
                {move || hits.get().map(|r| match r {
                    Ok(list) if q.get().trim().is_empty() => {
                        drop(list);
                        view! { <p class="muted">"Type what you are looking for."</p> }.into_any()
                    }
                    Ok(list) if list.is_empty() => view! {
                        <p class="muted" data-test="no-hits">{format!("Nothing matches “{}”.", q.get().trim())}</p>
                    }.into_any(),
                    Ok(list) => view! {
                        <div class="table-wrap">
                            <table class="list" data-test="hits">
                                <thead><tr><th>"Kind"</th><th>"Id"</th><th>"Title"</th></tr></thead>
                                <tbody>
                                    {list.into_iter().map(|h| {
                                        let (kind, id, href) = (h.found.noun(), h.found.id(), h.found.href());
                                        let shown = id.clone();
                                        view! {
                                            <tr data-test="hit" data-kind=kind data-id=id>
                                                <td data-label="Kind" class="muted">{kind}</td>
                                                <td data-label="Id"><a href=href data-test="hit-link"><code>{shown}</code></a></td>
                                                <td data-label="Title">{h.label}</td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                        </div>
                    }.into_any(),
                    Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}
