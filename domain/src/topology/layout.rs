//! Every name and argument of the data topology, and the objects the catalog wants.

use super::{Arg, Args, Binding, BrokerObjects, Exchange, ExchangeType, Queue, QueueRole, arg};
use crate::{
    catalog::{
        Agent, Catalog, DataQueue, DataQueueKind, DeadLetterPolicy, DeadLetterSettings, InputKind,
        LaunchSetting, MessageFilter, RetryPolicy, StreamMode,
    },
    policy::retry_ladder,
    wire::{Subscription, names::Names},
};
use std::{collections::BTreeSet, time::Duration};

/// Broker-side delivery limit of subscription queues. Our own attempt header drives retries
/// (each retry is a fresh message); this limit only stops a message that keeps killing nodes
/// (a crash counts as a delivery). RabbitMQ 3.10 has no default, so it is always explicit.
pub const SUBSCRIPTION_DELIVERY_LIMIT: i64 = 20;

pub use crate::policy::MAX_WAIT_LEVELS;

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn millis_arg(ms: u64) -> Arg {
    Arg::Int(i64::try_from(ms).unwrap_or(i64::MAX))
}

/// Every delay (in ms) a node may park a message of a launch setting with this policy for:
/// every step of its retry ladder up to `max_delay` and, with policy `park`, the cool-down.
/// The whole ladder, whatever `max_deliveries` says: answers "temporarily unavailable" use no
/// attempt and keep climbing it. Launches carry the same ladder
/// ([`Launch::retry_steps`](crate::wire::Launch::retry_steps)), so the nodes retry through
/// exactly these queues.
///
/// ```
/// use am_domain::{catalog::{DeadLetterSettings, RetryPolicy}, topology::wait_delays};
/// let delays = wait_delays(&RetryPolicy::default(), &DeadLetterSettings::default());
/// assert_eq!(delays.first(), Some(&1_000));
/// ```
pub fn wait_delays(retry: &RetryPolicy, dead_letter: &DeadLetterSettings) -> BTreeSet<u64> {
    let mut delays: BTreeSet<u64> = retry_ladder(retry).iter().map(|s| s.delay_ms).collect();
    if dead_letter.policy == DeadLetterPolicy::Park {
        delays.insert(millis(dead_letter.park_cooldown.0));
    }
    delays
}

/// Builds the broker objects of one installation (its [`Names`] prefix).
///
/// ```
/// use am_domain::{topology::Layout, wire::names::Names};
/// let layout = Layout::new(Names::new("am"));
/// let wait = layout.wait_queue(2_000);
/// assert_eq!(wait.name, "am.wait.2000ms");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    names: Names,
    expires: Option<Duration>,
}

impl Layout {
    pub fn new(names: Names) -> Self {
        Self {
            names,
            expires: None,
        }
    }

    /// Every queue expires after being unused this long: for tests and demos, so nothing piles
    /// up on a shared broker.
    pub fn ephemeral(mut self, expires: Duration) -> Self {
        self.expires = Some(expires);
        self
    }

    pub fn names(&self) -> &Names {
        &self.names
    }

    pub fn expires(&self) -> Option<Duration> {
        self.expires
    }

    fn queue(&self, name: String, role: QueueRole, mut args: Args) -> Queue {
        args.insert(arg::QUEUE_TYPE.into(), "quorum".into());
        if let Some(expires) = self.expires {
            args.insert(arg::EXPIRES.into(), millis_arg(millis(expires)));
        }
        Queue { name, role, args }
    }

    // Never auto-delete, even in ephemeral installations: the reconciler decides when an
    // exchange goes, and a broker deleting one with its last binding would leave the data
    // queue without its exchange.
    fn exchange(&self, name: String, kind: ExchangeType, args: Args) -> Exchange {
        Exchange { name, kind, args }
    }

    /// The dead-letter, reports and quarantine queues.
    pub fn system_queues(&self) -> Vec<Queue> {
        [
            self.names.dead_letter_queue(),
            self.names.reports_queue(),
            self.names.quarantine_queue(),
        ]
        .into_iter()
        .map(|name| self.queue(name, QueueRole::System, Args::new()))
        .collect()
    }

    pub fn unrouted_exchange(&self, data_queue: &str) -> Exchange {
        self.exchange(
            self.names.unrouted(data_queue),
            ExchangeType::Fanout,
            Args::new(),
        )
    }

    pub fn unrouted_queue(&self, data_queue: &str) -> Queue {
        self.queue(
            self.names.unrouted(data_queue),
            QueueRole::Unrouted {
                data_queue: data_queue.to_owned(),
            },
            Args::new(),
        )
    }

    /// Arguments of a queue nodes consume: failed deliveries beyond the broker's own limit go
    /// to the dead-letter queue.
    fn consumed_args(&self) -> Args {
        let mut args = Args::new();
        args.insert(
            arg::DELIVERY_LIMIT.into(),
            Arg::Int(SUBSCRIPTION_DELIVERY_LIMIT),
        );
        args.insert(arg::DEAD_LETTER_EXCHANGE.into(), "".into());
        args.insert(
            arg::DEAD_LETTER_ROUTING_KEY.into(),
            self.names.dead_letter_queue().into(),
        );
        args
    }

    pub fn subscription(&self, launch_setting: &str, data_queue: &str, hold_ms: u64) -> Queue {
        self.queue(
            self.names.subscription(launch_setting),
            QueueRole::Subscription {
                launch_setting: launch_setting.to_owned(),
                data_queue: data_queue.to_owned(),
                hold_ms,
            },
            self.consumed_args(),
        )
    }

    pub fn shared_queue(&self, data_queue: &str, hold_ms: u64) -> Queue {
        self.queue(
            self.names.shared_queue(data_queue),
            QueueRole::Shared {
                data_queue: data_queue.to_owned(),
                hold_ms,
            },
            self.consumed_args(),
        )
    }

    /// The queue a launch setting's nodes consume: its own subscription on a `topic` data
    /// queue, the data queue's shared queue on a `queue` one.
    pub fn consumed_queue(
        &self,
        launch_setting: &str,
        kind: DataQueueKind,
        data_queue: &str,
    ) -> String {
        match kind {
            DataQueueKind::Topic => self.names.subscription(launch_setting),
            DataQueueKind::Queue => self.names.shared_queue(data_queue),
        }
    }

    fn expiring_into(&self, ttl_ms: u64, target: Option<&str>) -> Args {
        let mut args = Args::new();
        args.insert(arg::MESSAGE_TTL.into(), millis_arg(ttl_ms));
        args.insert(arg::DEAD_LETTER_EXCHANGE.into(), "".into());
        if let Some(target) = target {
            args.insert(arg::DEAD_LETTER_ROUTING_KEY.into(), target.into());
        }
        args
    }

    pub fn delay_queue(&self, launch_setting: &str, data_queue: &str, delay: Duration) -> Queue {
        let ms = millis(delay);
        self.queue(
            self.names.delay_queue(launch_setting, delay),
            QueueRole::Delay {
                launch_setting: launch_setting.to_owned(),
                data_queue: data_queue.to_owned(),
            },
            self.expiring_into(ms, Some(&self.names.subscription(launch_setting))),
        )
    }

    /// The wait queue of one delay: no dead-letter routing key, so an expired message goes
    /// back under the routing key it was published with, the queue it came from.
    pub fn wait_queue(&self, delay_ms: u64) -> Queue {
        self.queue(
            self.names.wait(Duration::from_millis(delay_ms)),
            QueueRole::Wait,
            self.expiring_into(delay_ms, None),
        )
    }

    /// The exchange nodes publish a message to for `delay_ms` (fanout into [`Layout::wait_queue`]).
    pub fn wait_exchange(&self, delay_ms: u64) -> Exchange {
        self.exchange(
            self.names.wait(Duration::from_millis(delay_ms)),
            ExchangeType::Fanout,
            Args::new(),
        )
    }

    /// A binding that takes the messages whose headers all equal the filter's (all messages
    /// for an empty filter).
    pub fn filter_binding(&self, queue: &str, exchange: &str, filter: &MessageFilter) -> Binding {
        let mut args = Args::new();
        args.insert(arg::MATCH.into(), "all".into());
        for (k, v) in &filter.headers {
            args.insert(k.clone(), v.as_str().into());
        }
        Binding {
            queue: queue.to_owned(),
            exchange: exchange.to_owned(),
            args,
        }
    }

    fn plain_binding(queue: &str, exchange: &str) -> Binding {
        Binding {
            queue: queue.to_owned(),
            exchange: exchange.to_owned(),
            args: Args::new(),
        }
    }

    /// The objects one launch setting needs: its data queue's exchanges, the queue it
    /// consumes (bound with its filter, or through its delay queue) and the wait queues of its
    /// retry delays. The manager declares these for every launch setting of the catalog
    /// ([`Layout::desired`]); tests of the client library declare them for one launch.
    pub fn launch_objects(
        &self,
        launch_setting: &str,
        subscription: &Subscription,
        retry: &RetryPolicy,
        dead_letter: &DeadLetterSettings,
    ) -> BrokerObjects {
        let mut out = BrokerObjects::default();
        let dq = &subscription.data_queue;
        self.data_queue_objects(&mut out, dq, &subscription.address);
        let delays = wait_delays(retry, dead_letter);
        let hold_ms = delays.last().copied().unwrap_or(0);
        for ms in delays {
            let queue = self.wait_queue(ms);
            out.bind(Self::plain_binding(&queue.name, &queue.name));
            out.add_queue(queue);
            out.add_exchange(self.wait_exchange(ms));
        }
        match subscription.kind {
            DataQueueKind::Topic => {
                let consumed = self.subscription(launch_setting, dq, hold_ms);
                let bound = match subscription.delay.filter(|d| !d.is_zero()) {
                    Some(delay) => {
                        let q = self.delay_queue(launch_setting, dq, delay.0);
                        let name = q.name.clone();
                        out.add_queue(q);
                        name
                    }
                    None => consumed.name.clone(),
                };
                out.add_queue(consumed);
                out.bind(self.filter_binding(&bound, &subscription.address, &subscription.filter));
            }
            DataQueueKind::Queue => {
                let consumed = self.shared_queue(dq, hold_ms);
                out.bind(self.filter_binding(
                    &consumed.name,
                    &subscription.address,
                    &MessageFilter::default(),
                ));
                out.add_queue(consumed);
            }
        }
        out
    }

    fn data_queue_objects(&self, out: &mut BrokerObjects, data_queue: &str, address: &str) {
        let unrouted = self.names.unrouted(data_queue);
        out.add_exchange(self.unrouted_exchange(data_queue));
        out.add_queue(self.unrouted_queue(data_queue));
        out.bind(Self::plain_binding(&unrouted, &unrouted));
        let mut args = Args::new();
        args.insert(arg::ALTERNATE_EXCHANGE.into(), unrouted.into());
        out.add_exchange(self.exchange(address.to_owned(), ExchangeType::Headers, args));
    }

    /// Everything the catalog wants on the broker. Deterministic: every replica computes the
    /// same objects from the same catalog.
    pub fn desired(&self, catalog: &Catalog) -> BrokerObjects {
        let mut out = BrokerObjects::default();
        for q in self.system_queues() {
            out.add_queue(q);
        }
        for dq in &catalog.data_queues {
            self.data_queue_objects(&mut out, &dq.id, dq.effective_address());
        }
        for ls in &catalog.launch_settings {
            let Some((agent, dq)) = consumed_data_queue(catalog, ls) else {
                continue;
            };
            let Some(subscription) = Subscription::of(ls, agent, dq) else {
                continue;
            };
            let objects = self.launch_objects(&ls.id, &subscription, &ls.retry, &ls.dead_letter);
            out.exchanges.extend(objects.exchanges);
            out.bindings.extend(objects.bindings);
            for (name, queue) in objects.queues {
                // A shared queue is held as long as the longest hold of its launch settings.
                let held = out.queues.get(&name).map_or(0, Queue::hold_ms);
                let mut queue = queue;
                if let QueueRole::Shared { hold_ms, .. } = &mut queue.role {
                    *hold_ms = (*hold_ms).max(held);
                }
                out.queues.insert(name, queue);
            }
        }
        out
    }
}

impl Layout {
    /// What nodes of protocol version 1 declared for themselves and this layout no longer
    /// has: each Delayed launch setting's delay queue without the delay in its name, bound with
    /// its filter. The reconciler's first pass unbinds and drains them.
    pub fn legacy(&self, catalog: &Catalog) -> BrokerObjects {
        let mut out = BrokerObjects::default();
        for ls in &catalog.launch_settings {
            let Some((_, dq)) = consumed_data_queue(catalog, ls) else {
                continue;
            };
            let Some(delay) = dq.delay.filter(|d| !d.is_zero()) else {
                continue;
            };
            if dq.kind != DataQueueKind::Topic || ls.stream_mode != Some(StreamMode::Delayed) {
                continue;
            }
            let mut queue = self.delay_queue(&ls.id, &dq.id, delay.0);
            queue.name = self.names.legacy_delay_queue(&ls.id);
            let filter = ls.filter.clone().unwrap_or_default();
            out.bind(self.filter_binding(&queue.name, dq.effective_address(), &filter));
            out.add_queue(queue);
        }
        out
    }
}

/// The agent of a launch setting and the data queue it consumes, if the agent takes messages
/// from one that is in the catalog.
pub fn consumed_data_queue<'c>(
    catalog: &'c Catalog,
    ls: &LaunchSetting,
) -> Option<(&'c Agent, &'c DataQueue)> {
    let agent = catalog.agent(&ls.application, &ls.agent)?;
    if agent.input != InputKind::Messages {
        return None;
    }
    Some((agent, catalog.data_queue(agent.data_queue.as_deref()?)?))
}
