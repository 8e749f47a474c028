//! The bulk actions of the launch-setting and schedule-group lists, for operators: rows are
//! selected by their checkboxes (or a whole page at once), then *Run now…*, *Interrupt…*,
//! *Disable…* or *Enable…* acts on all of them, each asked first with the count it will touch. What it did
//! stays on each row (as a row's own action) and a summary on the bar takes focus.

use crate::{
    api::{
        bulk::{BulkAct, BulkAction, BulkDone},
        catalog::Kind,
    },
    components::row_switch::{RowDone, RowOutcomes},
};
use leptos::prelude::*;
use std::collections::BTreeSet;

/// The rows an operator selected on a list page, by id; kept while the list is read again.
#[derive(Debug, Clone, Copy)]
pub struct Selection(RwSignal<BTreeSet<String>>);

impl Default for Selection {
    fn default() -> Self {
        Self(RwSignal::new(BTreeSet::new()))
    }
}

impl Selection {
    pub fn has(self, id: &str) -> bool {
        self.0.with(|s| s.contains(id))
    }

    pub fn set(self, id: &str, on: bool) {
        self.0.update(|s| {
            if on {
                s.insert(id.to_owned());
            } else {
                s.remove(id);
            }
        });
    }

    /// Whether every one of `ids` (a page's rows) is selected.
    pub fn all(self, ids: &[String]) -> bool {
        !ids.is_empty() && self.0.with(|s| ids.iter().all(|id| s.contains(id)))
    }

    pub fn set_all(self, ids: &[String], on: bool) {
        for id in ids {
            self.set(id, on);
        }
    }

    fn count(self) -> usize {
        self.0.with(BTreeSet::len)
    }

    fn ids(self) -> Vec<String> {
        self.0.with(|s| s.iter().cloned().collect())
    }

    fn clear(self) {
        self.0.set(BTreeSet::new());
    }
}

/// How the bar says a bulk action: its button, question, answer and outcome.
trait Said: Copy {
    fn button(self) -> &'static str;
    fn test(self) -> &'static str;
    fn question(self, what: &str) -> String;
    fn yes(self, n: usize) -> String;
    fn past(self) -> &'static str;
    fn danger(self) -> bool;
}

impl Said for BulkAction {
    fn button(self) -> &'static str {
        match self {
            BulkAction::RunNow => "Run now…",
            BulkAction::Interrupt => "Interrupt…",
            BulkAction::Disable => "Disable…",
            BulkAction::Enable => "Enable…",
        }
    }

    fn test(self) -> &'static str {
        match self {
            BulkAction::RunNow => "bulk-run",
            BulkAction::Interrupt => "bulk-interrupt",
            BulkAction::Disable => "bulk-disable",
            BulkAction::Enable => "bulk-enable",
        }
    }

    fn question(self, what: &str) -> String {
        match self {
            BulkAction::RunNow => format!("Run {what} now? Each starts a run of its own."),
            BulkAction::Interrupt => format!(
                "Interrupt what {what} are running? Waiting runs end at once, running ones when \
                 their nodes have stopped them."
            ),
            BulkAction::Disable => format!(
                "Disable {what}? Their schedules stop and the nodes running them are told to stop."
            ),
            BulkAction::Enable => format!("Enable {what}? Their schedules start again."),
        }
    }

    fn yes(self, n: usize) -> String {
        match self {
            BulkAction::RunNow => format!("Run {n}"),
            BulkAction::Interrupt => format!("Interrupt {n}"),
            BulkAction::Disable => format!("Disable {n}"),
            BulkAction::Enable => format!("Enable {n}"),
        }
    }

    fn past(self) -> &'static str {
        match self {
            BulkAction::RunNow => "Started runs of",
            BulkAction::Interrupt => "Interrupted the runs of",
            BulkAction::Disable => "Disabled",
            BulkAction::Enable => "Enabled",
        }
    }

    fn danger(self) -> bool {
        matches!(self, BulkAction::Interrupt | BulkAction::Disable)
    }
}

/// "3 launch settings", "1 schedule group".
fn counted(kind: Kind, n: usize) -> String {
    let plural = kind.title().to_lowercase();
    if n == 1 {
        format!("1 {}", plural.trim_end_matches('s'))
    } else {
        format!("{n} {plural}")
    }
}

/// The rows' outcomes of a bulk action, and its summary.
fn outcomes_of(
    bulk: BulkAction,
    kind: Kind,
    done: Vec<BulkDone>,
) -> (Vec<(String, RowDone)>, String) {
    let total = done.len();
    let mut acted = 0;
    let rows = done
        .into_iter()
        .map(|d| {
            let row = match (d.error, d.activation, d.interrupted) {
                (Some(e), _, _) => RowDone::Failed(e),
                (None, Some(a), _) => RowDone::Started(a),
                (None, None, Some(n)) => RowDone::Interrupted(n),
                (None, None, None) => RowDone::Switched(bulk == BulkAction::Enable),
            };
            if !matches!(row, RowDone::Failed(_)) {
                acted += 1;
            }
            (d.id, row)
        })
        .collect();
    let mut summary = format!("{} {acted} of {}.", bulk.past(), counted(kind, total));
    if acted < total {
        summary.push_str(" The others say why on their rows.");
    }
    (rows, summary)
}

/// A list page's bulk actions: the selection, the server calls and what the last one did. Made
/// once by the page, so a reading of the list again (which draws the table and its bar anew)
/// loses neither a call in flight nor its outcome.
#[derive(Clone, Copy)]
pub struct Bulks {
    kind: Kind,
    pub selection: Selection,
    call: ServerAction<BulkAct>,
    asking: RwSignal<Option<BulkAction>>,
    acting: RwSignal<Option<BulkAction>>,
    summary: RwSignal<Option<Result<String, String>>>,
    /// The summary takes focus once the list was read again after its action ([`Bulks::settle`]):
    /// drawn at once, it would take focus in a bar about to be replaced.
    pending_focus: RwSignal<bool>,
    focus: RwSignal<bool>,
}

impl Bulks {
    /// The bulk actions of `kind`'s list; `changed` reads the list again after each, and each
    /// row's outcome goes to `outcomes`.
    pub fn new(kind: Kind, outcomes: RowOutcomes, changed: Callback<()>) -> Self {
        let b = Self {
            kind,
            selection: Selection::default(),
            call: ServerAction::new(),
            asking: RwSignal::new(None),
            acting: RwSignal::new(None),
            summary: RwSignal::new(None),
            pending_focus: RwSignal::new(false),
            focus: RwSignal::new(false),
        };
        let finish = move |r: Result<Vec<BulkDone>, crate::error::UiError>| {
            let Some(bulk) = b.acting.get_untracked() else {
                return;
            };
            match r {
                Ok(done) => {
                    let (rows, text) = outcomes_of(bulk, kind, done);
                    outcomes.record_many(rows);
                    b.selection.clear();
                    b.summary.set(Some(Ok(text)));
                }
                Err(e) => b.summary.set(Some(Err(e.detail()))),
            }
            b.acting.set(None);
            b.pending_focus.set(true);
            changed.run(());
        };
        Effect::new(move |_| {
            if let Some(r) = b.call.value().get() {
                finish(r);
            }
        });
        b
    }

    /// Focuses the last action's summary if it waits for the list: the page calls it once the
    /// list is drawn from its new rows.
    pub fn settle(self) {
        if self
            .pending_focus
            .try_update(std::mem::take)
            .unwrap_or(false)
        {
            self.focus.set(true);
        }
    }

    fn busy(self) -> bool {
        self.call.pending().get()
    }

    fn act(self, action: BulkAction) {
        self.asking.set(None);
        self.acting.set(Some(action));
        self.summary.set(None);
        self.call.dispatch(BulkAct {
            kind: self.kind,
            ids: self.selection.ids(),
            action,
        });
    }
}

/// The bar above a list: the count selected, the actions, the question with the count, and
/// what the last action did (hidden while there is none of these).
#[component]
pub fn BulkBar(bulks: Bulks) -> impl IntoView {
    let Bulks {
        kind,
        selection,
        asking,
        summary,
        focus,
        ..
    } = bulks;
    let summary_ref = NodeRef::<leptos::html::P>::new();
    Effect::new(move |_| {
        if focus.get()
            && let Some(el) = summary_ref.get()
        {
            focus.set(false);
            let _ = el.focus();
        }
    });
    let confirm_ref = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if let Some(el) = confirm_ref.get() {
            let _ = el.focus();
        }
    });
    view! {
        <div class="bulk-bar" data-test="bulk-bar" role="region" aria-label="Selected rows"
            hidden=move || selection.count() == 0 && summary.get().is_none()>
            {move || (selection.count() > 0).then(|| {
                let n = selection.count();
                view! {
                    <span data-test="bulk-count" data-count=n.to_string()>{format!("{} selected", counted(kind, n))}</span>
                    {move || asking.get().is_none().then(|| view! {
                        {BulkAction::ALL.iter().map(|&b| view! {
                            <button type="button" class="small" class:danger=b.danger() data-test=b.test()
                                disabled=move || bulks.busy() on:click=move |_| asking.set(Some(b))>{b.button()}</button>
                        }).collect_view()}
                        <button type="button" class="small secondary" data-test="bulk-clear"
                            on:click=move |_| selection.clear()>"Clear selection"</button>
                    })}
                    {move || asking.get().map(|b| view! {
                        <span class="confirm" data-test="bulk-ask">
                            {b.question(&counted(kind, n))} " "
                            <button type="button" class="small" class:danger=b.danger() data-test="bulk-yes"
                                node_ref=confirm_ref on:click=move |_| bulks.act(b)>{b.yes(n)}</button>
                            " "
                            <button type="button" class="small secondary" data-test="bulk-no" data-esc="close"
                                on:click=move |_| asking.set(None)>"Cancel"</button>
                        </span>
                    })}
                }
            })}
            {move || summary.get().map(|s| match s {
                Ok(text) => view! {
                    <p class="row-outcome" data-test="bulk-outcome" tabindex="-1" role="status" node_ref=summary_ref>{text}</p>
                }.into_any(),
                Err(e) => view! {
                    <p class="error" data-test="bulk-outcome" tabindex="-1" role="alert" node_ref=summary_ref>{e}</p>
                }.into_any(),
            })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_words() {
        assert_eq!(counted(Kind::LaunchSettings, 1), "1 launch setting");
        assert_eq!(counted(Kind::ScheduleGroups, 3), "3 schedule groups");
    }

    #[test]
    fn a_summary_says_how_many_were_acted_on() {
        let done = vec![
            BulkDone {
                id: "a".into(),
                activation: None,
                interrupted: None,
                error: None,
            },
            BulkDone {
                id: "b".into(),
                activation: None,
                interrupted: None,
                error: Some("launch setting 'b' does not exist".into()),
            },
        ];
        let (rows, text) = outcomes_of(BulkAction::Disable, Kind::LaunchSettings, done);
        assert_eq!(
            rows,
            [
                ("a".to_owned(), RowDone::Switched(false)),
                (
                    "b".to_owned(),
                    RowDone::Failed("launch setting 'b' does not exist".into())
                ),
            ]
        );
        assert_eq!(
            text,
            "Disabled 1 of 2 launch settings. The others say why on their rows."
        );
        let (_, text) = outcomes_of(
            BulkAction::RunNow,
            Kind::ScheduleGroups,
            vec![BulkDone {
                id: "g".into(),
                activation: Some("0190".into()),
                interrupted: None,
                error: None,
            }],
        );
        assert_eq!(text, "Started runs of 1 of 1 schedule group.");
        let (rows, text) = outcomes_of(
            BulkAction::Interrupt,
            Kind::LaunchSettings,
            vec![BulkDone {
                id: "l".into(),
                activation: None,
                interrupted: Some(2),
                error: None,
            }],
        );
        assert_eq!(rows, [("l".to_owned(), RowDone::Interrupted(2))]);
        assert_eq!(text, "Interrupted the runs of 1 of 1 launch setting.");
    }
}
