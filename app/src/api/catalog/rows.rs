//! Turning entities into list rows (presentation only).

use super::*;
use am_domain::catalog::LaunchKind;
use am_domain::read::run_status::RunStatus;

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
        href: am_domain::links::entity_page(&EntityRef::Application(a.id.clone())),
        cells: text(vec![a.title, a.default_pool, agents.to_string()]),
        title: None,
        enabled: None,
        id: a.id,
    }
}

pub fn pool(p: Pool) -> ListRow {
    ListRow {
        href: am_domain::links::entity_page(&EntityRef::Pool(p.id.clone())),
        cells: text(vec![p.title, p.hosts.join(", ")]),
        title: None,
        enabled: None,
        id: p.id,
    }
}

pub fn data_queue(q: DataQueue) -> ListRow {
    ListRow {
        href: am_domain::links::entity_page(&EntityRef::DataQueue(q.id.clone())),
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
        href: am_domain::links::entity_page(&EntityRef::agent(&a.application, &a.id)),
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

/// The backlog on two lines (lists).
fn backlog_lines(s: Option<&RunStatus>) -> Cell {
    s.and_then(RunStatus::backlog_parts).map_or_else(
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
        href: am_domain::links::entity_page(&EntityRef::LaunchSetting(l.id.clone())),
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
        href: am_domain::links::entity_page(&EntityRef::ScheduleGroup(g.id.clone())),
        title: (!g.title.is_empty()).then(|| g.title.clone()),
        cells: vec![Cell::Text(g.application), schedule, current, last, next],
        enabled: Some(g.enabled),
        id: g.id,
    }
}
