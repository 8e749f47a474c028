//! The typed parameter form generated from an agent's schema: the right control per type,
//! arrays as editable lists, classifier values picked from a server-side search. What each
//! control holds is a `param_state::ParamState`.

use crate::{
    api::catalog::classifier_labels,
    components::{
        classifier::ClassifierControl,
        forms::FieldErrors,
        item_buttons::ItemButtons,
        param_state::{Item, ParamState, text_of},
    },
};
use am_domain::params::{ParamSpec, ParamType};
use leptos::prelude::*;

/// "min 1 · max 10 · pattern [A-Z]+", as the form and the schema table show them.
pub fn bounds_text(spec: &ParamSpec) -> String {
    let mut parts = vec![];
    let unit = if spec.ty == ParamType::String {
        " characters"
    } else {
        ""
    };
    if let Some(m) = &spec.min {
        parts.push(format!("min {}{unit}", text_of(m)));
    }
    if let Some(m) = &spec.max {
        parts.push(format!("max {}{unit}", text_of(m)));
    }
    if let Some(p) = &spec.pattern {
        parts.push(format!("pattern {p}"));
    }
    parts.join(" · ")
}

fn placeholder(ty: &ParamType) -> &'static str {
    match ty {
        ParamType::Decimal => "e.g. 12.50",
        ParamType::Datetime => "e.g. 2024-05-01T08:00:00Z",
        ParamType::Duration => "e.g. 30s, 5m, 1h 30m",
        _ => "",
    }
}

/// The form: one field per parameter.
#[component]
pub fn ParamForm(
    states: Vec<ParamState>,
    #[prop(into)] application: String,
    readonly: bool,
    /// Show browser-side errors (after the first save attempt).
    #[prop(into)]
    show_errors: Signal<bool>,
    /// Server errors for a parameter path (`parameters.<name>`).
    server_errors: Callback<String, Signal<Vec<String>>>,
) -> impl IntoView {
    if states.is_empty() {
        return view! { <p class="muted" data-test="no-params">"This agent has no parameters."</p> }
            .into_any();
    }
    view! {
        <div class="params" data-test="param-form">
            {states
                .into_iter()
                .map(|s| {
                    let server = server_errors.run(format!("parameters.{}", s.spec.name));
                    view! { <ParamField state=s application=application.clone() readonly show_errors server /> }
                })
                .collect_view()}
        </div>
    }
    .into_any()
}

#[component]
fn ParamField(
    state: ParamState,
    application: String,
    readonly: bool,
    show_errors: Signal<bool>,
    server: Signal<Vec<String>>,
) -> impl IntoView {
    let spec = state.spec.clone();
    let name = spec.name.clone();
    let test = format!("param-{name}");
    let touched = RwSignal::new(false);

    // Labels of saved classifier codes, looked up once.
    if let ParamType::Classifier(classifier) = &spec.ty {
        let codes: Vec<String> = state
            .items
            .get_untracked()
            .iter()
            .map(|i| i.text.get_untracked())
            .filter(|c| !c.is_empty())
            .collect();
        if !codes.is_empty() {
            let labels = state.labels;
            let (application, classifier) = (application.clone(), classifier.clone());
            // Called from an effect, which runs only in the browser, and not dispatched as an
            // action: an action dispatched while the page hydrates is dropped (leptos suppresses
            // loads then), and the saved values kept no label.
            Effect::new(move |_| {
                let (application, classifier, codes) =
                    (application.clone(), classifier.clone(), codes.clone());
                leptos::task::spawn_local(async move {
                    if let Ok(values) = classifier_labels(application, classifier, codes).await {
                        // Gone with its field when the form was left meanwhile.
                        labels.try_update(|l| {
                            l.extend(values.into_iter().map(|v| (v.code, v.label)));
                        });
                    }
                });
            });
        }
    }

    let local = {
        let state = state.clone();
        let app = application.clone();
        Signal::derive(move || {
            if !(show_errors.get() || touched.get()) {
                return vec![];
            }
            state
                .errors(&app)
                .iter()
                .map(|e| {
                    if e.path.is_empty() {
                        e.message.clone()
                    } else {
                        let i = e
                            .path
                            .trim_start_matches('[')
                            .trim_end_matches(']')
                            .parse::<usize>()
                            .map(|i| format!("value {}", i + 1))
                            .unwrap_or_else(|_| e.path.clone());
                        format!("{i}: {}", e.message)
                    }
                })
                .collect::<Vec<_>>()
        })
    };
    let all_errors = Signal::derive(move || {
        let mut v = local.get();
        for m in server.get() {
            if !v.contains(&m) {
                v.push(m);
            }
        }
        v
    });

    let title = if spec.title.is_empty() {
        spec.name.clone()
    } else {
        spec.title.clone()
    };
    let mut facts = vec![format!(
        "{}{}",
        spec.ty,
        if spec.array { " list" } else { "" }
    )];
    if spec.required {
        facts.push("required".into());
    }
    if let Some(d) = &spec.default {
        facts.push(format!("default {}", d));
    }
    let bounds = bounds_text(&spec);
    if !bounds.is_empty() {
        facts.push(bounds);
    }

    let control = if let ParamType::Classifier(classifier) = spec.ty.clone() {
        view! {
            <ClassifierControl state=state.clone() application=application.clone() classifier readonly test=test.clone() touched />
        }
        .into_any()
    } else if spec.array {
        view! { <ArrayControl state=state.clone() readonly test=test.clone() touched /> }.into_any()
    } else {
        let item = state.items.get_untracked().first().copied();
        item.map(|item| {
            view! { <ScalarInput ty=spec.ty.clone() item readonly test=test.clone() touched /> }
        })
        .into_any()
    };

    view! {
        <fieldset class="param" data-test=test.clone() data-param=name.clone()>
            <legend>
                {title}
                {spec.required.then(|| view! { <span class="req" title="required">" *"</span> })}
                " " <code class="muted">{name.clone()}</code>
            </legend>
            {(!spec.description.is_empty()).then(|| view! { <p class="hint">{spec.description.clone()}</p> })}
            {control}
            <p class="hint" data-test=format!("{test}-facts")>{facts.join(" · ")}</p>
            <FieldErrors errors=all_errors test=test.clone() />
        </fieldset>
    }
}

/// One control for one value of a non-classifier type.
#[component]
fn ScalarInput(
    ty: ParamType,
    item: Item,
    readonly: bool,
    test: String,
    touched: RwSignal<bool>,
) -> impl IntoView {
    let text = item.text;
    match ty {
        ParamType::Boolean => view! {
            <select
                data-test=format!("{test}-input")
                disabled=readonly
                prop:value=move || text.get()
                on:change=move |ev| {
                    text.set(event_target_value(&ev));
                    touched.set(true);
                }
            >
                {move || {
                    let cur = text.get();
                    [("", "— not set —"), ("true", "yes"), ("false", "no")]
                        .into_iter()
                        .map(|(v, t)| view! { <option value=v selected=cur == v>{t}</option> })
                        .collect_view()
                }}
            </select>
        }
        .into_any(),
        _ => {
            let (kind, mode) = match ty {
                ParamType::Integer => ("text", "numeric"),
                ParamType::Decimal => ("text", "decimal"),
                ParamType::Date => ("date", "text"),
                _ => ("text", "text"),
            };
            view! {
                <input
                    type=kind
                    inputmode=mode
                    data-test=format!("{test}-input")
                    readonly=readonly
                    placeholder=placeholder(&ty)
                    value=text.get_untracked()
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))
                    on:change=move |_| touched.set(true)
                />
            }
            .into_any()
        }
    }
}

#[component]
fn ArrayControl(
    state: ParamState,
    readonly: bool,
    test: String,
    touched: RwSignal<bool>,
) -> impl IntoView {
    let items = state.items;
    let ty = state.spec.ty.clone();
    let test_add = format!("{test}-add");
    let test_for = test.clone();
    view! {
        <ol class="items" data-test=format!("{test}-items")>
            <For each=move || items.get() key=|i| i.key let:item>
                <li data-test=format!("{test_for}-item")>
                    <ScalarInput ty=ty.clone() item readonly test=test_for.clone() touched />
                    {(!readonly).then(|| view! { <ItemButtons items key=item.key test=test_for.clone() touched /> })}
                </li>
            </For>
        </ol>
        {(!readonly).then(|| {
            let state = state.clone();
            view! {
                <button type="button" class="small" data-test=test_add on:click=move |_| state.add(String::new())>
                    "+ Add a value"
                </button>
            }
        })}
    }
}
