//! Turning entities into list rows (presentation only).

use super::*;
use am_domain::catalog::{Concurrency, DataQueueKind, InputKind, LaunchKind, OverlapPolicy};
use am_services::run_status::RunStatus;

pub fn application(a: Application, catalog: &Catalog) -> ListRow {
    let agents = catalog
        .agents
        .iter()
        .filter(|g| g.application == a.id)
        .count();
    ListRow {
        href: entity_href(&EntityRef::Application(a.id.clone())),
        cells: vec![a.title, a.default_pool, agents.to_string()],
        id: a.id,
    }
}

pub fn pool(p: Pool) -> ListRow {
    ListRow {
        href: entity_href(&EntityRef::Pool(p.id.clone())),
        cells: vec![p.title, p.hosts.join(", ")],
        id: p.id,
    }
}

pub fn data_queue(q: DataQueue) -> ListRow {
    ListRow {
        href: entity_href(&EntityRef::DataQueue(q.id.clone())),
        cells: vec![
            q.title.clone(),
            match q.kind {
                DataQueueKind::Queue => "queue",
                DataQueueKind::Topic => "topic",
            }
            .into(),
            q.effective_address().to_owned(),
            q.delay.map(|d| d.to_string()).unwrap_or_default(),
        ],
        id: q.id,
    }
}

pub fn agent(a: Agent) -> ListRow {
    ListRow {
        href: entity_href(&EntityRef::agent(&a.application, &a.id)),
        cells: vec![
            a.application,
            a.title,
            match a.input {
                InputKind::Standalone => "standalone",
                InputKind::Messages => "messages",
            }
            .into(),
            match a.concurrency {
                Concurrency::Any => "ANY",
                Concurrency::Many => "MANY",
            }
            .into(),
            match a.overlap {
                OverlapPolicy::Allow => "allow",
                OverlapPolicy::Skip => "skip",
                OverlapPolicy::Interrupt => "interrupt",
            }
            .into(),
        ],
        id: a.id,
    }
}

fn status_cells(enabled: bool, s: Option<&RunStatus>) -> [String; 2] {
    match s {
        Some(s) => [
            s.current.clone(),
            s.last_result.clone().unwrap_or_else(|| "—".into()),
        ],
        None => [catalog_status(enabled).into(), "—".into()],
    }
}

pub fn status_view(s: RunStatus) -> StatusView {
    let backlog = s.backlog.is_some().then(|| backlog_cell(Some(&s)));
    StatusView {
        backlog,
        per_minute: s.backlog.as_ref().and_then(|b| b.processed_per_minute),
        stream: s.stream,
        recovery: recovery_cell(&s.recovery),
        current: s.current,
        last_result: s.last_result,
        last_result_at: s.last_result_at.map(am_domain::display::time),
        disabled_reason: s.disabled_reason,
        quarantined: s
            .quarantined
            .into_iter()
            .map(|q| super::QuarantineView {
                host: q.host,
                since: am_domain::display::time(q.since),
                cause: q.cause,
                activation: q.activation_id.map(|a| a.to_string()),
            })
            .collect(),
    }
}

/// Messages waiting in the broker, the nodes taking them and how fast the launch setting
/// processes them lately; `—` before the first sample.
fn backlog_cell(s: Option<&RunStatus>) -> String {
    match s.and_then(|s| s.backlog.as_ref()) {
        Some(b) => format!(
            "{} waiting · {} {}{}{}",
            b.ready,
            b.consumers,
            if b.consumers == 1 {
                "consumer"
            } else {
                "consumers"
            },
            if b.shared { " (shared)" } else { "" },
            b.processed_per_minute
                .map(|n| format!(" · {n}/min"))
                .unwrap_or_default()
        ),
        None => "—".into(),
    }
}

pub fn launch_setting(l: LaunchSetting, s: Option<&RunStatus>) -> ListRow {
    let [current, last] = status_cells(l.enabled, s);
    let backlog = backlog_cell(s);
    ListRow {
        href: entity_href(&EntityRef::LaunchSetting(l.id.clone())),
        cells: vec![
            l.application,
            l.agent,
            match l.kind {
                LaunchKind::Stream => "stream",
                LaunchKind::Scheduled => "scheduled",
            }
            .into(),
            current,
            last,
            backlog,
        ],
        id: l.id,
    }
}

pub fn schedule_group(g: ScheduleGroup, s: Option<&RunStatus>) -> ListRow {
    let [current, last] = status_cells(g.enabled, s);
    ListRow {
        href: entity_href(&EntityRef::ScheduleGroup(g.id.clone())),
        cells: vec![
            g.application,
            format!("{} ({})", g.cron, g.time_zone),
            g.members.len().to_string(),
            current,
            last,
        ],
        id: g.id,
    }
}

/// How often the runtime recovered a launch setting, in words; `None` when never.
fn recovery_cell(counts: &std::collections::BTreeMap<String, i64>) -> Option<String> {
    use am_services::recovery::kind;
    let parts: Vec<String> = kind::ALL
        .iter()
        .filter_map(|k| counts.get(*k).filter(|n| **n > 0).map(|n| (*k, *n)))
        .map(|(k, n)| {
            let (one, many) = match k {
                kind::START_TIMEOUT => ("start timeout", "start timeouts"),
                kind::LOST => ("lost run", "lost runs"),
                kind::REDISPATCH => ("re-dispatch", "re-dispatches"),
                kind::STALE_REPORT => ("stale report ignored", "stale reports ignored"),
                _ => ("quarantine", "quarantines"),
            };
            format!("{n} {}", if n == 1 { one } else { many })
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}
