//! What the database says happened: fires per second, runs moved off a failed node, runs of
//! live nodes declared lost, late reports.

use super::load::Profile;
use crate::harness::{LONG, World, eventually, fire_time, held};
use am_services::status;
use chrono::{DateTime, Utc};
use std::{
    collections::{BTreeMap, BTreeSet},
    ops::Range,
};

/// What the schedule did within a window, over every group: fires that should have been
/// recorded (one per group and second), fires recorded more than once, seconds without a fire.
pub(super) struct Fires {
    pub(super) expected: usize,
    pub(super) doubled: usize,
    pub(super) missed: usize,
}

pub(super) async fn fires_within(
    w: &World,
    p: Profile,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Fires {
    let due = p.due(from, to);
    let mut out = Fires {
        expected: due * p.groups,
        doubled: 0,
        missed: 0,
    };
    for g in 0..p.groups {
        let times: Vec<_> = w
            .group_runs(&format!("demo.every-{g}"))
            .await
            .iter()
            .map(fire_time)
            .filter(|t| (from..=to).contains(t))
            .collect();
        let distinct: BTreeSet<_> = times.iter().collect();
        out.doubled += times.len() - distinct.len();
        out.missed += due.saturating_sub(distinct.len());
    }
    out
}

/// Every run of the groups fired within the window has ended; the statuses they ended with.
pub(super) async fn ended_within(
    w: &World,
    p: Profile,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> BTreeMap<String, usize> {
    eventually("every fire's run ended", LONG, || async {
        let mut statuses = BTreeMap::new();
        for g in 0..p.groups {
            for run in w.group_runs(&format!("demo.every-{g}")).await {
                if (from..=to).contains(&fire_time(&run)) {
                    *statuses.entry(run.status).or_insert(0) += 1;
                }
            }
        }
        status::activation::ACTIVE
            .iter()
            .all(|s| !statuses.contains_key(*s))
            .then_some(statuses)
    })
    .await
}

/// The launches and runs given to `host` that were still open when it failed at `failed`
/// (those sent to it before its loss was noticed included) and that another node took over
/// before `until` (its host row superseded or lost), and when the last of them ended, after
/// the failure.
pub(super) async fn moved_from(
    w: &World,
    host: &str,
    failed: DateTime<Utc>,
    until: DateTime<Utc>,
) -> (usize, chrono::Duration) {
    use am_services::entity::{activation_hosts, activations};
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let held: Vec<_> = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::Host.eq(host))
        .filter(
            activation_hosts::Column::Status.is_in([status::host::SUPERSEDED, status::host::LOST]),
        )
        .filter(activation_hosts::Column::FinishedAt.between(failed, until))
        .all(&w.db)
        .await
        .expect("query")
        .into_iter()
        .map(|h| h.activation_id)
        .collect();
    let ended: Vec<_> = activations::Entity::find()
        .filter(activations::Column::Id.is_in(held))
        .all(&w.db)
        .await
        .expect("query")
        .into_iter()
        .filter_map(|a| a.finished_at)
        .filter(|t| *t >= failed)
        .collect();
    let last = ended
        .iter()
        .max()
        .map_or(chrono::Duration::zero(), |t| *t - failed);
    (ended.len(), last)
}

/// Runs declared lost on a node that was alive: on any node but `faulted` at any time, on
/// `faulted` but while it was out of reach (a window of `away`, frozen or cut off, and up to the
/// node timeout after it, while its first heartbeat travels) or after it was killed at `killed`.
pub(super) async fn lost_while_live(
    w: &World,
    faulted: &str,
    away: &[Range<DateTime<Utc>>],
    killed: DateTime<Utc>,
) -> usize {
    use am_services::entity::activation_hosts;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let grace = chrono::Duration::seconds(5);
    let asleep = |t: &DateTime<Utc>| away.iter().any(|r| (r.start..r.end + grace).contains(t));
    activation_hosts::Entity::find()
        .filter(activation_hosts::Column::Status.eq(status::host::LOST))
        .all(&w.db)
        .await
        .expect("query")
        .into_iter()
        .filter(|h| h.host != faulted || h.finished_at.is_some_and(|t| t < killed && !asleep(&t)))
        .inspect(|h| {
            println!(
                "declared lost while live: activation {} on {}, started {:?}, last heartbeat \
                 {:?}, lost at {:?}: {:?}",
                h.activation_id, h.host, h.started_at, h.last_heartbeat_at, h.finished_at, h.error
            );
        })
        .count()
}

/// Reports `host` sent after `since` that carried an outdated fencing token (each is an
/// activation event `stale-report`): its answers about work the manager had moved away.
pub(super) async fn late_reports(w: &World, host: &str, since: DateTime<Utc>) -> usize {
    use am_services::entity::activation_events;
    use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
    let n = activation_events::Entity::find()
        .filter(activation_events::Column::Kind.eq("stale-report"))
        .filter(activation_events::Column::Host.eq(host))
        .filter(activation_events::Column::At.gte(since))
        .count(&w.db)
        .await
        .expect("query");
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The whole second after `t`.
pub(super) fn next_second(t: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::{DurationRound, TimeDelta};
    t.duration_trunc(TimeDelta::seconds(1)).unwrap_or(t) + TimeDelta::seconds(1)
}

/// Where the overlap policy `skip` was broken: for each launch setting of `ls`, pairs of its
/// runs that held a slot at the same time by the activation table (a run's span goes from its
/// first host's start to its last host's end; a run moved off a failed node spans both).
pub(super) async fn overlapping(w: &World, ls: &[String]) -> Vec<String> {
    use am_services::entity::{activation_hosts, activations};
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let runs = activations::Entity::find()
        .filter(activations::Column::LaunchSettingId.is_in(ls.iter().cloned()))
        .all(&w.db)
        .await
        .expect("query");
    let hosts = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::ActivationId.is_in(runs.iter().map(|r| r.id)))
        .all(&w.db)
        .await
        .expect("query");
    // Per launch setting: (start, end, run).
    type Span = (DateTime<Utc>, DateTime<Utc>, uuid::Uuid);
    let mut spans: BTreeMap<&str, Vec<Span>> = BTreeMap::new();
    for run in &runs {
        let Some((start, end)) = held(hosts.iter().filter(|h| h.activation_id == run.id)) else {
            continue;
        };
        let ls = run.launch_setting_id.as_deref().unwrap_or_default();
        spans.entry(ls).or_default().push((start, end, run.id));
    }
    let mut out = Vec::new();
    for (ls, mut list) in spans {
        list.sort();
        for pair in list.windows(2) {
            let ((_, a_end, a), (b_start, _, b)) = (pair[0], pair[1]);
            if b_start < a_end {
                out.push(format!(
                    "{ls}: run {b} started at {b_start} while {a} ran until {a_end}"
                ));
            }
        }
    }
    out
}
