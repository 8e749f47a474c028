//! The catalog entities as operators and the HTTP API see them, and the whole-catalog document
//! of `GET/PUT /api/v1/catalog`.
//!
//! These are plain data; the rules they must satisfy live in [`crate::validate`].

use crate::{HumanDuration, params::ParamSpec, words::words};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod channels;
mod policies;
mod secrets;
pub use crate::classifier::{Classifier, ClassifierValue};
pub use channels::Channels;
pub use policies::*;
pub use secrets::{keep_secrets, mask_webhook_urls};

/// Version of the catalog document format written by [`Catalog`].
pub const CATALOG_FORMAT_VERSION: u32 = 1;

/// The whole catalog in one document. Import validates all of it before anything is written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    #[serde(default = "format_version")]
    pub version: u32,
    #[serde(default)]
    pub applications: Vec<Application>,
    #[serde(default)]
    pub pools: Vec<Pool>,
    #[serde(default)]
    pub data_queues: Vec<DataQueue>,
    #[serde(default)]
    pub classifiers: Vec<Classifier>,
    #[serde(default)]
    pub agents: Vec<Agent>,
    #[serde(default)]
    pub launch_settings: Vec<LaunchSetting>,
    #[serde(default)]
    pub schedule_groups: Vec<ScheduleGroup>,
}

fn format_version() -> u32 {
    CATALOG_FORMAT_VERSION
}

impl Catalog {
    pub fn new() -> Self {
        Self {
            version: CATALOG_FORMAT_VERSION,
            ..Self::default()
        }
    }

    /// Replaces the control characters of titles, labels and descriptions with spaces
    /// (crate::text). For catalogs stored before those characters were refused: a tab pasted
    /// into a title then would otherwise make every later write of the catalog fail on it,
    /// and its export fail to import.
    pub fn clean_display_texts(&mut self) {
        use crate::text::{Lines, clean_in_place};
        let titles = self
            .applications
            .iter_mut()
            .map(|a| &mut a.title)
            .chain(self.pools.iter_mut().map(|p| &mut p.title))
            .chain(self.data_queues.iter_mut().map(|q| &mut q.title))
            .chain(self.launch_settings.iter_mut().map(|l| &mut l.title))
            .chain(self.schedule_groups.iter_mut().map(|g| &mut g.title));
        for t in titles {
            clean_in_place(t, Lines::One);
        }
        for c in &mut self.classifiers {
            clean_in_place(&mut c.title, Lines::One);
            for v in &mut c.values {
                clean_in_place(&mut v.label, Lines::One);
            }
        }
        for a in &mut self.agents {
            clean_in_place(&mut a.title, Lines::One);
            for p in &mut a.parameters {
                clean_in_place(&mut p.title, Lines::One);
                clean_in_place(&mut p.description, Lines::Many);
            }
        }
    }

    /// Sorts every list by its key, so that two equal catalogs serialize identically
    /// whatever order they were written in. Schedule group members keep their order: it is data.
    pub fn normalize(&mut self) {
        self.applications.sort_by(|a, b| a.id.cmp(&b.id));
        self.pools.sort_by(|a, b| a.id.cmp(&b.id));
        for p in &mut self.pools {
            p.hosts.sort();
        }
        self.data_queues.sort_by(|a, b| a.id.cmp(&b.id));
        self.classifiers
            .sort_by(|a, b| (&a.application, &a.name).cmp(&(&b.application, &b.name)));
        self.agents
            .sort_by(|a, b| (&a.application, &a.id).cmp(&(&b.application, &b.id)));
        self.launch_settings.sort_by(|a, b| a.id.cmp(&b.id));
        self.schedule_groups.sort_by(|a, b| a.id.cmp(&b.id));
    }

    // Lookups search the lists `normalize` sorted in O(log n); a list still in document order
    // (an import being checked) is searched from the start when that misses. Validating a
    // catalog at its limits looks up tens of thousands of references.

    pub fn application(&self, id: &str) -> Option<&Application> {
        find_sorted(&self.applications, id, |a| a.id.as_str())
    }

    pub fn pool(&self, id: &str) -> Option<&Pool> {
        find_sorted(&self.pools, id, |p| p.id.as_str())
    }

    pub fn data_queue(&self, id: &str) -> Option<&DataQueue> {
        find_sorted(&self.data_queues, id, |q| q.id.as_str())
    }

    pub fn agent(&self, application: &str, id: &str) -> Option<&Agent> {
        find_sorted(&self.agents, (application, id), |a| {
            (a.application.as_str(), a.id.as_str())
        })
    }

    pub fn classifier(&self, application: &str, name: &str) -> Option<&Classifier> {
        find_sorted(&self.classifiers, (application, name), |c| {
            (c.application.as_str(), c.name.as_str())
        })
    }

    pub fn launch_setting(&self, id: &str) -> Option<&LaunchSetting> {
        find_sorted(&self.launch_settings, id, |l| l.id.as_str())
    }

    pub fn schedule_group(&self, id: &str) -> Option<&ScheduleGroup> {
        find_sorted(&self.schedule_groups, id, |g| g.id.as_str())
    }
}

/// The entry of `list` whose key is `key`: a binary search (right when the list is sorted by
/// the key), then a scan (for a list that is not).
fn find_sorted<'a, T, K: Ord>(list: &'a [T], key: K, key_of: impl Fn(&'a T) -> K) -> Option<&'a T> {
    match list.binary_search_by(|e| key_of(e).cmp(&key)) {
        Ok(i) => list.get(i),
        Err(_) => list.iter().find(|e| key_of(e) == key),
    }
}

/// A named deployable; the namespace of its agents' ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Application {
    pub id: String,
    #[serde(default)]
    pub title: String,
    /// Pool used by launch settings that name none.
    pub default_pool: String,
    /// Get every notification of the application (docs/notifications.md), unless a launch
    /// setting or a group names its own.
    #[serde(flatten)]
    pub channels: Channels,
}

/// A named list of host names. A host may be in several pools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Pool {
    pub id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub hosts: Vec<String>,
}

words! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum DataQueueKind {
        /// Point to point: launch settings of one agent compete for messages.
        Queue = "queue",
        /// Every launch setting gets its own copy of each message.
        Topic = "topic",
    }
}

/// Where producers publish messages for agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DataQueue {
    pub id: String,
    #[serde(default)]
    pub title: String,
    pub kind: DataQueueKind,
    /// Broker exchange producers publish to; the data queue's id when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// How long messages wait before they reach Delayed stream launch settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<HumanDuration>,
}

impl DataQueue {
    /// The exchange producers publish to.
    pub fn effective_address(&self) -> &str {
        Self::effective_address_of(&self.id, self.address.as_deref())
    }

    /// The exchange of the data queue `id` with `address`: the address, or else the id.
    pub fn effective_address_of<'a>(id: &'a str, address: Option<&'a str>) -> &'a str {
        address.unwrap_or(id)
    }
}

words! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum InputKind {
        /// Runs on its own; only schedules start it.
        Standalone = "standalone",
        /// Consumes messages of a data queue.
        Messages = "messages",
    }
}

words! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum Concurrency {
        /// One node of the pool (the least loaded one).
        Any = "ANY",
        /// Every node of the pool.
        Many = "MANY",
    }
}

words! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum OverlapPolicy {
        /// Run beside an instance that is still running.
        Allow = "allow",
        /// Refuse the new run and report it skipped.
        Skip = "skip",
        /// Cancel the running instance, wait for it, then start.
        Interrupt = "interrupt",
    }
}

/// Code in an application. Nodes publish what the code owns (title, input kind, schema);
/// operators own concurrency, overlap policy and data queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Agent {
    pub application: String,
    pub id: String,
    #[serde(default)]
    pub title: String,
    pub input: InputKind,
    /// Required for `messages` agents, absent for `standalone` ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_queue: Option<String>,
    pub concurrency: Concurrency,
    pub overlap: OverlapPolicy,
    #[serde(default)]
    pub parameters: Vec<ParamSpec>,
}

impl Agent {
    /// A messages agent no operator has given a data queue yet (a node published it before
    /// its data queue was in the catalog): it can have no launch setting until one is picked.
    pub fn needs_data_queue(&self) -> bool {
        self.input == InputKind::Messages && self.data_queue.is_none()
    }
}

words! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum LaunchKind {
        /// Runs continuously while enabled (messages agents only).
        Stream = "stream",
        /// Runs when a schedule group containing it fires.
        Scheduled = "scheduled",
    }
}

words! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum StreamMode {
        /// Messages reach the launch setting as soon as they are published.
        #[default]
        Asap = "asap",
        /// Messages reach it only after the data queue's delay.
        Delayed = "delayed",
    }
}

/// Header-based filter of a stream launch setting: every listed header must equal the value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MessageFilter {
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

impl MessageFilter {
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
    }
}

/// Default breaker threshold `M` of a launch setting.
pub const DEFAULT_FAILURE_THRESHOLD: u32 = 10;

fn default_failure_threshold() -> u32 {
    DEFAULT_FAILURE_THRESHOLD
}

fn default_true() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One way to run an agent, with its own parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LaunchSetting {
    /// Names the broker subscription, e.g. `billing.invoice-export.1`.
    pub id: String,
    #[serde(default)]
    pub title: String,
    pub application: String,
    pub agent: String,
    pub kind: LaunchKind,
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub enabled: bool,
    /// The application's default pool when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// Values of the agent's parameters, by parameter name.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// Stream only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_mode: Option<StreamMode>,
    /// Stream only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<MessageFilter>,
    /// Breaker threshold `M`; `N = max(1, M / 3)`.
    #[serde(default = "default_failure_threshold")]
    pub failure_threshold: u32,
    #[serde(default)]
    pub retry: RetryPolicy,
    /// How long a message may keep answering "temporarily unavailable" (counted from its first
    /// such answer) before it is dead-lettered. Such answers use no delivery attempt and do not
    /// feed the breaker; the message comes back after the retry policy's growing delays.
    #[serde(default = "default_unavailable_for")]
    pub unavailable_for: HumanDuration,
    #[serde(default)]
    pub dead_letter: DeadLetterSettings,
    #[serde(default)]
    pub recovery: RecoveryPolicy,
    /// A scheduled launch setting of a messages agent ends when its subscription stays empty
    /// this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<HumanDuration>,
    /// Replace the application's for what is told about this launch setting; with no webhook
    /// of its own, its application's webhook and events apply.
    #[serde(flatten)]
    pub channels: Channels,
    /// Tell the channels every failed activation of this launch setting
    /// (`activation_failed`), not only breaker trips: for a job whose every failure matters.
    #[serde(default, skip_serializing_if = "is_false")]
    pub notify_on_failure: bool,
}

words! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum MisfirePolicy {
        /// A fire missed while no manager ran happens once, at once.
        #[default]
        FireOnceNow = "fire-once-now",
        /// A missed fire is dropped.
        Skip = "skip",
    }
}

/// A cron schedule and the launch settings it runs one after another, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ScheduleGroup {
    pub id: String,
    #[serde(default)]
    pub title: String,
    pub application: String,
    /// Quartz-like cron: optional seconds, minutes, hours, day of month, month, day of week.
    pub cron: String,
    /// IANA time zone, e.g. `Europe/Paris`.
    #[serde(default = "default_time_zone")]
    pub time_zone: String,
    #[serde(default)]
    pub misfire: MisfirePolicy,
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub enabled: bool,
    /// Run the remaining members after one failed; by default the group stops there, fails
    /// and the remaining members are skipped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub continue_on_failure: bool,
    /// Dead man's switch: when no run of the group succeeded for this long (e.g. `26h` for a
    /// nightly group), `schedule_missed` is told, once until a run succeeds again. It catches
    /// what no failure report can: a group nobody fires, a pool with no live node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_success_within: Option<HumanDuration>,
    /// Replace the application's for what is told about the group itself (disabled, schedule
    /// missed); its members' notifications follow the members.
    #[serde(flatten)]
    pub channels: Channels,
    /// Launch setting ids, in run order.
    #[serde(default)]
    pub members: Vec<String>,
}

fn default_time_zone() -> String {
    "UTC".to_owned()
}
