//! Turning entities into list rows (presentation only).

use super::*;
use am_domain::catalog::LaunchKind;
use am_services::run_status::RunStatus;

fn text(cells: Vec<String>) -> Vec<Cell> {
    cells.into_iter().map(Cell::Text).collect()
}

pub fn application(a: Application, catalog: &Catalog) -> ListRow {
    let agents = catalog
        .agents
        .iter()
        .filter(|g| g.application == a.id)
        .count();
    ListRow {
        href: entity_href(&EntityRef::Application(a.id.clone())),
        cells: text(vec![a.title, a.default_pool, agents.to_string()]),
        title: None,
        enabled: None,
        id: a.id,
    }
}

pub fn pool(p: Pool) -> ListRow {
    ListRow {
        href: entity_href(&EntityRef::Pool(p.id.clone())),
        cells: text(vec![p.title, p.hosts.join(", ")]),
        title: None,
        enabled: None,
        id: p.id,
    }
}

pub fn data_queue(q: DataQueue) -> ListRow {
    ListRow {
        href: entity_href(&EntityRef::DataQueue(q.id.clone())),
        title: None,
        cells: text(vec![
            q.title.clone(),
            q.kind.as_str().into(),
            q.effective_address().to_owned(),
            q.delay.map(|d| d.to_string()).unwrap_or_default(),
        ]),
        enabled: None,
        id: q.id,
    }
}

pub fn agent(a: Agent) -> ListRow {
    ListRow {
        href: entity_href(&EntityRef::agent(&a.application, &a.id)),
        title: None,
        cells: text(vec![
            a.application,
            a.title,
            a.input.as_str().into(),
            a.concurrency.as_str().into(),
            a.overlap.as_str().into(),
        ]),
        enabled: None,
        id: a.id,
    }
}

/// The current status as a badge (with `note` beneath), and the last result with when it came.
fn status_cells(enabled: bool, s: Option<&RunStatus>, note: String) -> [Cell; 2] {
    let current = s.map_or_else(|| catalog_status(enabled).to_owned(), |s| s.current.clone());
    [
        Cell::Badge {
            value: Some(current),
            at: None,
            note: Some(note),
        },
        Cell::Badge {
            value: s.and_then(|s| s.last_result.clone()),
            at: s.and_then(|s| s.last_result_at),
            note: None,
        },
    ]
}

pub fn status_view(s: RunStatus) -> StatusView {
    let backlog = s.backlog.is_some().then(|| backlog_cell(Some(&s)));
    StatusView {
        backlog,
        per_minute: s
            .backlog
            .as_ref()
            .and_then(|b| b.processed_per_minute.zip(b.processed_over_seconds)),
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

/// What waits for a launch setting in the broker, and who takes it how fast over the broker's
/// last two samples (`1 consumer (shared) · 12/min over 30 s`); `None` before the first sample.
fn backlog_parts(s: Option<&RunStatus>) -> Option<(String, String)> {
    let b = s.and_then(|s| s.backlog.as_ref())?;
    Some((
        format!("{} waiting", b.ready),
        format!(
            "{}{}{}",
            am_domain::display::plural(u64::from(b.consumers), "consumer"),
            if b.shared { " (shared)" } else { "" },
            b.processed_per_minute
                .zip(b.processed_over_seconds)
                .map(|(n, s)| format!(" · {n}/min over {s} s"))
                .unwrap_or_default()
        ),
    ))
}

/// The backlog on one line (the status panel), `—` before the first sample.
fn backlog_cell(s: Option<&RunStatus>) -> String {
    backlog_parts(s).map_or_else(
        || "—".into(),
        |(waiting, taking)| format!("{waiting} · {taking}"),
    )
}

/// The backlog on two lines (lists).
fn backlog_lines(s: Option<&RunStatus>) -> Cell {
    backlog_parts(s).map_or_else(
        || Cell::Text("—".into()),
        |(waiting, taking)| Cell::Two(waiting, taking),
    )
}

pub fn launch_setting(
    l: LaunchSetting,
    s: Option<&RunStatus>,
    next_fire: Option<chrono::DateTime<chrono::Utc>>,
) -> ListRow {
    let stream = l.kind == LaunchKind::Stream;
    let [current, mut last] = status_cells(l.enabled, s, l.kind.as_str().into());
    // What went wrong lately, beneath the last run.
    if let (Cell::Badge { note, .. }, Some(r)) = (&mut last, s.and_then(|s| s.last_24h))
        && r.failures + r.dead_letters > 0
    {
        *note = Some(format!(
            "24 h: {} · {}",
            am_domain::display::plural(r.failures, "failure"),
            am_domain::display::plural(r.dead_letters, "dead letter")
        ));
    }
    let next = match (stream, l.enabled, next_fire) {
        (true, _, _) => Cell::Text("—".into()),
        (false, false, _) => Cell::Text("—".into()),
        (false, true, at) => Cell::Time(at, "in no enabled group".into()),
    };
    ListRow {
        href: entity_href(&EntityRef::LaunchSetting(l.id.clone())),
        title: (!l.title.is_empty()).then(|| l.title.clone()),
        cells: vec![
            Cell::Two(l.application, l.agent),
            current,
            last,
            next,
            backlog_lines(s),
        ],
        enabled: Some(l.enabled),
        id: l.id,
    }
}

pub fn schedule_group(g: ScheduleGroup, s: Option<&RunStatus>) -> ListRow {
    let members = am_domain::display::plural(g.members.len() as u64, "member");
    let [current, last] = status_cells(g.enabled, s, members);
    let schedule = match am_domain::schedule::parse_cron(&g.cron)
        .ok()
        .and_then(|c| am_domain::schedule::in_words(&c, &g.time_zone))
    {
        Some(words) => Cell::Two(words, g.cron.clone()),
        None => Cell::Two(g.cron.clone(), g.time_zone.clone()),
    };
    let next = if g.enabled {
        Cell::Time(s.and_then(|s| s.next_fire_at), "not planned".into())
    } else {
        Cell::Text("—".into())
    };
    ListRow {
        href: entity_href(&EntityRef::ScheduleGroup(g.id.clone())),
        title: (!g.title.is_empty()).then(|| g.title.clone()),
        cells: vec![Cell::Text(g.application), schedule, current, last, next],
        enabled: Some(g.enabled),
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
