//! What a dispatch needs to know, loaded once per batch: launch settings with their agent, data
//! queue and pool hosts, and the live nodes of their applications with their current load.

use super::CHUNK;
use crate::status;
use crate::{
    catalog::rows,
    entity::{
        activation_hosts, agents, applications, data_queues, launch_settings, nodes, pool_hosts,
    },
    error::ServiceResult,
};
use am_domain::{
    catalog::{Agent, Concurrency, DataQueue, InputKind, LaunchKind, LaunchSetting},
    params::effective_values,
    policy::retry_ladder,
    topology::Layout,
    wire::{ActivationId, Launch, Subscription, names::Names},
};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use uuid::Uuid;

/// One launch setting resolved down to where it may run.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub ls: LaunchSetting,
    pub agent: Agent,
    pub data_queue: Option<DataQueue>,
    /// Hosts of the launch setting's pool (its own or its application's default).
    pub hosts: BTreeSet<String>,
    /// Hosts its `MANY` breaker quarantined: never dispatched to (crate::quarantine).
    pub quarantined: BTreeSet<String>,
}

impl Target {
    /// Whether a launch of this launch setting may go to `host`: in its pool, not quarantined.
    pub fn may_run_on(&self, host: &str) -> bool {
        self.hosts.contains(host) && !self.quarantined.contains(host)
    }

    pub fn concurrency(&self) -> Concurrency {
        self.agent.concurrency
    }

    /// The queue a dispatch of this launch setting consumes (for a messages agent with a data
    /// queue): what a running stream is compared with when the catalog changes.
    pub fn consumed_queue(&self, names: &Names) -> Option<String> {
        let subscription = Subscription::of(&self.ls, &self.agent, self.data_queue.as_ref()?)?;
        Some(Layout::new(names.clone()).consumed_queue(
            &self.ls.id,
            subscription.kind,
            &subscription.data_queue,
        ))
    }

    /// The launch command for one dispatch.
    pub fn launch(&self, activation: Uuid, fencing_token: i64) -> Launch {
        let messages = self.agent.input == InputKind::Messages;
        let subscription = self
            .data_queue
            .as_ref()
            .and_then(|dq| Subscription::of(&self.ls, &self.agent, dq));
        Launch {
            activation_id: ActivationId(activation.to_string()),
            launch_setting: self.ls.id.clone(),
            agent: self.agent.id.clone(),
            kind: self.ls.kind,
            parameters: effective_values(&self.agent.parameters, &self.ls.parameters),
            fencing_token: u64::try_from(fencing_token).unwrap_or(0),
            overlap: self.agent.overlap,
            retry: self.ls.retry.clone(),
            retry_steps: retry_ladder(&self.ls.retry),
            unavailable_for: self.ls.unavailable_for,
            dead_letter: self.ls.dead_letter.for_nodes(),
            failure_threshold: self.ls.failure_threshold,
            subscription,
            idle_timeout: if messages && self.ls.kind == LaunchKind::Scheduled {
                self.ls.idle_timeout
            } else {
                None
            },
            max_run_time: self.ls.recovery.max_run_time,
        }
    }
}

/// A live node and how busy it is.
#[derive(Debug, Clone)]
pub(crate) struct NodeLoad {
    pub host: String,
    pub capacity: i64,
    pub load: f64,
    /// Dispatched, accepted or running activations on it (including this batch's).
    pub inflight: i64,
}

impl NodeLoad {
    fn busy(&self) -> f64 {
        self.inflight as f64 / self.capacity.max(1) as f64
    }
}

#[derive(Debug, Default)]
pub(crate) struct Resolver {
    targets: HashMap<String, Target>,
    /// Live nodes by application.
    nodes: HashMap<String, Vec<NodeLoad>>,
}

impl Resolver {
    /// Loads the launch settings named (missing ones are simply absent) and the live nodes of
    /// their applications.
    pub async fn load(
        db: &impl ConnectionTrait,
        ls_ids: &[String],
        now: DateTime<Utc>,
        node_timeout: chrono::Duration,
    ) -> ServiceResult<Self> {
        let mut ids: Vec<String> = ls_ids.to_vec();
        ids.sort();
        ids.dedup();
        let mut settings = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(CHUNK) {
            let rows = launch_settings::Entity::find()
                .filter(launch_settings::Column::Id.is_in(chunk.iter().cloned()))
                .all(db)
                .await?;
            for row in rows {
                settings.push(rows::launch_setting(row)?);
            }
        }
        let apps: BTreeSet<String> = settings.iter().map(|l| l.application.clone()).collect();
        let mut agents_by_key = HashMap::new();
        let mut default_pool = HashMap::new();
        for chunk in apps.iter().cloned().collect::<Vec<_>>().chunks(CHUNK) {
            for a in agents::Entity::find()
                .filter(agents::Column::ApplicationId.is_in(chunk.iter().cloned()))
                .all(db)
                .await?
            {
                let a = rows::agent(a)?;
                agents_by_key.insert((a.application.clone(), a.id.clone()), a);
            }
            for app in applications::Entity::find()
                .filter(applications::Column::Id.is_in(chunk.iter().cloned()))
                .all(db)
                .await?
            {
                default_pool.insert(app.id, app.default_pool_id);
            }
        }
        let queues: HashMap<String, DataQueue> = data_queues::Entity::find()
            .all(db)
            .await?
            .into_iter()
            .map(|q| rows::data_queue(q).map(|q| (q.id.clone(), q)))
            .collect::<ServiceResult<_>>()?;
        let mut pool_of: HashMap<String, String> = HashMap::new();
        for l in &settings {
            let pool = l
                .pool
                .clone()
                .or_else(|| default_pool.get(&l.application).cloned());
            if let Some(pool) = pool {
                pool_of.insert(l.id.clone(), pool);
            }
        }
        let pools: BTreeSet<String> = pool_of.values().cloned().collect();
        let mut hosts_of_pool: HashMap<String, BTreeSet<String>> = HashMap::new();
        for chunk in pools.into_iter().collect::<Vec<_>>().chunks(CHUNK) {
            for ph in pool_hosts::Entity::find()
                .filter(pool_hosts::Column::PoolId.is_in(chunk.iter().cloned()))
                .all(db)
                .await?
            {
                hosts_of_pool
                    .entry(ph.pool_id)
                    .or_default()
                    .insert(ph.host_name);
            }
        }
        let mut quarantined = crate::quarantine::hosts_of(db, &ids).await?;
        let mut targets = HashMap::with_capacity(settings.len());
        for ls in settings {
            let Some(agent) = agents_by_key.get(&(ls.application.clone(), ls.agent.clone())) else {
                continue;
            };
            let hosts = pool_of
                .get(&ls.id)
                .and_then(|p| hosts_of_pool.get(p))
                .cloned()
                .unwrap_or_default();
            let data_queue = agent
                .data_queue
                .as_ref()
                .and_then(|q| queues.get(q))
                .cloned();
            targets.insert(
                ls.id.clone(),
                Target {
                    agent: agent.clone(),
                    data_queue,
                    hosts,
                    quarantined: quarantined.remove(&ls.id).unwrap_or_default(),
                    ls,
                },
            );
        }
        let nodes = live_nodes(db, &apps, now, node_timeout).await?;
        Ok(Self { targets, nodes })
    }

    pub fn target(&self, ls: &str) -> Option<&Target> {
        self.targets.get(ls)
    }

    /// Live nodes of the launch setting's application on its pool's hosts, but for the ones
    /// its breaker quarantined.
    pub fn eligible(&self, target: &Target) -> Vec<&NodeLoad> {
        self.nodes
            .get(&target.ls.application)
            .map(|ns| ns.iter().filter(|n| target.may_run_on(&n.host)).collect())
            .unwrap_or_default()
    }

    /// Hosts to dispatch to: `ANY` → the least loaded eligible node (the pinned one when it is
    /// eligible, never one of `exclude` unless it is the only one); `MANY` → every eligible
    /// node. Counts the choice into the nodes' load so a batch spreads out.
    pub fn choose(
        &mut self,
        target: &Target,
        pinned: Option<&str>,
        exclude: &[String],
    ) -> Vec<String> {
        let Some(nodes) = self.nodes.get_mut(&target.ls.application) else {
            return Vec::new();
        };
        let mut eligible: Vec<&mut NodeLoad> = nodes
            .iter_mut()
            .filter(|n| target.may_run_on(&n.host))
            .collect();
        match target.concurrency() {
            Concurrency::Many => eligible
                .into_iter()
                .map(|n| {
                    n.inflight += 1;
                    n.host.clone()
                })
                .collect(),
            Concurrency::Any => {
                if let Some(pin) = pinned
                    && let Some(n) = eligible.iter_mut().find(|n| n.host == pin)
                {
                    n.inflight += 1;
                    return vec![n.host.clone()];
                }
                if eligible.len() > 1 {
                    eligible.retain(|n| !exclude.contains(&n.host));
                }
                let best = eligible.into_iter().min_by(|a, b| {
                    a.busy()
                        .total_cmp(&b.busy())
                        .then(a.load.total_cmp(&b.load))
                        .then(a.host.cmp(&b.host))
                });
                best.map(|n| {
                    n.inflight += 1;
                    vec![n.host.clone()]
                })
                .unwrap_or_default()
            }
        }
    }
}

/// What a resolver's dispatch choices rest on besides the catalog: which nodes of its
/// applications are live and which hosts its launch settings' breakers quarantined. A batch of
/// fires planned ahead of its time is written as planned only while this is unchanged
/// (`super::ahead`); the nodes' loads may move meanwhile, which only shifts the spread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Footing {
    live: BTreeMap<String, BTreeSet<String>>,
    quarantined: BTreeMap<String, BTreeSet<String>>,
}

impl Resolver {
    pub fn footing(&self) -> Footing {
        let live = self
            .targets
            .values()
            .map(|t| {
                let app = t.ls.application.clone();
                let hosts = self
                    .nodes
                    .get(&app)
                    .map(|ns| ns.iter().map(|n| n.host.clone()).collect())
                    .unwrap_or_default();
                (app, hosts)
            })
            .collect();
        let quarantined = self
            .targets
            .iter()
            .map(|(id, t)| (id.clone(), t.quarantined.clone()))
            .collect();
        Footing { live, quarantined }
    }
}

impl Footing {
    /// The same footing read again from the database, for the same applications and launch
    /// settings.
    pub async fn reread(
        &self,
        db: &impl ConnectionTrait,
        now: DateTime<Utc>,
        node_timeout: chrono::Duration,
    ) -> ServiceResult<Self> {
        let mut live: BTreeMap<String, BTreeSet<String>> = self
            .live
            .keys()
            .map(|app| (app.clone(), BTreeSet::new()))
            .collect();
        let apps: Vec<String> = self.live.keys().cloned().collect();
        for chunk in apps.chunks(CHUNK) {
            let rows: Vec<(String, String)> = nodes::Entity::find()
                .select_only()
                .column(nodes::Column::ApplicationId)
                .column(nodes::Column::Host)
                .filter(nodes::Column::ApplicationId.is_in(chunk.iter().cloned()))
                .filter(crate::registry::live_condition(now, node_timeout))
                .into_tuple()
                .all(db)
                .await?;
            for (app, host) in rows {
                live.entry(app).or_default().insert(host);
            }
        }
        let ids: Vec<String> = self.quarantined.keys().cloned().collect();
        let mut found = crate::quarantine::hosts_of(db, &ids).await?;
        let quarantined = ids
            .into_iter()
            .map(|id| {
                let hosts = found.remove(&id).unwrap_or_default();
                (id, hosts)
            })
            .collect();
        Ok(Self { live, quarantined })
    }
}

/// Live nodes of the applications with the number of activations in flight on each.
async fn live_nodes(
    db: &impl ConnectionTrait,
    apps: &BTreeSet<String>,
    now: DateTime<Utc>,
    node_timeout: chrono::Duration,
) -> ServiceResult<HashMap<String, Vec<NodeLoad>>> {
    let mut out: HashMap<String, Vec<NodeLoad>> = HashMap::new();
    let apps: Vec<String> = apps.iter().cloned().collect();
    for chunk in apps.chunks(CHUNK) {
        let live = nodes::Entity::find()
            .filter(nodes::Column::ApplicationId.is_in(chunk.iter().cloned()))
            .filter(crate::registry::live_condition(now, node_timeout))
            .all(db)
            .await?;
        if live.is_empty() {
            continue;
        }
        let inflight: Vec<(String, String, i64)> = activation_hosts::Entity::find()
            .select_only()
            .column(activation_hosts::Column::ApplicationId)
            .column(activation_hosts::Column::Host)
            .column_as(activation_hosts::Column::Id.count(), "n")
            .filter(activation_hosts::Column::ApplicationId.is_in(chunk.iter().cloned()))
            .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
            .group_by(activation_hosts::Column::ApplicationId)
            .group_by(activation_hosts::Column::Host)
            .into_tuple()
            .all(db)
            .await?;
        let inflight: HashMap<(String, String), i64> =
            inflight.into_iter().map(|(a, h, n)| ((a, h), n)).collect();
        for n in live {
            let busy = inflight
                .get(&(n.application_id.clone(), n.host.clone()))
                .copied()
                .unwrap_or(0);
            out.entry(n.application_id).or_default().push(NodeLoad {
                host: n.host,
                capacity: i64::from(n.capacity),
                load: n.load,
                inflight: busy,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use am_domain::catalog::{InputKind, OverlapPolicy};

    fn target(concurrency: Concurrency) -> Target {
        let ls: LaunchSetting = serde_json::from_value(serde_json::json!({
            "id": "a.x.1", "application": "a", "agent": "x", "kind": "scheduled"
        }))
        .expect("launch setting");
        Target {
            ls,
            agent: Agent {
                application: "a".into(),
                id: "x".into(),
                title: String::new(),
                input: InputKind::Standalone,
                data_queue: None,
                concurrency,
                overlap: OverlapPolicy::Allow,
                parameters: vec![],
            },
            data_queue: None,
            hosts: ["h1", "h2", "h3"].into_iter().map(String::from).collect(),
            quarantined: BTreeSet::new(),
        }
    }

    fn resolver(nodes: &[(&str, i64, i64, f64)]) -> Resolver {
        let mut r = Resolver::default();
        r.nodes.insert(
            "a".into(),
            nodes
                .iter()
                .map(|&(h, inflight, capacity, load)| NodeLoad {
                    host: h.into(),
                    capacity,
                    load,
                    inflight,
                })
                .collect(),
        );
        r
    }

    #[test]
    fn any_picks_the_least_busy_relative_to_capacity_then_load() {
        let t = target(Concurrency::Any);
        let mut r = resolver(&[("h1", 2, 4, 0.1), ("h2", 1, 4, 0.9), ("h3", 2, 8, 0.5)]);
        // h2 and h3 are both at 25 %: the lower load wins.
        assert_eq!(r.choose(&t, None, &[]), ["h3"]);
        // h3 now runs 3/8 = 37.5 %, h2 25 %.
        assert_eq!(r.choose(&t, None, &[]), ["h2"]);
    }

    #[test]
    fn any_spreads_a_batch_and_skips_hosts_outside_the_pool() {
        let mut t = target(Concurrency::Any);
        t.hosts.remove("h3");
        let mut r = resolver(&[("h1", 0, 2, 0.0), ("h2", 0, 2, 0.0), ("h3", 0, 100, 0.0)]);
        let picks: Vec<String> = (0..4).flat_map(|_| r.choose(&t, None, &[])).collect();
        assert_eq!(picks, ["h1", "h2", "h1", "h2"]);
    }

    #[test]
    fn pinned_and_excluded_hosts() {
        let t = target(Concurrency::Any);
        let mut r = resolver(&[("h1", 0, 2, 0.0), ("h2", 5, 2, 0.0)]);
        assert_eq!(r.choose(&t, Some("h2"), &[]), ["h2"]);
        // A pin to a node that is gone falls back to the least loaded one.
        assert_eq!(r.choose(&t, Some("gone"), &[]), ["h1"]);
        assert_eq!(r.choose(&t, None, &["h1".into()]), ["h2"]);
        // Excluding the only node still uses it: better a retry there than no run.
        let mut single = resolver(&[("h1", 0, 2, 0.0)]);
        assert_eq!(single.choose(&t, None, &["h1".into()]), ["h1"]);
    }

    #[test]
    fn many_takes_every_eligible_node_and_none_means_waiting() {
        let t = target(Concurrency::Many);
        let mut r = resolver(&[("h1", 0, 2, 0.0), ("h2", 0, 2, 0.0), ("other", 0, 2, 0.0)]);
        assert_eq!(r.choose(&t, None, &[]), ["h1", "h2"]);
        assert!(Resolver::default().choose(&t, None, &[]).is_empty());
    }

    #[test]
    fn quarantined_hosts_get_no_launch() {
        let mut t = target(Concurrency::Many);
        t.quarantined.insert("h2".into());
        let mut r = resolver(&[("h1", 0, 2, 0.0), ("h2", 0, 2, 0.0), ("h3", 0, 2, 0.0)]);
        let eligible: Vec<&str> = r.eligible(&t).iter().map(|n| n.host.as_str()).collect();
        assert_eq!(eligible, ["h1", "h3"]);
        assert_eq!(r.choose(&t, None, &[]), ["h1", "h3"]);
        let mut any = target(Concurrency::Any);
        any.quarantined.insert("h1".into());
        let mut r = resolver(&[("h1", 0, 9, 0.0), ("h2", 5, 9, 0.0)]);
        assert_eq!(
            r.choose(&any, Some("h1"), &[]),
            ["h2"],
            "not even when pinned"
        );
    }
}
