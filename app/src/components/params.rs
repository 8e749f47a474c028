//! The typed parameter form generated from an agent's schema: the right control per type,
//! arrays as editable lists, classifier values picked from a server-side search. What the user
//! types is kept as text, so nothing is lost when a value does not parse; the values are
//! checked in the browser with the same `am-domain` code the server runs.

use crate::{
    api::catalog::ClassifierLabels,
    components::{classifier::ClassifierControl, forms::FieldErrors},
};
use am_domain::{
    ValidationErrors,
    catalog::{Classifier, ClassifierValue},
    params::{ParamSpec, ParamType, validate_value},
};
use leptos::prelude::*;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One entry of a parameter: a key for the list and the text in its control.
#[derive(Clone, Copy)]
pub struct Item {
    pub key: u64,
    pub text: RwSignal<String>,
}

/// The state of one parameter's controls.
#[derive(Clone)]
pub struct ParamState {
    pub spec: ParamSpec,
    pub items: RwSignal<Vec<Item>>,
    next_key: StoredValue<u64>,
    /// Where new entries' signals live: with the form, not with the button that adds them.
    owner: Owner,
    /// Labels of classifier codes known to the form (picked or looked up).
    pub labels: RwSignal<BTreeMap<String, String>>,
}

impl ParamState {
    fn new(spec: ParamSpec, value: Option<&Value>) -> Self {
        let texts: Vec<String> = match value {
            None | Some(Value::Null) => vec![],
            Some(Value::Array(items)) if spec.array => items.iter().map(text_of).collect(),
            Some(v) => vec![text_of(v)],
        };
        let mut texts = texts;
        if !spec.array && texts.is_empty() {
            texts.push(String::new());
        }
        let items: Vec<Item> = texts
            .into_iter()
            .enumerate()
            .map(|(i, t)| Item {
                key: i as u64,
                text: RwSignal::new(t),
            })
            .collect();
        let n = items.len() as u64;
        Self {
            spec,
            items: RwSignal::new(items),
            next_key: StoredValue::new(n),
            owner: Owner::current().unwrap_or_default(),
            labels: RwSignal::new(BTreeMap::new()),
        }
    }

    pub(crate) fn add(&self, text: String) {
        let key = self.next_key.get_value();
        self.next_key.set_value(key + 1);
        let text = self.owner.with(|| RwSignal::new(text));
        self.items.update(|v| v.push(Item { key, text }));
    }

    /// The JSON value of the parameter, `Null` when nothing was entered.
    pub fn value(&self) -> Value {
        let values: Vec<Value> = self
            .items
            .with(|items| {
                items
                    .iter()
                    .map(|i| json_of(&self.spec.ty, &i.text.get()))
                    .collect::<Vec<_>>()
            })
            .into_iter()
            .flatten()
            .collect();
        if self.spec.array {
            if values.is_empty() {
                Value::Null
            } else {
                Value::Array(values)
            }
        } else {
            values.into_iter().next().unwrap_or(Value::Null)
        }
    }

    /// Errors of the value, by the server's own rules (classifier codes are checked against
    /// the values this form knows: picked from the search or looked up by the server).
    pub fn errors(&self, application: &str) -> ValidationErrors {
        let classifier = match &self.spec.ty {
            ParamType::Classifier(name) => Some(Classifier {
                application: application.to_owned(),
                name: name.clone(),
                title: String::new(),
                values: self.labels.with(|l| {
                    l.iter()
                        .map(|(code, label)| ClassifierValue {
                            code: code.clone(),
                            label: label.clone(),
                        })
                        .collect()
                }),
            }),
            _ => None,
        };
        validate_value(&self.spec, &self.value(), classifier.as_ref())
    }
}

/// A parameter value as the text of its control.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The JSON form of what was typed; text that does not parse stays a string, so validation
/// names the problem instead of the form dropping the input.
fn json_of(ty: &ParamType, text: &str) -> Option<Value> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    Some(match ty {
        ParamType::Integer => t
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(t.to_owned())),
        ParamType::Boolean => match t {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(t.to_owned()),
        },
        ParamType::String => Value::String(text.to_owned()),
        _ => Value::String(t.to_owned()),
    })
}

/// States for every parameter of `specs`, filled from saved `values`.
pub fn param_states(specs: &[ParamSpec], values: &Map<String, Value>) -> Vec<ParamState> {
    specs
        .iter()
        .map(|s| ParamState::new(s.clone(), values.get(&s.name)))
        .collect()
}

/// The parameters' values (entered ones only; defaults apply to the rest).
pub fn collect_values(states: &[ParamState]) -> Map<String, Value> {
    states
        .iter()
        .filter_map(|s| {
            let v = s.value();
            (!v.is_null()).then(|| (s.spec.name.clone(), v))
        })
        .collect()
}

/// Errors of all parameters with paths `name` / `name[1]`.
pub fn collect_errors(states: &[ParamState], application: &str) -> ValidationErrors {
    let mut all = ValidationErrors::new();
    for s in states {
        all.extend_prefixed(&s.spec.name, s.errors(application));
    }
    all
}

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
            let lookup = ServerAction::<ClassifierLabels>::new();
            // Dispatched from an effect, which runs only in the browser: dispatching while
            // rendering on the server would call browser-only functions and panic the worker.
            let call = ClassifierLabels {
                application: application.clone(),
                classifier: classifier.clone(),
                codes,
            };
            Effect::new(move |_| {
                lookup.dispatch(call.clone());
            });
            let labels = state.labels;
            Effect::new(move |_| {
                if let Some(Ok(values)) = lookup.value().get() {
                    labels.update(|l| l.extend(values.into_iter().map(|v| (v.code, v.label))));
                }
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
