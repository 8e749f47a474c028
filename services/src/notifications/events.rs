//! The notice of each event, with its sentence and its link: what the raisers (the catalog's
//! enable/disable, the breaker, the watchdog, the node registry) hand to `raise`.

use am_domain::{
    HumanDuration, links,
    notify::{Event, Notice, action},
    usage::EntityRef,
    wire::BreakerTripped,
};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The failure that tripped a breaker, in a notice.
fn trip_fields(n: &mut Notice, trip: &BreakerTripped) {
    n.host = Some(trip.host.clone());
    n.application = Some(trip.application.clone());
    n.activation = Some(trip.activation_id.0.clone());
    if let Some(last) = trip.last_errors.last() {
        n.error_type = Some(last.error_type.clone());
        n.error_message = Some(last.message.clone());
    }
}

/// A breaker tripped on one host of a launch setting; `did` says what that changed ("the
/// launch setting is disabled", "host h1 is quarantined"), `action` the same as a word.
pub fn breaker_tripped(
    trip: &BreakerTripped,
    action: &str,
    did: &str,
    at: DateTime<Utc>,
) -> Notice {
    let last = trip
        .last_errors
        .last()
        .map(|e| format!(" (last: {}: {})", e.error_type, e.message))
        .unwrap_or_default();
    let mut n = Notice::new(
        Event::BreakerTripped,
        at,
        format!(
            "Breaker tripped for {} on {} after {} failures in a row{last}: {did}.",
            trip.launch_setting, trip.host, trip.consecutive_failures
        ),
        &links::level_path(&trip.launch_setting, &trip.activation_id.0, &trip.host),
    );
    n.launch_setting = Some(trip.launch_setting.clone());
    n.action = Some(action.to_owned());
    trip_fields(&mut n, trip);
    n
}

/// A launch setting or group was disabled by `by` for `why`. A breaker's disabling is told as
/// `breaker_tripped` (with the failure) when `trip` is given.
pub fn disabled(
    key: &EntityRef,
    by: &str,
    why: &str,
    activation: Option<Uuid>,
    trip: Option<&BreakerTripped>,
    at: DateTime<Utc>,
) -> Option<Notice> {
    let (event, what, path) = match key {
        EntityRef::LaunchSetting(id) => (
            Event::LaunchSettingDisabled,
            format!("launch setting {id}"),
            links::launch_setting(id),
        ),
        EntityRef::ScheduleGroup(id) => (
            Event::ScheduleGroupDisabled,
            format!("schedule group {id}"),
            links::schedule_group(id),
        ),
        _ => return None,
    };
    let mut n = match trip {
        Some(t) => {
            let mut n = breaker_tripped(t, action::DISABLED, &format!("{what} is disabled"), at);
            if let EntityRef::ScheduleGroup(g) = key {
                n.group = Some(g.clone());
            }
            n
        }
        None => {
            let mut n = Notice::new(
                event,
                at,
                format!("The {what} was disabled by {by}: {why}"),
                &path,
            );
            match key {
                EntityRef::LaunchSetting(id) => n.launch_setting = Some(id.clone()),
                EntityRef::ScheduleGroup(id) => n.group = Some(id.clone()),
                _ => {}
            }
            n.activation = activation.map(|a| a.to_string());
            n.action = Some(action::DISABLED.to_owned());
            n
        }
    };
    n.reason = Some(format!("{by}: {why}"));
    Some(n)
}

/// The watchdog gave up a run as lost.
pub fn activation_lost(
    activation: Uuid,
    launch_setting: Option<&str>,
    host: &str,
    why: &str,
    at: DateTime<Utc>,
) -> Notice {
    let id = activation.to_string();
    let mut n = Notice::new(
        Event::ActivationLost,
        at,
        format!(
            "Activation {id}{} was lost on {host}: {why}",
            launch_setting
                .map(|l| format!(" of {l}"))
                .unwrap_or_default()
        ),
        &links::activation(&id),
    );
    n.activation = Some(id);
    n.launch_setting = launch_setting.map(str::to_owned);
    n.host = Some(host.to_owned());
    n.reason = Some(why.to_owned());
    n
}

/// An activation of a launch setting that asks for every failure to be told ended `failed`
/// with `error` (the first failed host's, when known).
pub fn activation_failed(
    activation: Uuid,
    launch_setting: &str,
    error: Option<&str>,
    at: DateTime<Utc>,
) -> Notice {
    let id = activation.to_string();
    let mut n = Notice::new(
        Event::ActivationFailed,
        at,
        format!(
            "Activation {id} of {launch_setting} failed{}",
            error
                .map(|e| format!(": {e}"))
                .unwrap_or_else(|| ".".into())
        ),
        &links::activation(&id),
    );
    n.activation = Some(id);
    n.launch_setting = Some(launch_setting.to_owned());
    n.error_message = error.map(str::to_owned);
    n
}

/// A node stopped sending heartbeats (`lost`) or is heard from again.
pub fn node(
    lost: bool,
    application: &str,
    host: &str,
    last_heartbeat: Option<DateTime<Utc>>,
    at: DateTime<Utc>,
) -> Notice {
    let (event, summary) = if lost {
        (
            Event::NodeLost,
            format!(
                "Node {host} of {application} is lost: no heartbeat since {}.",
                last_heartbeat
                    .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
                    .unwrap_or_else(|| "it started".to_owned())
            ),
        )
    } else {
        (
            Event::NodeBack,
            format!("Node {host} of {application} is back."),
        )
    };
    let mut n = Notice::new(event, at, summary, &links::node(host));
    n.application = Some(application.to_owned());
    n.host = Some(host.to_owned());
    n
}

/// A launch setting's dead letters reached its threshold.
pub fn dead_letters_threshold(
    launch_setting: &str,
    dead: u64,
    threshold: u64,
    at: DateTime<Utc>,
) -> Notice {
    let mut n = Notice::new(
        Event::DeadLettersThreshold,
        at,
        format!(
            "{dead} dead letters of {launch_setting} are waiting for an operator (threshold {threshold})."
        ),
        &links::dead_letters_of(launch_setting),
    );
    n.launch_setting = Some(launch_setting.to_owned());
    n.reason = Some(format!("threshold {threshold}"));
    n
}

/// A group's fire at `fire_time` was dropped by its misfire policy.
pub fn schedule_missed(group: &str, fire_time: DateTime<Utc>, at: DateTime<Utc>) -> Notice {
    let mut n = Notice::new(
        Event::ScheduleMissed,
        at,
        format!(
            "Schedule group {group} missed its fire of {}: the manager was not running then, and \
             its misfire policy is skip.",
            fire_time.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        &links::schedule_group(group),
    );
    n.group = Some(group.to_owned());
    n.reason = Some("misfire policy skip".to_owned());
    n
}

/// A group's cron fire came while its previous fire was still running: the schedule is not
/// kept (the fire starts anyway, beside the running one).
pub fn schedule_overran(group: &str, fire_time: DateTime<Utc>, at: DateTime<Utc>) -> Notice {
    let mut n = Notice::new(
        Event::ScheduleMissed,
        at,
        format!(
            "Schedule group {group} was still running its previous fire when its fire of {} came: \
             it takes longer than its schedule allows.",
            fire_time.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        &links::schedule_group(group),
    );
    n.group = Some(group.to_owned());
    n.reason = Some("overran".to_owned());
    n.action = Some(action::OVERRAN.to_owned());
    n
}

/// No run of a group succeeded within its dead man's switch window.
pub fn no_success(
    group: &str,
    since: DateTime<Utc>,
    window: HumanDuration,
    at: DateTime<Utc>,
) -> Notice {
    let mut n = Notice::new(
        Event::ScheduleMissed,
        at,
        format!(
            "Schedule group {group}: no run succeeded since {} (it should within {window}).",
            since.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        &links::schedule_group(group),
    );
    n.group = Some(group.to_owned());
    n.reason = Some(format!("no success within {window}"));
    n.action = Some(action::NO_SUCCESS.to_owned());
    n
}

/// The exchange of `data_queue` is held on the broker by someone else with other arguments;
/// `error` is the broker's refusal.
pub fn broker_conflict(
    exchange: &str,
    data_queue: &str,
    application: &str,
    error: &str,
    at: DateTime<Utc>,
) -> Notice {
    let mut n = Notice::new(
        Event::BrokerConflict,
        at,
        format!(
            "Exchange {exchange} of data queue {data_queue} exists on the broker with other \
             arguments and was not declared by this manager (another installation holds it): \
             it is left alone, and nothing published there reaches {data_queue}'s launch \
             settings until the data queue gets an address of its own."
        ),
        links::BROKER,
    );
    n.application = Some(application.to_owned());
    n.data_queue = Some(data_queue.to_owned());
    n.reason = Some(error.to_owned());
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use am_domain::wire::{ActivationId, ErrorSummary};

    fn trip() -> BreakerTripped {
        BreakerTripped {
            application: "billing".into(),
            host: "h1".into(),
            activation_id: ActivationId("a-1".into()),
            launch_setting: "billing.sync".into(),
            consecutive_failures: 5,
            same_type_failures: 5,
            last_errors: vec![ErrorSummary {
                error_type: "DbTimeout".into(),
                message: "no answer in 30 s".into(),
            }],
            at: DateTime::<Utc>::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_breaker_disabling_a_group_is_told_as_a_trip_with_the_failure_and_the_group() {
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let t = trip();
        let n = disabled(
            &EntityRef::ScheduleGroup("nightly".into()),
            "breaker",
            "5 failures",
            None,
            Some(&t),
            at,
        )
        .expect("a notice");
        assert_eq!(n.event, Event::BreakerTripped);
        assert_eq!(n.group.as_deref(), Some("nightly"));
        assert_eq!(n.launch_setting.as_deref(), Some("billing.sync"));
        assert_eq!(n.error_type.as_deref(), Some("DbTimeout"));
        assert_eq!(n.url, "/failures/billing.sync/a-1/h1");
        assert!(
            n.summary.contains("schedule group nightly is disabled"),
            "{}",
            n.summary
        );
    }

    #[test]
    fn an_operator_disabling_is_told_with_who_and_why() {
        let n = disabled(
            &EntityRef::LaunchSetting("billing.sync".into()),
            "alice",
            "maintenance",
            None,
            None,
            DateTime::<Utc>::UNIX_EPOCH,
        )
        .expect("a notice");
        assert_eq!(n.event, Event::LaunchSettingDisabled);
        assert_eq!(n.url, "/launch-settings/billing.sync");
        assert_eq!(n.reason.as_deref(), Some("alice: maintenance"));
        assert!(
            disabled(
                &EntityRef::Pool("p".into()),
                "alice",
                "x",
                None,
                None,
                DateTime::<Utc>::UNIX_EPOCH
            )
            .is_none()
        );
    }
}
