//! The schedule groups a scheduled launch setting belongs to, chosen among its application's.

use crate::components::forms::FieldErrors;
use leptos::prelude::*;

/// A checkbox per group of `choices` (id, what it shows), ticked for those in `groups`.
#[component]
pub(super) fn GroupsFieldset(
    groups: RwSignal<Vec<String>>,
    choices: Signal<Vec<(String, String)>>,
    errors: Signal<Vec<String>>,
    can_edit: bool,
) -> impl IntoView {
    view! {
        <h2>"Schedule groups"</h2>
        <p class="hint">"A scheduled launch setting runs when a group that contains it fires; it must be in at least one."</p>
        <div class="checks" data-test="field-groups">
            {move || {
                let choices = choices.get();
                if choices.is_empty() {
                    return view! {
                        <p class="muted">"This application has no schedule group yet. "
                        <a href="/schedule-groups/new">"Create one"</a>" first."</p>
                    }.into_any();
                }
                choices.into_iter().map(|(g, text)| {
                    let gid = g.clone();
                    let checked = move || groups.with(|v| v.contains(&gid));
                    let gid2 = g.clone();
                    view! {
                        <label class="field check">
                            <input type="checkbox" data-test="group-choice" data-group=g.clone() disabled=!can_edit
                                checked=checked() prop:checked=checked
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    groups.update(|v| {
                                        v.retain(|x| x != &gid2);
                                        if on { v.push(gid2.clone()); }
                                    });
                                } />
                            <span>{text}</span>
                        </label>
                    }
                }).collect_view().into_any()
            }}
        </div>
        <FieldErrors errors test="groups" />
    }
}
