//! The activations list's bulk actions over what the search matches, each asked first with
//! the count it will touch (twice when no filter narrows the search), then followed as a
//! background operation on the page: re-run (whole, or each from where it broke) and interrupt.
//! The operation started goes into the page's address (`operation=`), which shows its progress
//! and outcome above the list: a reload or a live refresh of the list keeps it in sight.

use crate::{
    api::{
        activations::ActivationsQuery,
        operations::{
            InterruptCount, InterruptMatching as StartInterrupt, RerunActivations, RerunCount,
        },
    },
    error::UiError,
};
use leptos::prelude::*;

/// Once the operation started, puts it into the page's address (the page shows it from there);
/// shows why it did not start otherwise.
fn follow(
    q: ActivationsQuery,
    started: impl Fn() -> Option<Result<String, UiError>> + Clone + Send + Sync + 'static,
) -> impl IntoView {
    let navigate = leptos_router::hooks::use_navigate();
    let result = started.clone();
    Effect::new(move |_| {
        if let Some(Ok(id)) = result() {
            navigate(
                &super::with_operation(&q, &id),
                leptos_router::NavigateOptions {
                    replace: true,
                    scroll: false,
                    ..Default::default()
                },
            );
        }
    });
    move || match started() {
        Some(Err(e)) => Some(view! { <p class="error" role="alert">{e.to_string()}</p> }),
        _ => None,
    }
}

/// The `data-test` names of a [`CountedQuestion`]'s parts.
#[derive(Clone, Copy)]
struct QuestionTests {
    ask: &'static str,
    question: &'static str,
    sure: &'static str,
    confirm: &'static str,
    cancel: &'static str,
}

/// The texts of a [`CountedQuestion`], each given the count.
#[derive(Clone, Copy)]
struct QuestionTexts {
    counting: &'static str,
    nothing: &'static str,
    /// Asked first when no filter narrows the search.
    everything: fn(u64) -> String,
    question: fn(u64) -> String,
    yes: fn(u64) -> String,
}

/// A bulk action's question: the count of what it will touch once counted, a second question
/// first when no filter narrows the search, and the confirming button, which runs `on_yes`.
#[component]
fn CountedQuestion(
    #[prop(into)] counting: Signal<bool>,
    counted: Signal<Option<Result<u64, UiError>>>,
    unfiltered: bool,
    sure: RwSignal<bool>,
    texts: QuestionTexts,
    tests: QuestionTests,
    danger: bool,
    on_yes: Callback<()>,
    on_cancel: Callback<()>,
) -> impl IntoView {
    let asked = move || match (counting.get(), counted.get()) {
        (true, _) | (_, None) => view! { <p class="muted">{texts.counting}</p> }.into_any(),
        (_, Some(Err(e))) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
        (_, Some(Ok(0))) => view! {
            <p data-test=tests.question data-count="0">{texts.nothing}</p>
        }
        .into_any(),
        (_, Some(Ok(n))) if unfiltered && !sure.get() => view! {
            <p data-test=tests.question>{(texts.everything)(n)}</p>
            <button class:danger=danger data-test=tests.sure on:click=move |_| sure.set(true)>
                {format!("Yes, all {n}")}
            </button>
        }
        .into_any(),
        (_, Some(Ok(n))) => view! {
            <p data-test=tests.question data-count=n.to_string()>{(texts.question)(n)}</p>
            <button class:danger=danger data-test=tests.confirm on:click=move |_| on_yes.run(())>
                {(texts.yes)(n)}
            </button>
        }
        .into_any(),
    };
    view! {
        <div class="card confirm" data-test=tests.ask>
            {asked}
            " "
            <button class="secondary" data-test=tests.cancel data-esc="close"
                on:click=move |_| on_cancel.run(())>"Cancel"</button>
        </div>
    }
}

const RERUN_TEXTS: QuestionTexts = QuestionTexts {
    counting: "Counting what matches…",
    nothing: "Nothing to re-run: no launch setting or group of the search.",
    everything: |n| {
        format!(
            "No filter is set: this re-runs every launch setting and group any activation ran, {n} in all. Are you sure?"
        )
    },
    question: |n| format!("Re-run {n} launch setting(s) and group(s), each once?"),
    yes: |n| format!("Re-run {n}"),
};

const BROKEN_TEXTS: QuestionTexts = QuestionTexts {
    question: |n| {
        format!("Re-run from where it broke {n} launch setting(s) and group(s), each once?")
    },
    yes: |n| format!("Re-run from where it broke {n}"),
    ..RERUN_TEXTS
};

const INTERRUPT_TEXTS: QuestionTexts = QuestionTexts {
    counting: "Counting what still runs…",
    nothing: "Nothing to interrupt: no activation of the search is still waiting or running.",
    everything: |n| {
        format!(
            "No filter is set: this interrupts every activation still waiting or running, {n} in all. Are you sure?"
        )
    },
    question: |n| {
        format!(
            "Interrupt {}? Waiting ones end at once, running ones when their nodes have stopped them.",
            am_domain::display::plural(n, "activation")
        )
    },
    yes: |n| format!("Interrupt {n}"),
};

/// Re-runs, as one bulk operation, what the activations matching the search ran: each launch
/// setting or group once, whole or from where its newest run broke. Asks first, with the count
/// it will start (twice when no filter narrows the search), then shows the operation's
/// progress.
#[component]
pub fn RerunMatching(q: ActivationsQuery) -> impl IntoView {
    let action = ServerAction::<RerunActivations>::new();
    let count = ServerAction::<RerunCount>::new();
    // The re-run being asked about (from where it broke or whole), and whether the second
    // question of an unfiltered search was answered.
    let asking = RwSignal::new(None::<bool>);
    let sure = RwSignal::new(false);
    let unfiltered = q.filter.is_unfiltered();
    let q_follow = q.clone();
    let ask = {
        let q = q.clone();
        move |from_where_it_broke: bool| {
            sure.set(false);
            asking.set(Some(from_where_it_broke));
            count.dispatch(RerunCount {
                query: q.clone(),
                from_where_it_broke,
            });
        }
    };
    let start = move |from_where_it_broke: bool| {
        action.dispatch(RerunActivations {
            query: q.clone(),
            from_where_it_broke,
        });
        asking.set(None);
    };
    let ask_whole = ask.clone();
    view! {
        <div class="bulk-actions" data-test="rerun-matching">
            <button data-test="rerun-matching-button" on:click=move |_| ask_whole(false)>
                "Re-run all matching…"
            </button>
            <button data-test="rerun-broken-button" on:click=move |_| ask(true)>
                "Re-run each from where it broke…"
            </button>
            <span class="muted">
                " each launch setting or group of the search once, in the background; from \
                where it broke: its newest failed run, a group from the member that failed, \
                a MANY run on its failed hosts"
            </span>
            {move || asking.get().map(|from_where_it_broke| {
                let start = start.clone();
                let texts = if from_where_it_broke { BROKEN_TEXTS } else { RERUN_TEXTS };
                view! {
                    <CountedQuestion counting=count.pending() counted=Signal::derive(move || count.value().get()) unfiltered sure texts danger=false
                        tests=QuestionTests {
                            ask: "rerun-ask", question: "rerun-question", sure: "rerun-sure",
                            confirm: "rerun-confirm", cancel: "rerun-cancel",
                        }
                        on_yes=Callback::new(move |()| start(from_where_it_broke))
                        on_cancel=Callback::new(move |()| asking.set(None)) />
                }
            })}
            {follow(q_follow, move || action.value().get())}
        </div>
    }
}

/// Interrupts, as one bulk operation, the activations matching the search that still wait or
/// run. Asks first with the count (twice when no filter narrows the search), then shows the
/// operation's progress.
#[component]
pub fn InterruptMatching(q: ActivationsQuery) -> impl IntoView {
    let action = ServerAction::<StartInterrupt>::new();
    let count = ServerAction::<InterruptCount>::new();
    let asking = RwSignal::new(false);
    let sure = RwSignal::new(false);
    let unfiltered = q.filter.is_unfiltered();
    let q_follow = q.clone();
    let ask = {
        let q = q.clone();
        move |_| {
            sure.set(false);
            asking.set(true);
            count.dispatch(InterruptCount { query: q.clone() });
        }
    };
    let start = move |()| {
        action.dispatch(StartInterrupt { query: q.clone() });
        asking.set(false);
    };
    view! {
        <div class="bulk-actions" data-test="interrupt-matching">
            <button class="danger" data-test="interrupt-matching-button" on:click=ask>
                "Interrupt all matching…"
            </button>
            <span class="muted">
                " those of the search still waiting or running, in the background; a group's \
                run takes its running member with it"
            </span>
            {move || asking.get().then(|| {
                let start = start.clone();
                view! {
                    <CountedQuestion counting=count.pending() counted=Signal::derive(move || count.value().get()) unfiltered sure texts=INTERRUPT_TEXTS danger=true
                        tests=QuestionTests {
                            ask: "interrupt-matching-ask", question: "interrupt-question",
                            sure: "interrupt-sure", confirm: "interrupt-matching-confirm",
                            cancel: "interrupt-matching-cancel",
                        }
                        on_yes=Callback::new(move |()| start(()))
                        on_cancel=Callback::new(move |()| asking.set(false)) />
                }
            })}
            {follow(q_follow, move || action.value().get())}
        </div>
    }
}
