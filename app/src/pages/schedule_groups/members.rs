//! A schedule group's members in run order: added from the eligible launch settings only,
//! reordered by drag-and-drop or with the move buttons (focus and a screen-reader announcement
//! follow the moved member), saved with the form.

use crate::components::forms::*;
use am_domain::links::entity_page;
use am_domain::{
    catalog::{Catalog, Concurrency, LaunchKind},
    usage::EntityRef,
};
use leptos::prelude::*;

/// Concurrency of the agent a launch setting runs.
fn concurrency_of(c: &Catalog, ls: &str) -> Option<Concurrency> {
    let l = c.launch_setting(ls)?;
    c.agent(&l.application, &l.agent).map(|a| a.concurrency)
}

/// Launch settings that may join: same application, scheduled, same concurrency mode as the
/// members already there, not a member yet.
fn eligible(c: &Catalog, application: &str, members: &[String]) -> Vec<(String, String)> {
    let mode = members.first().and_then(|m| concurrency_of(c, m));
    c.launch_settings
        .iter()
        .filter(|l| l.application == application && l.kind == LaunchKind::Scheduled)
        .filter(|l| !members.contains(&l.id))
        .filter(|l| mode.is_none() || concurrency_of(c, &l.id) == mode)
        .map(|l| {
            let mode = concurrency_of(c, &l.id).map_or("?", Concurrency::as_str);
            (
                l.id.clone(),
                format!("{} — agent {} ({mode})", l.id, l.agent),
            )
        })
        .collect()
}

fn move_item(v: &mut Vec<String>, from: usize, to: usize) {
    if from < v.len() && to < v.len() && from != to {
        let item = v.remove(from);
        v.insert(to, item);
    }
}

/// The ordered members and the choice to add one; `dirty` says the order changed since saved.
#[component]
pub(super) fn MembersFieldset(
    members: RwSignal<Vec<String>>,
    dirty: RwSignal<bool>,
    catalog: StoredValue<Catalog>,
    application: RwSignal<String>,
    errors: FormErrors,
    can_edit: bool,
) -> impl IntoView {
    // Read out by screen readers after a move.
    let announce = RwSignal::new(String::new());
    view! {
        <h2>"Members, in run order"</h2>
        <p class="hint">"Members run one after another. "
            {can_edit.then_some("Drag a member, or use its ↑ ↓ buttons, to change the order; then save.")}</p>
        <MemberList members dirty announce catalog can_edit />
        <p class="sr-only" aria-live="polite" data-test="order-announcement">{move || announce.get()}</p>
        <FieldErrors errors=errors.under("members".into()) test="members" />
        {can_edit.then(|| view! { <AddMember members dirty catalog application /> })}
        <Show when=move || dirty.get()>
            <p class="banner warn" data-test="unsaved">"The order has changed: save to keep it."</p>
        </Show>
    }
}

/// The members in run order, each draggable and with its move and remove buttons.
#[component]
fn MemberList(
    members: RwSignal<Vec<String>>,
    dirty: RwSignal<bool>,
    announce: RwSignal<String>,
    catalog: StoredValue<Catalog>,
    can_edit: bool,
) -> impl IntoView {
    let dragging = RwSignal::new(None::<usize>);
    let drop_target = RwSignal::new(None::<usize>);
    move || {
        let list = members.get();
        let n = list.len();
        if n == 0 {
            return view! { <p class="muted" data-test="no-members">"No member yet."</p> }
                .into_any();
        }
        view! {
            <ol class="members" data-test="members">
                {list.into_iter().enumerate().map(|(i, m)| {
                    let href = entity_page(&EntityRef::LaunchSetting(m.clone()));
                    let agent = catalog.with_value(|c| c.launch_setting(&m).map(|l| l.agent.clone()).unwrap_or_default());
                    view! {
                        <li
                            class="member"
                            class:drop-target=move || drop_target.get() == Some(i) && dragging.get() != Some(i)
                            data-test="member"
                            data-id=m.clone()
                            data-index=i.to_string()
                            draggable=if can_edit { "true" } else { "false" }
                            on:dragstart=move |_| dragging.set(Some(i))
                            on:dragover=move |ev| { ev.prevent_default(); drop_target.set(Some(i)); }
                            on:dragleave=move |_| drop_target.set(None)
                            on:dragend=move |_| { dragging.set(None); drop_target.set(None); }
                            on:drop=move |ev| {
                                ev.prevent_default();
                                if let Some(from) = dragging.get_untracked() {
                                    members.update(|v| {
                                        move_item(v, from, i);
                                        if let Some(m) = v.get(i) {
                                            announce.set(format!("{m} is now number {} of {}", i + 1, v.len()));
                                        }
                                    });
                                    dirty.set(true);
                                }
                                dragging.set(None);
                                drop_target.set(None);
                            }
                        >
                            {can_edit.then(|| view! { <span class="grip" aria-hidden="true" title="Drag to reorder">"⠿"</span> })}
                            <span class="pos" data-test="member-position">{(i + 1).to_string()}</span>
                            <a href=href>{m.clone()}</a>
                            <span class="muted">{agent}</span>
                            {can_edit.then(|| {
                                let m2 = m.clone();
                                view! {
                                    <span class="item-buttons">
                                        <button type="button" class="icon" data-test="member-up" aria-label=format!("Move {m} up") title="Move up"
                                            disabled=i == 0 on:click=move |_| shift(members, announce, dirty, i, -1)>"↑"</button>
                                        <button type="button" class="icon" data-test="member-down" aria-label=format!("Move {m} down") title="Move down"
                                            disabled=i + 1 == n on:click=move |_| shift(members, announce, dirty, i, 1)>"↓"</button>
                                        <button type="button" class="icon" data-test="member-remove" aria-label=format!("Remove {m}") title="Remove"
                                            on:click=move |_| { members.update(|v| v.retain(|x| x != &m2)); dirty.set(true); }>"✕"</button>
                                    </span>
                                }
                            })}
                        </li>
                    }
                }).collect_view()}
            </ol>
        }.into_any()
    }
}

/// The choice of an eligible launch setting to add at the end.
#[component]
fn AddMember(
    members: RwSignal<Vec<String>>,
    dirty: RwSignal<bool>,
    catalog: StoredValue<Catalog>,
    application: RwSignal<String>,
) -> impl IntoView {
    let add_choice = RwSignal::new(String::new());
    let choices = Signal::derive(move || {
        let app = application.get();
        let m = members.get();
        catalog.with_value(|c| eligible(c, &app, &m))
    });
    Effect::new(move |_| {
        let list = choices.get();
        if !list.iter().any(|(v, _)| *v == add_choice.get_untracked()) {
            add_choice.set(list.first().map(|(v, _)| v.clone()).unwrap_or_default());
        }
    });
    view! {
        <div class="add-member">
            {move || {
                if choices.with(Vec::is_empty) {
                    view! {
                        <p class="muted" data-test="no-eligible">
                            "No other scheduled launch setting of this application with the same concurrency mode. "
                            "To add one, "<a href="/launch-settings/new">"create a scheduled launch setting"</a>
                            " and tick this group there."
                        </p>
                    }.into_any()
                } else {
                    view! {
                        <SelectField label="Add a launch setting" test="member-choice" value=add_choice options=choices
                            hint="only scheduled launch settings of this application with the members' concurrency mode" />
                        <button type="button" data-test="member-add" on:click=move |_| {
                            let c = add_choice.get_untracked();
                            if !c.is_empty() {
                                members.update(|v| v.push(c));
                                dirty.set(true);
                            }
                        }>"Add"</button>
                    }.into_any()
                }
            }}
        </div>
    }
}

/// Moves member `i` up (`delta` -1) or down (+1), says so to screen readers, and keeps the
/// keyboard on the moved member's button.
fn shift(
    members: RwSignal<Vec<String>>,
    announce: RwSignal<String>,
    dirty: RwSignal<bool>,
    i: usize,
    delta: isize,
) {
    let j = i as isize + delta;
    members.update(|v| {
        if j >= 0 && (j as usize) < v.len() {
            move_item(v, i, j as usize);
            announce.set(format!(
                "{} is now number {} of {}",
                v[j as usize],
                j + 1,
                v.len()
            ));
        }
    });
    dirty.set(true);
    // Keep the keyboard where the moved member went.
    #[cfg(feature = "hydrate")]
    {
        let target = if j >= 0 { j as usize } else { i };
        request_animation_frame(move || {
            let sel = format!(
                "[data-test=\"member\"][data-index=\"{target}\"] [data-test=\"{}\"]",
                if delta < 0 {
                    "member-up"
                } else {
                    "member-down"
                }
            );
            if let Ok(Some(el)) = document().query_selector(&sel) {
                use leptos::wasm_bindgen::JsCast;
                if let Ok(el) = el.dyn_into::<leptos::web_sys::HtmlElement>() {
                    let _ = el.focus();
                }
            }
        });
    }
}
