//! Classifier parameters: the chosen values (in order, for arrays) and a picker whose search
//! runs on the server, so a classifier of 50,000 values never travels whole to the browser.

use crate::{
    api::catalog::search_classifier,
    components::{item_buttons::ItemButtons, param_state::ParamState},
};
use am_domain::catalog::ClassifierValue;
use leptos::prelude::*;

/// Chosen classifier values (in order, for arrays) and a search to pick more.
#[component]
pub(crate) fn ClassifierControl(
    state: ParamState,
    application: String,
    classifier: String,
    readonly: bool,
    test: String,
    touched: RwSignal<bool>,
) -> impl IntoView {
    let items = state.items;
    let labels = state.labels;
    let array = state.spec.array;
    let test_for = test.clone();
    let non_empty = move || {
        items
            .get()
            .into_iter()
            .filter(|i| !i.text.get().is_empty())
            .collect::<Vec<_>>()
    };
    let chosen = view! {
        <ol class="items chosen" data-test=format!("{test}-chosen")>
            <For
                each=non_empty
                key=|i| i.key
                let:item
            >
                <li data-test=format!("{test_for}-value") data-code=move || item.text.get()>
                    <code>{move || item.text.get()}</code>
                    " "
                    <span class="muted">{move || labels.with(|l| l.get(&item.text.get()).cloned().unwrap_or_default())}</span>
                    {(!readonly).then(|| {
                        if array {
                            view! { <ItemButtons items key=item.key test=test_for.clone() touched /> }.into_any()
                        } else {
                            view! {
                                <button type="button" class="icon" aria-label="Clear" title="Clear" data-test=format!("{test_for}-remove")
                                    on:click=move |_| { item.text.set(String::new()); touched.set(true); }>"✕"</button>
                            }.into_any()
                        }
                    })}
                </li>
            </For>
        </ol>
    };
    let on_pick = {
        let state = state.clone();
        Callback::new(move |v: ClassifierValue| {
            labels.update(|l| {
                l.insert(v.code.clone(), v.label.clone());
            });
            if array {
                let present =
                    items.with_untracked(|i| i.iter().any(|x| x.text.get_untracked() == v.code));
                if !present {
                    state.add(v.code);
                }
            } else if let Some(first) = items.get_untracked().first() {
                first.text.set(v.code);
            } else {
                state.add(v.code);
            }
            touched.set(true);
        })
    };
    view! {
        {chosen}
        {(!readonly).then(|| view! { <ClassifierPicker application classifier on_pick test /> })}
    }
}

/// A search box over a classifier's values; the search runs on the server.
#[component]
pub fn ClassifierPicker(
    application: String,
    classifier: String,
    on_pick: Callback<ClassifierValue>,
    test: String,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let open = RwSignal::new(false);
    let results_test = StoredValue::new(format!("{test}-results"));
    let results = Resource::new(
        move || (open.get(), text.get()),
        move |(open, text)| {
            let application = application.clone();
            let classifier = classifier.clone();
            async move {
                if !open {
                    return Ok(None);
                }
                search_classifier(application, classifier, text)
                    .await
                    .map(Some)
            }
        },
    );
    view! {
        <div class="picker">
            <input
                type="search"
                placeholder="Search by code or label…"
                aria-label="Search values"
                data-test=format!("{test}-search")
                prop:value=move || text.get()
                on:input=move |ev| {
                    text.set(event_target_value(&ev));
                    open.set(true);
                }
                on:focus=move |_| open.set(true)
            />
            <Show when=move || open.get()>
                <Transition fallback=|| ()>
                    {move || {
                        results.get().map(|r| match r {
                            Ok(Some(page)) => {
                                let more = page.more;
                                let empty = page.values.is_empty();
                                view! {
                                    <ul class="picker-results" role="listbox" data-test=results_test.get_value()>
                                        {page.values.into_iter().map(|v| {
                                            let pick = v.clone();
                                            view! {
                                                <li>
                                                    <button type="button" data-test="picker-option" data-code=v.code.clone()
                                                        on:click=move |_| on_pick.run(pick.clone())>
                                                        <code>{v.code.clone()}</code>" "<span>{v.label.clone()}</span>
                                                    </button>
                                                </li>
                                            }
                                        }).collect_view()}
                                        {empty.then(|| view! { <li class="muted">"No value matches."</li> })}
                                        {more.then(|| view! { <li class="muted">"More values match: type to narrow."</li> })}
                                    </ul>
                                    <button type="button" class="small" on:click=move |_| open.set(false)>"Close"</button>
                                }.into_any()
                            }
                            Ok(None) => ().into_any(),
                            Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                        })
                    }}
                </Transition>
            </Show>
        </div>
    }
}
