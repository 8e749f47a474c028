//! What the launch-setting form's selects offer, following the application and agent chosen:
//! the application's agents, the pools, the kinds the agent can run as, the application's
//! schedule groups.

use crate::components::forms::word_options;
use am_domain::catalog::{Catalog, LaunchKind};
use leptos::prelude::*;

type Options = Vec<(String, String)>;

/// Each select's options, as (value, text).
#[derive(Clone)]
pub(super) struct Choices {
    pub(super) apps: Options,
    pub(super) agents: Signal<Options>,
    pub(super) pools: Signal<Options>,
    pub(super) kinds: Signal<Options>,
    pub(super) groups: Signal<Options>,
}

impl Choices {
    /// The options for `application`; `agent` and `kind` are moved to a choice that exists
    /// when the application or agent changes (another application's first agent; scheduled
    /// for an agent that takes no messages).
    pub(super) fn new(
        catalog: StoredValue<Catalog>,
        application: RwSignal<String>,
        agent: RwSignal<String>,
        kind: RwSignal<String>,
        is_messages: Signal<bool>,
    ) -> Self {
        let apps = catalog.with_value(|c| {
            c.applications
                .iter()
                .map(|a| (a.id.clone(), a.id.clone()))
                .collect()
        });
        let agents = Signal::derive(move || {
            let app = application.get();
            catalog.with_value(|c| {
                c.agents
                    .iter()
                    .filter(|a| a.application == app)
                    .map(|a| (a.id.clone(), format!("{} ({})", a.id, a.input)))
                    .collect::<Vec<_>>()
            })
        });
        let pools = Signal::derive(move || {
            let app = application.get();
            catalog.with_value(|c| {
                let default = c
                    .application(&app)
                    .map(|a| a.default_pool.clone())
                    .unwrap_or_default();
                let mut v = vec![(String::new(), format!("application's default ({default})"))];
                v.extend(c.pools.iter().map(|p| (p.id.clone(), p.id.clone())));
                v
            })
        });
        let kinds = Signal::derive(move || {
            if is_messages.get() {
                word_options(&[
                    (LaunchKind::Stream, "runs continuously"),
                    (LaunchKind::Scheduled, "run by schedule groups"),
                ])
            } else {
                word_options(&[(LaunchKind::Scheduled, "run by schedule groups")])
            }
        });
        let groups = Signal::derive(move || {
            let app = application.get();
            catalog.with_value(|c| {
                c.schedule_groups
                    .iter()
                    .filter(|g| g.application == app)
                    .map(|g| {
                        (
                            g.id.clone(),
                            format!("{} — {} ({})", g.id, g.cron, g.time_zone),
                        )
                    })
                    .collect::<Vec<_>>()
            })
        });
        // Another application: pick one of its agents rather than keep a stale one.
        Effect::new(move |_| {
            let list = agents.get();
            if !list.iter().any(|(v, _)| *v == agent.get_untracked()) {
                agent.set(list.first().map(|(v, _)| v.clone()).unwrap_or_default());
            }
        });
        // A standalone agent has no stream launch settings.
        Effect::new(move |_| {
            if !is_messages.get() && kind.get_untracked() == LaunchKind::Stream.as_str() {
                kind.set(LaunchKind::Scheduled.as_str().into());
            }
        });
        Self {
            apps,
            agents,
            pools,
            kinds,
            groups,
        }
    }
}
