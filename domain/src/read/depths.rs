//! What the broker's queues hold, as a replica's reconciler task samples it: ready messages
//! and consumers of the queues nodes consume and of the unrouted queues, and the objects the
//! sample could not find.

use crate::topology::{BrokerObjects, ObjectKind, queue_role};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one queue nodes consume (or the unrouted queue of a data queue) holds, as last sampled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueueDepth {
    pub queue: String,
    /// `subscription`, `shared` or `unrouted`.
    pub role: String,
    pub launch_setting: Option<String>,
    pub data_queue: Option<String>,
    /// Messages waiting to be delivered (not those a node holds unacknowledged).
    pub ready: u32,
    /// Nodes consuming it.
    pub consumers: u32,
}

/// The last sample of what the broker holds, per consumed and unrouted queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Depths {
    /// When the sample began.
    pub sampled_at: Option<DateTime<Utc>>,
    pub queues: Vec<QueueDepth>,
    /// Applied exchanges and queues the broker did not have.
    #[serde(default)]
    pub missing: Vec<MissingObject>,
    /// Messages processed by the running activations of each launch setting, as their nodes'
    /// last heartbeats said at the sample (the base of the next sample's rates; internal, not
    /// shown by the API).
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub processed: BTreeMap<String, i64>,
    /// Messages each launch setting processed per minute between the last two samples.
    #[serde(default)]
    pub processed_per_minute: BTreeMap<String, u64>,
    /// Seconds between the last two samples: the window of `processed_per_minute`.
    #[serde(default)]
    pub rate_window_seconds: Option<u64>,
}

/// An object the last sample did not find: one the reconciler applied, or an exchange the
/// catalog names but others create (a dead-letter forward target).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MissingObject {
    pub object: ObjectKind,
    pub name: String,
    /// The launch setting that forwards its dead letters there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded_by: Option<String>,
}

/// Messages processed per minute by each launch setting between two samples of its running
/// activations' counters taken `elapsed` apart. A launch setting missing from either sample,
/// or whose count went down (an activation ended, its counters left the sum), has no rate.
pub fn rates(
    before: &BTreeMap<String, i64>,
    after: &BTreeMap<String, i64>,
    elapsed: chrono::Duration,
) -> BTreeMap<String, u64> {
    let ms = elapsed.num_milliseconds();
    if ms <= 0 {
        return BTreeMap::new();
    }
    after
        .iter()
        .filter_map(|(ls, now)| {
            let grown = u64::try_from(now - before.get(ls)?).ok()?;
            let per_minute = grown.saturating_mul(60_000) / u64::try_from(ms).ok()?;
            Some((ls.clone(), per_minute))
        })
        .collect()
}

/// What waits in the broker for one launch setting, from the last sample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Backlog {
    /// The queue the launch setting consumes.
    pub queue: String,
    /// The queue is its data queue's shared one (kind `queue`): every launch setting of that
    /// data queue takes from it, so they show the same backlog.
    pub shared: bool,
    /// Messages waiting to be delivered.
    pub ready: u32,
    /// Nodes consuming the queue.
    pub consumers: u32,
    /// Messages the launch setting processed per minute (its nodes' counters between the last
    /// two samples); `None` when it ran in neither or an activation ended between.
    pub processed_per_minute: Option<u64>,
    /// The seconds `processed_per_minute` was measured over (between the two samples).
    #[serde(default)]
    pub processed_over_seconds: Option<u64>,
    pub sampled_at: Option<DateTime<Utc>>,
}

impl Depths {
    /// The backlog of one launch setting whose agent takes `data_queue`, if its queue was
    /// sampled: its own subscription, or its data queue's shared queue.
    pub fn backlog_of(&self, launch_setting: &str, data_queue: Option<&str>) -> Option<Backlog> {
        let own = self.queues.iter().find(|q| {
            q.role == queue_role::SUBSCRIPTION
                && q.launch_setting.as_deref() == Some(launch_setting)
        });
        let found = own.or_else(|| {
            self.queues.iter().find(|q| {
                q.role == queue_role::SHARED
                    && data_queue.is_some()
                    && q.data_queue.as_deref() == data_queue
            })
        })?;
        Some(self.backlog(launch_setting, found))
    }

    /// Totals for the dashboard: what waits for nodes, what no launch setting took, queues no
    /// node consumes, and the largest backlogs.
    pub fn summary(&self) -> crate::dashboard::BrokerBacklog {
        use crate::dashboard::{BrokerBacklog, LARGEST_BACKLOGS, QueueBacklog};
        let mut out = BrokerBacklog {
            sampled_at: self.sampled_at,
            ..BrokerBacklog::default()
        };
        let mut waiting: Vec<&QueueDepth> = Vec::new();
        for q in &self.queues {
            let unrouted = q.role == queue_role::UNROUTED;
            if unrouted {
                out.unrouted += u64::from(q.ready);
            } else {
                out.ready += u64::from(q.ready);
                if q.ready > 0 && q.consumers == 0 {
                    out.unconsumed += 1;
                }
            }
            if q.ready > 0 {
                waiting.push(q);
            }
        }
        waiting.sort_by(|a, b| b.ready.cmp(&a.ready).then_with(|| a.queue.cmp(&b.queue)));
        out.largest = waiting
            .into_iter()
            .take(LARGEST_BACKLOGS)
            .map(|q| QueueBacklog {
                queue: q.queue.clone(),
                launch_setting: q.launch_setting.clone(),
                data_queue: q.data_queue.clone(),
                unrouted: q.role == queue_role::UNROUTED,
                ready: u64::from(q.ready),
                consumers: q.consumers,
            })
            .collect();
        out
    }

    /// Messages kept in the unrouted queue of `data_queue`, if it was sampled.
    pub fn unrouted_of(&self, data_queue: &str) -> Option<u32> {
        self.queues
            .iter()
            .find(|q| q.role == queue_role::UNROUTED && q.data_queue.as_deref() == Some(data_queue))
            .map(|q| q.ready)
    }

    fn backlog(&self, launch_setting: &str, q: &QueueDepth) -> Backlog {
        Backlog {
            queue: q.queue.clone(),
            shared: q.role == queue_role::SHARED,
            ready: q.ready,
            consumers: q.consumers,
            processed_per_minute: self.processed_per_minute.get(launch_setting).copied(),
            processed_over_seconds: self
                .processed_per_minute
                .contains_key(launch_setting)
                .then_some(self.rate_window_seconds)
                .flatten(),
            sampled_at: self.sampled_at,
        }
    }

    /// The backlog of each of `settings` whose queue was sampled: its own subscription, or its
    /// data queue's shared queue.
    pub fn backlogs<'a>(
        &self,
        catalog: &crate::catalog::Catalog,
        settings: impl IntoIterator<Item = &'a crate::catalog::LaunchSetting>,
    ) -> std::collections::HashMap<String, Backlog> {
        let mut own = std::collections::HashMap::new();
        let mut shared = std::collections::HashMap::new();
        for q in &self.queues {
            match (q.role.as_str(), &q.launch_setting, &q.data_queue) {
                (queue_role::SUBSCRIPTION, Some(ls), _) => {
                    own.insert(ls.as_str(), q);
                }
                (queue_role::SHARED, _, Some(dq)) => {
                    shared.insert(dq.as_str(), q);
                }
                _ => {}
            }
        }
        let data_queue_of: std::collections::HashMap<(&str, &str), &str> = catalog
            .agents
            .iter()
            .filter_map(|a| {
                a.data_queue
                    .as_deref()
                    .map(|dq| ((a.application.as_str(), a.id.as_str()), dq))
            })
            .collect();
        settings
            .into_iter()
            .filter_map(|ls| {
                let found = own.get(ls.id.as_str()).or_else(|| {
                    data_queue_of
                        .get(&(ls.application.as_str(), ls.agent.as_str()))
                        .and_then(|dq| shared.get(dq))
                })?;
                Some((ls.id.clone(), self.backlog(&ls.id, found)))
            })
            .collect()
    }
}

/// The queues whose depth is worth sampling: what nodes consume and what no launch setting
/// took, with their labels.
pub fn sampled_queues(objects: &BrokerObjects) -> Vec<QueueDepth> {
    use crate::topology::QueueRole as R;
    objects
        .queues
        .values()
        .filter_map(|q| {
            let (role, ls, dq) = match &q.role {
                R::Subscription {
                    launch_setting,
                    data_queue,
                    ..
                } => (
                    queue_role::SUBSCRIPTION,
                    Some(launch_setting),
                    Some(data_queue),
                ),
                R::Shared { data_queue, .. } => (queue_role::SHARED, None, Some(data_queue)),
                R::Unrouted { data_queue } => (queue_role::UNROUTED, None, Some(data_queue)),
                R::Delay { .. } | R::Wait | R::System => return None,
            };
            Some(QueueDepth {
                queue: q.name.clone(),
                role: role.to_owned(),
                launch_setting: ls.cloned(),
                data_queue: dq.cloned(),
                ready: 0,
                consumers: 0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(queue: &str, role: &str, ls: Option<&str>, dq: &str, ready: u32) -> QueueDepth {
        QueueDepth {
            queue: queue.into(),
            role: role.into(),
            launch_setting: ls.map(Into::into),
            data_queue: Some(dq.into()),
            ready,
            consumers: 1,
        }
    }

    #[test]
    fn a_launch_setting_shows_its_own_queue_or_its_data_queues_shared_one() {
        let d = Depths {
            sampled_at: None,
            queues: vec![
                depth("am.ls.a", "subscription", Some("a"), "events", 3),
                depth("am.dq.jobs", "shared", None, "jobs", 7),
                depth("am.dq.jobs.unrouted", "unrouted", None, "jobs", 9),
            ],
            processed_per_minute: [("a".to_owned(), 12)].into(),
            rate_window_seconds: Some(30),
            ..Depths::default()
        };
        let own = d.backlog_of("a", Some("events")).expect("own");
        assert_eq!((own.ready, own.shared), (3, false));
        // A rate says the window it was measured over; no rate, no window.
        assert_eq!(
            (own.processed_per_minute, own.processed_over_seconds),
            (Some(12), Some(30))
        );
        let shared = d.backlog_of("b", Some("jobs")).expect("shared");
        assert_eq!(
            (shared.queue.as_str(), shared.ready, shared.shared),
            ("am.dq.jobs", 7, true)
        );
        assert_eq!(
            (shared.processed_per_minute, shared.processed_over_seconds),
            (None, None)
        );
        assert!(d.backlog_of("c", Some("other")).is_none());
        assert!(d.backlog_of("c", None).is_none());
    }

    #[test]
    fn rates_come_from_counters_that_grew_between_two_samples() {
        let counts = |pairs: &[(&str, i64)]| -> BTreeMap<String, i64> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
        };
        let before = counts(&[("a", 100), ("b", 50), ("gone", 7)]);
        let after = counts(&[("a", 130), ("b", 40), ("new", 3)]);
        let r = rates(&before, &after, chrono::Duration::seconds(5));
        // 30 in 5 s; `b` went down (an activation ended); `new` has no base; `gone` stopped.
        assert_eq!(r, BTreeMap::from([("a".to_owned(), 360)]));
        assert!(rates(&before, &after, chrono::Duration::zero()).is_empty());
    }

    #[test]
    fn the_dashboard_sums_what_waits_and_names_the_largest_backlogs() {
        let mut idle = depth("am.ls.b", "subscription", Some("b"), "events", 4);
        idle.consumers = 0;
        let d = Depths {
            sampled_at: None,
            queues: vec![
                depth("am.ls.a", "subscription", Some("a"), "events", 3),
                idle,
                depth("am.dq.jobs", "shared", None, "jobs", 7),
                depth("am.dq.jobs.unrouted", "unrouted", None, "jobs", 9),
                depth("am.ls.c", "subscription", Some("c"), "events", 0),
            ],
            ..Depths::default()
        };
        let s = d.summary();
        assert_eq!((s.ready, s.unrouted, s.unconsumed), (14, 9, 1));
        assert_eq!(
            s.largest
                .iter()
                .map(|q| (q.queue.as_str(), q.ready, q.unrouted))
                .collect::<Vec<_>>(),
            [
                ("am.dq.jobs.unrouted", 9, true),
                ("am.dq.jobs", 7, false),
                ("am.ls.b", 4, false),
                ("am.ls.a", 3, false),
            ]
        );
    }
}
