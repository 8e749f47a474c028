//! Rules of launch settings and schedule groups, which tie the other entities together.

use super::{FirstSeen, check_channels, check_id, concurrency_name, quoted_list};
use crate::{
    ValidationErrors,
    catalog::{
        Agent, Catalog, DataQueueKind, DeadLetterPolicy, InputKind, LaunchKind, LaunchSetting,
        StreamMode,
    },
    params::validate_values,
    schedule::{parse_cron, parse_time_zone},
    topology::{MAX_WAIT_LEVELS, wait_delays},
};
use std::collections::HashSet;

pub(super) fn launch_settings(catalog: &Catalog, errors: &mut ValidationErrors) {
    let grouped: HashSet<&str> = catalog
        .schedule_groups
        .iter()
        .flat_map(|g| g.members.iter().map(String::as_str))
        .collect();
    let mut seen = FirstSeen::new();
    for (i, ls) in catalog.launch_settings.iter().enumerate() {
        let at = format!("launch_settings[{i}]");
        check_id(errors, format!("{at}.id"), &ls.id);
        if let Some(first) = seen.check(ls.id.as_str(), i) {
            errors.push(
                format!("{at}.id"),
                format!(
                    "launch setting '{}' is already defined at launch_settings[{first}]",
                    ls.id
                ),
            );
        }
        let agent = if catalog.application(&ls.application).is_none() {
            errors.push(
                format!("{at}.application"),
                format!("application '{}' does not exist", ls.application),
            );
            None
        } else {
            let agent = catalog.agent(&ls.application, &ls.agent);
            if agent.is_none() {
                errors.push(
                    format!("{at}.agent"),
                    format!("agent '{}/{}' does not exist", ls.application, ls.agent),
                );
            }
            agent
        };
        if let Some(pool) = ls.pool.as_deref().filter(|p| catalog.pool(p).is_none()) {
            errors.push(
                format!("{at}.pool"),
                format!("pool '{pool}' does not exist"),
            );
        }
        kind_rules(catalog, ls, agent, &at, errors);
        if ls.kind == LaunchKind::Scheduled && !grouped.contains(ls.id.as_str()) {
            errors.push(
                at.clone(),
                format!(
                    "scheduled launch setting '{}' is in no schedule group; add it to one (in \
                     the API, save it with its groups: `?groups=<group id>`)",
                    ls.id
                ),
            );
        }
        if let Some(agent) = agent {
            let classifiers = |name: &str| catalog.classifier(&ls.application, name);
            errors.extend_prefixed(
                &format!("{at}.parameters"),
                validate_values(&agent.parameters, &ls.parameters, &classifiers),
            );
        }
        policy_rules(ls, &at, errors);
    }
}

/// What the launch kind allows: stream vs scheduled, stream options, idle timeout.
fn kind_rules(
    catalog: &Catalog,
    ls: &LaunchSetting,
    agent: Option<&Agent>,
    at: &str,
    errors: &mut ValidationErrors,
) {
    let input = agent.map(|a| a.input);
    if let Some(a) = agent.filter(|a| a.needs_data_queue()) {
        errors.push(
            format!("{at}.agent"),
            format!(
                "agent '{}/{}' needs a data queue: pick one on the agent before it can have \
                 launch settings",
                a.application, a.id
            ),
        );
    }
    if ls.kind == LaunchKind::Stream && input == Some(InputKind::Standalone) {
        errors.push(
            format!("{at}.kind"),
            format!(
                "agent '{}/{}' is standalone, so it can only have scheduled launch settings \
                 (stream needs a messages agent)",
                ls.application, ls.agent
            ),
        );
    }
    if ls.kind != LaunchKind::Stream {
        if ls.stream_mode.is_some() {
            errors.push(
                format!("{at}.stream_mode"),
                "stream_mode only applies to stream launch settings",
            );
        }
        if ls.filter.is_some() {
            errors.push(
                format!("{at}.filter"),
                "filter only applies to stream launch settings",
            );
        }
    }
    if ls.kind == LaunchKind::Stream && ls.stream_mode == Some(StreamMode::Delayed) {
        let queue = agent
            .and_then(|a| a.data_queue.as_deref())
            .and_then(|q| catalog.data_queue(q));
        if let Some(queue) = queue.filter(|q| q.delay.is_none()) {
            errors.push(
                format!("{at}.stream_mode"),
                format!(
                    "a delayed stream needs data queue '{}' to have a delay",
                    queue.id
                ),
            );
        }
    }
    let shared_queue = agent
        .and_then(|a| a.data_queue.as_deref())
        .and_then(|q| catalog.data_queue(q))
        .filter(|q| q.kind == DataQueueKind::Queue);
    if let Some(queue) = shared_queue {
        if ls.filter.as_ref().is_some_and(|f| !f.is_empty()) {
            errors.push(
                format!("{at}.filter"),
                format!(
                    "data queue '{}' is of kind queue: its launch settings share one queue, \
                     so none can filter; use a topic data queue",
                    queue.id
                ),
            );
        }
        if ls.stream_mode == Some(StreamMode::Delayed) {
            errors.push(
                format!("{at}.stream_mode"),
                format!(
                    "data queue '{}' is of kind queue: its launch settings share one queue, \
                     so none can be Delayed; use a topic data queue",
                    queue.id
                ),
            );
        }
    }
    if let Some(filter) = &ls.filter {
        for name in filter.headers.keys() {
            if let Err(rule) = check_header_name(name) {
                errors.push(format!("{at}.filter.headers"), rule);
            }
        }
    }
    if let Some(idle) = ls.idle_timeout {
        if ls.kind != LaunchKind::Scheduled || input == Some(InputKind::Standalone) {
            errors.push(
                format!("{at}.idle_timeout"),
                "idle_timeout only applies to scheduled launch settings of messages agents",
            );
        } else if idle.is_zero() {
            errors.push(format!("{at}.idle_timeout"), "must be longer than 0s");
        }
    }
}

/// Breaker, retry, dead-letter, recovery and webhook settings.
fn policy_rules(ls: &LaunchSetting, at: &str, errors: &mut ValidationErrors) {
    if ls.failure_threshold < 1 {
        errors.push(
            format!("{at}.failure_threshold"),
            format!("must be at least 1, got {}", ls.failure_threshold),
        );
    }
    let retry = &ls.retry;
    if retry.initial_delay.is_zero() {
        errors.push(
            format!("{at}.retry.initial_delay"),
            "must be longer than 0s",
        );
    }
    if !retry.multiplier.is_finite() || retry.multiplier < 1.0 {
        errors.push(
            format!("{at}.retry.multiplier"),
            format!(
                "must be a finite number of at least 1, got {}",
                retry.multiplier
            ),
        );
    }
    if retry.max_delay < retry.initial_delay {
        errors.push(
            format!("{at}.retry.max_delay"),
            format!(
                "must be at least initial_delay ({}), got {}",
                retry.initial_delay, retry.max_delay
            ),
        );
    }
    if retry.max_deliveries < 1 {
        errors.push(
            format!("{at}.retry.max_deliveries"),
            format!("must be at least 1, got {}", retry.max_deliveries),
        );
    }
    if retry.multiplier.is_finite()
        && retry.multiplier >= 1.0
        && wait_delays(retry, &ls.dead_letter).len() > MAX_WAIT_LEVELS
    {
        errors.push(
            format!("{at}.retry.multiplier"),
            format!(
                "{} grows the delay so slowly that retries would need more than \
                 {MAX_WAIT_LEVELS} distinct delays (each is a broker queue); use a larger \
                 multiplier or a smaller max_delay",
                retry.multiplier
            ),
        );
    }
    if ls.unavailable_for.is_zero() {
        errors.push(format!("{at}.unavailable_for"), "must be longer than 0s");
    }
    let dead = &ls.dead_letter;
    if dead.policy == DeadLetterPolicy::Park && dead.park_cooldown.is_zero() {
        errors.push(
            format!("{at}.dead_letter.park_cooldown"),
            "must be longer than 0s when parking",
        );
    }
    match (&dead.policy, dead.forward_to.as_deref()) {
        (DeadLetterPolicy::Forward, None) => errors.push(
            format!("{at}.dead_letter.forward_to"),
            "names the exchange that gets a copy of each dead letter; required with policy forward",
        ),
        (DeadLetterPolicy::Forward, Some(name)) => {
            if let Err(e) = exchange_name(name) {
                errors.push(format!("{at}.dead_letter.forward_to"), e);
            }
        }
        (_, Some(_)) => errors.push(
            format!("{at}.dead_letter.forward_to"),
            "only with policy forward",
        ),
        (_, None) => {}
    }
    if dead.notify_threshold == Some(0) {
        errors.push(
            format!("{at}.dead_letter.notify_threshold"),
            "must be at least 1, got 0",
        );
    }
    let recovery = &ls.recovery;
    for (field, value) in [
        ("start_timeout", recovery.start_timeout),
        ("work_timeout", recovery.work_timeout),
    ] {
        if value.is_zero() {
            errors.push(format!("{at}.recovery.{field}"), "must be longer than 0s");
        }
    }
    if recovery.max_run_time.is_some_and(|d| d.is_zero()) {
        errors.push(
            format!("{at}.recovery.max_run_time"),
            "must be longer than 0s when set",
        );
    }
    check_channels(errors, at, &ls.channels);
}

/// The shortest dead man's switch window.
const MIN_SUCCESS_WINDOW_MS: u64 = 60_000;
/// The longest: a year and a day, which covers a yearly group; longer is a typo.
const MAX_SUCCESS_WINDOW_MS: u64 = 366 * 24 * 3_600_000;

pub(super) fn schedule_groups(catalog: &Catalog, errors: &mut ValidationErrors) {
    let mut seen = FirstSeen::new();
    for (i, group) in catalog.schedule_groups.iter().enumerate() {
        let at = format!("schedule_groups[{i}]");
        check_id(errors, format!("{at}.id"), &group.id);
        if let Some(first) = seen.check(group.id.as_str(), i) {
            errors.push(
                format!("{at}.id"),
                format!(
                    "schedule group '{}' is already defined at schedule_groups[{first}]",
                    group.id
                ),
            );
        }
        if catalog.application(&group.application).is_none() {
            errors.push(
                format!("{at}.application"),
                format!("application '{}' does not exist", group.application),
            );
        }
        if let Err(e) = parse_cron(&group.cron) {
            errors.push(format!("{at}.cron"), e);
        }
        if let Err(e) = parse_time_zone(&group.time_zone) {
            errors.push(format!("{at}.time_zone"), e);
        }
        check_channels(errors, &at, &group.channels);
        if let Some(window) = group.expect_success_within {
            if window.as_millis() < MIN_SUCCESS_WINDOW_MS {
                errors.push(
                    format!("{at}.expect_success_within"),
                    "must be at least 1m: the manager checks it every 15 seconds, and a shorter \
                     window would be told on every check",
                );
            } else if window.as_millis() > MAX_SUCCESS_WINDOW_MS {
                errors.push(
                    format!("{at}.expect_success_within"),
                    "must be at most 366days: a group that should succeed less than yearly \
                     needs no switch",
                );
            }
        }

        let mut members = FirstSeen::new();
        // (member id, concurrency of its agent) for the members whose agent is known.
        let mut modes = Vec::new();
        for (j, member) in group.members.iter().enumerate() {
            let path = format!("{at}.members[{j}]");
            if let Some(first) = members.check(member.as_str(), j) {
                errors.push(
                    path,
                    format!("launch setting '{member}' is already a member at members[{first}]"),
                );
                continue;
            }
            let Some(ls) = catalog.launch_setting(member) else {
                errors.push(
                    path,
                    format!(
                        "launch setting '{member}' does not exist (in the API, create the group \
                         without it, then save the launch setting with `?groups={}`)",
                        group.id
                    ),
                );
                continue;
            };
            if ls.application != group.application {
                errors.push(
                    path.clone(),
                    format!(
                        "launch setting '{member}' belongs to application '{}', not '{}'",
                        ls.application, group.application
                    ),
                );
            }
            if ls.kind == LaunchKind::Stream {
                errors.push(
                    path,
                    format!("launch setting '{member}' is a stream; only scheduled launch settings can be group members"),
                );
            }
            if let Some(agent) = catalog.agent(&ls.application, &ls.agent) {
                modes.push((member.as_str(), agent.concurrency));
            }
        }
        if let Some(&(first, mode)) = modes.first() {
            let differ: Vec<&str> = modes
                .iter()
                .filter(|(_, c)| *c != mode)
                .map(|(m, _)| *m)
                .collect();
            if let Some(other) = modes.iter().map(|(_, c)| *c).find(|c| *c != mode) {
                let verb = if differ.len() == 1 { "runs" } else { "run" };
                errors.push(
                    format!("{at}.members"),
                    format!(
                        "members must share one concurrency mode: the first member '{first}' runs {}, \
                         but {} {verb} {}",
                        concurrency_name(mode),
                        quoted_list(&differ),
                        concurrency_name(other)
                    ),
                );
            }
        }
    }
}

/// Longest header name a broker binding takes (an AMQP short string).
pub const MAX_HEADER_NAME_LEN: usize = 255;

/// An exchange the manager publishes to: what AMQP allows in a name (letters, digits, `-`,
/// `_`, `.`, `:`; at most 255 bytes), and not one of the broker's own (`amq.`).
fn exchange_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > 255 {
        return Err(format!("at most 255 bytes, got {}", name.len()));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.:".contains(*c)))
    {
        return Err(format!(
            "`{bad}` is not allowed in an exchange name (letters, digits, `-`, `_`, `.`, `:`)"
        ));
    }
    if name.starts_with("amq.") {
        return Err("names starting with `amq.` belong to the broker".into());
    }
    Ok(())
}

/// A filter header name must be an HTTP token (letters, digits and ``!#$%&'*+-.^_`|~``): it
/// becomes a broker binding argument and is shown and edited in forms, where control characters,
/// spaces or markup would be misread. The broker ignores `x-` headers when matching.
pub fn check_header_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("header names must not be empty".into());
    }
    if name.len() > MAX_HEADER_NAME_LEN {
        return Err(format!(
            "header name '{}…' is longer than {MAX_HEADER_NAME_LEN} bytes",
            name.chars().take(32).collect::<String>()
        ));
    }
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if let Some(bad) = name.chars().find(|c| !token(*c)) {
        return Err(format!(
            "header name {name:?} has {bad:?}: only letters, digits and !#$%&'*+-.^_`|~ are allowed"
        ));
    }
    if name.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("x-")) {
        return Err(format!(
            "header name '{name}' starts with x-, which the broker's header matching ignores"
        ));
    }
    Ok(())
}
