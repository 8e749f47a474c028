//! Form building blocks: labelled fields that render their value on the server (so pages read
//! without JavaScript), keep what the user typed in signals, and show the errors of their path.

use crate::error::UiError;
use am_domain::HumanDuration;
use leptos::prelude::*;
use std::collections::BTreeMap;

/// The last error a form's server function returned; fields read their own errors from it.
#[derive(Clone, Copy)]
pub struct FormErrors(pub RwSignal<Option<UiError>>);

impl FormErrors {
    pub fn new() -> Self {
        Self(RwSignal::new(None))
    }

    /// Errors the server gave for `path`.
    pub fn at(self, path: &'static str) -> Signal<Vec<String>> {
        Signal::derive(move || {
            self.0
                .with(|e| e.as_ref().map(|e| e.field(path)).unwrap_or_default())
        })
    }

    /// Server errors whose path is `path` or below it (`parameters.org` and
    /// `parameters.org[1]` for `parameters.org`), with the rest of the path as a prefix.
    pub fn under(self, path: String) -> Signal<Vec<String>> {
        Signal::derive(move || {
            self.0.with(|e| match e {
                Some(UiError::Invalid(errors)) => errors
                    .iter()
                    .filter_map(|f| {
                        let rest = f.path.strip_prefix(path.as_str())?;
                        if rest.is_empty() {
                            Some(f.message.clone())
                        } else if rest.starts_with('[') || rest.starts_with('.') {
                            Some(format!("{}: {}", describe_rest(rest), f.message))
                        } else {
                            None
                        }
                    })
                    .collect(),
                _ => vec![],
            })
        })
    }
}

impl Default for FormErrors {
    fn default() -> Self {
        Self::new()
    }
}

/// `[1]` → `value 2`; other rests stay as written.
fn describe_rest(rest: &str) -> String {
    rest.strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .and_then(|n| n.parse::<usize>().ok())
        .map(|i| format!("value {}", i + 1))
        .unwrap_or_else(|| rest.trim_start_matches('.').to_owned())
}

/// The form-wide message: what went wrong, and every error with its path so none is hidden.
#[component]
pub fn FormBanner(errors: FormErrors, #[prop(into)] saved: Signal<bool>) -> impl IntoView {
    view! {
        {move || {
            errors.0.get().map(|e| {
                let details = match &e {
                    UiError::Invalid(list) => list
                        .iter()
                        .map(|f| view! { <li>{f.to_string()}</li> })
                        .collect_view()
                        .into_any(),
                    _ => ().into_any(),
                };
                view! {
                    <div class="banner bad" role="alert" data-test="form-error">
                        <strong>{e.to_string()}</strong>
                        <ul>{details}</ul>
                    </div>
                }
            })
        }}
        <Show when=move || saved.get() && errors.0.with(Option::is_none)>
            <div class="banner good" role="status" data-test="form-saved">"Saved."</div>
        </Show>
    }
}

#[component]
pub fn FieldErrors(
    #[prop(into)] errors: Signal<Vec<String>>,
    #[prop(into)] test: String,
) -> impl IntoView {
    view! {
        <Show when=move || !errors.with(Vec::is_empty)>
            <ul class="field-errors" data-test=format!("{test}-error")>
                {move || errors.get().into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}
            </ul>
        </Show>
    }
}

/// `text` as HTML text content: what the parser reads back is `text` exactly, whatever it holds
/// (`</textarea>`, `<script>`, entities).
pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

#[component]
pub fn TextField(
    label: &'static str,
    #[prop(into)] test: String,
    value: RwSignal<String>,
    #[prop(into, optional)] errors: Signal<Vec<String>>,
    #[prop(optional)] readonly: bool,
    #[prop(into, optional)] placeholder: String,
    #[prop(into, optional)] hint: String,
    #[prop(optional)] multiline: bool,
) -> impl IntoView {
    let invalid = move || !errors.with(Vec::is_empty);
    let control = if multiline {
        view! {
            <textarea
                rows="4"
                data-test=test.clone()
                readonly=readonly
                placeholder=placeholder
                aria-invalid=move || invalid().to_string()
                prop:value=move || value.get()
                on:input=move |ev| value.set(event_target_value(&ev))
                // Leptos writes a textarea's children unescaped (it is raw text to the
                // renderer), so user text goes in as escaped markup: the browser decodes it.
                inner_html=escape_text(&value.get_untracked())
            ></textarea>
        }
        .into_any()
    } else {
        view! {
            <input
                type="text"
                data-test=test.clone()
                readonly=readonly
                placeholder=placeholder
                aria-invalid=move || invalid().to_string()
                value=value.get_untracked()
                prop:value=move || value.get()
                on:input=move |ev| value.set(event_target_value(&ev))
            />
        }
        .into_any()
    };
    view! {
        <label class="field">
            <span class="label">{label}</span>
            {control}
            {(!hint.is_empty()).then(|| view! { <span class="hint">{hint}</span> })}
            <FieldErrors errors test />
        </label>
    }
}

#[component]
pub fn SelectField(
    label: &'static str,
    #[prop(into)] test: String,
    value: RwSignal<String>,
    #[prop(into)] options: Signal<Vec<(String, String)>>,
    #[prop(into, optional)] errors: Signal<Vec<String>>,
    #[prop(optional)] disabled: bool,
    #[prop(into, optional)] hint: String,
) -> impl IntoView {
    view! {
        <label class="field">
            <span class="label">{label}</span>
            <select
                data-test=test.clone()
                disabled=disabled
                prop:value=move || value.get()
                on:change=move |ev| value.set(event_target_value(&ev))
            >
                {move || {
                    let current = value.get();
                    options
                        .get()
                        .into_iter()
                        .map(|(v, text)| {
                            let selected = v == current;
                            view! { <option value=v selected=selected>{text}</option> }
                        })
                        .collect_view()
                }}
            </select>
            {(!hint.is_empty()).then(|| view! { <span class="hint">{hint}</span> })}
            <FieldErrors errors test />
        </label>
    }
}

#[component]
pub fn CheckField(
    label: &'static str,
    #[prop(into)] test: String,
    value: RwSignal<bool>,
    #[prop(optional)] disabled: bool,
) -> impl IntoView {
    view! {
        <label class="field check">
            <input
                type="checkbox"
                data-test=test
                disabled=disabled
                checked=value.get_untracked()
                prop:checked=move || value.get()
                on:change=move |ev| value.set(event_target_checked(&ev))
            />
            <span class="label">{label}</span>
        </label>
    }
}

/// Static options from `(value, text)` pairs.
/// Options of a select over an enum of words: the word is the value, the text says it and what
/// it means ("ANY — one node of the pool").
pub fn word_options<W: Copy + std::fmt::Display>(pairs: &[(W, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(word, meaning)| (word.to_string(), format!("{word} — {meaning}")))
        .collect()
}

pub fn options(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(v, t)| ((*v).to_owned(), (*t).to_owned()))
        .collect()
}

/// Save and (for existing entities) a two-step delete, shown only to those who may edit.
#[component]
pub fn FormActions(
    can_edit: bool,
    creating: bool,
    #[prop(into)] pending: Signal<bool>,
    on_save: Callback<()>,
    #[prop(optional)] on_delete: Option<Callback<()>>,
) -> impl IntoView {
    let confirm = RwSignal::new(false);
    can_edit.then(|| {
        view! {
            <div class="actions">
                <button
                    type="submit"
                    class="primary"
                    data-test="save"
                    disabled=move || pending.get()
                    on:click=move |ev| {
                        ev.prevent_default();
                        on_save.run(());
                    }
                >
                    {if creating { "Create" } else { "Save" }}
                </button>
                {on_delete.filter(|_| !creating)
                    .map(|del| {
                        view! {
                            <Show
                                when=move || confirm.get()
                                fallback=move || {
                                    view! {
                                        <button type="button" class="danger" data-test="delete" on:click=move |_| confirm.set(true)>
                                            "Delete…"
                                        </button>
                                    }
                                }
                            >
                                <span class="confirm">
                                    "Delete for good? "
                                    <button type="button" class="danger" data-test="delete-confirm" on:click=move |_| del.run(())>
                                        "Yes, delete"
                                    </button>
                                    <button type="button" data-test="delete-cancel" data-esc="close" on:click=move |_| confirm.set(false)>
                                        "Cancel"
                                    </button>
                                </span>
                            </Show>
                        }
                    })}
            </div>
        }
    })
}

/// Local problems of fields the server would only see as unparseable input.
#[derive(Default, Clone, PartialEq)]
pub struct LocalErrors(pub BTreeMap<&'static str, String>);

/// Reads a duration field; a mistake is recorded under `path`.
pub fn parse_duration(
    errs: &mut LocalErrors,
    path: &'static str,
    text: &str,
) -> Option<HumanDuration> {
    match text.trim().parse::<HumanDuration>() {
        Ok(d) => Some(d),
        Err(e) => {
            errs.0.insert(path, e.to_string());
            None
        }
    }
}

/// Reads a number field; a mistake is recorded under `path`.
pub fn parse_num<T: std::str::FromStr>(
    errs: &mut LocalErrors,
    path: &'static str,
    text: &str,
    what: &str,
) -> Option<T> {
    match text.trim().parse::<T>() {
        Ok(v) => Some(v),
        Err(_) => {
            errs.0
                .insert(path, format!("expected {what}, got '{}'", text.trim()));
            None
        }
    }
}

/// As [`parse_duration`], for an optional field: empty means none.
pub fn parse_opt_duration(
    errs: &mut LocalErrors,
    path: &'static str,
    text: &str,
) -> Option<HumanDuration> {
    if text.trim().is_empty() {
        None
    } else {
        parse_duration(errs, path, text)
    }
}
