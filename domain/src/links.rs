//! The paths of the manager's pages, built in one place: the UI links with them and
//! notifications carry them (after the manager's public address) as their deep link.

use crate::usage::EntityRef;

/// Percent-encodes one query value or path segment.
pub fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A filter's value as a link or a form carries it: blank for none.
pub fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

/// `path?k=v&...` with the empty values left out.
pub fn href(path: &str, pairs: &[(&str, &str)]) -> String {
    let q: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .collect();
    if q.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", q.join("&"))
    }
}

/// The path of a level of the drill-down.
pub fn level_path(launch_setting: &str, activation: &str, host: &str) -> String {
    let mut p = "/failures".to_owned();
    for seg in [launch_setting, activation, host] {
        if seg.is_empty() {
            break;
        }
        p.push('/');
        p.push_str(&enc(seg));
    }
    p
}

/// An activation's page.
pub fn activation(id: &str) -> String {
    format!("/activations/{}", enc(id))
}

/// A launch setting's page.
pub fn launch_setting(id: &str) -> String {
    format!("/launch-settings/{}", enc(id))
}

/// A schedule group's page.
pub fn schedule_group(id: &str) -> String {
    format!("/schedule-groups/{}", enc(id))
}

/// The dead letters of one launch setting, those still dead.
pub fn dead_letters_of(launch_setting: &str) -> String {
    href(
        "/dead-letters",
        &[("launch_setting", launch_setting), ("status", "dead")],
    )
}

/// The failure reports of `kind` (empty: the real failures) at or after `from`, one by one:
/// the list a figure of the dashboard's last hour counts, to the microsecond.
pub fn failures_since(from: chrono::DateTime<chrono::Utc>, kind: &str) -> String {
    ls_failures_since("", from, kind)
}

/// [`failures_since`] of one launch setting (empty: of all).
pub fn ls_failures_since(
    launch_setting: &str,
    from: chrono::DateTime<chrono::Utc>,
    kind: &str,
) -> String {
    let from = from.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    href(
        "/failures",
        &[
            ("view", "failures"),
            ("launch_setting", launch_setting),
            ("from", &from),
            ("kind", kind),
        ],
    )
}

/// The runs of one launch setting (alone or as a group member), newest first.
pub fn runs_of(launch_setting: &str) -> String {
    href("/activations", &[("launch_setting", launch_setting)])
}

/// Activations of `status` as the dashboard counts runs (a group's activation once, its
/// member runs not again), created at or after `since` when given.
pub fn runs(status: &str, since: Option<chrono::DateTime<chrono::Utc>>) -> String {
    let since = since
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true))
        .unwrap_or_default();
    href(
        "/activations",
        &[("status", status), ("top_level", "true"), ("from", &since)],
    )
}

/// The nodes page, at one host's row.
pub fn node(host: &str) -> String {
    format!("/nodes#{}", node_anchor(host))
}

/// The element id of a host's row on the nodes page.
pub fn node_anchor(host: &str) -> String {
    format!("host-{}", enc(host))
}

/// The Broker page: what the reconciler applied and where the broker differs.
pub const BROKER: &str = "/broker";

/// A bulk operation's page.
pub fn operation(id: &str) -> String {
    format!("/operations/{}", enc(id))
}

/// A dead letter's page.
pub fn dead_letter(id: i64) -> String {
    format!("/dead-letters/{id}")
}

/// The page of an entity as the audit log names it (`entity_type`, `entity_id`), if it has one.
pub fn entity(entity_type: &str, id: &str) -> Option<String> {
    let entity = match entity_type {
        "application" => EntityRef::Application(id.to_owned()),
        "pool" => EntityRef::Pool(id.to_owned()),
        "data_queue" => EntityRef::DataQueue(id.to_owned()),
        "agent" => {
            let (application, agent) = id.split_once('/')?;
            EntityRef::agent(application, agent)
        }
        "launch_setting" => EntityRef::LaunchSetting(id.to_owned()),
        "schedule_group" => EntityRef::ScheduleGroup(id.to_owned()),
        "activation" => return Some(activation(id)),
        "operation" => return Some(operation(id)),
        _ => return None,
    };
    Some(entity_page(&entity))
}

/// An entity's own page; a classifier's is its application's.
pub fn entity_page(entity: &EntityRef) -> String {
    match entity {
        EntityRef::Application(id) => format!("/applications/{}", enc(id)),
        EntityRef::Pool(id) => format!("/pools/{}", enc(id)),
        EntityRef::DataQueue(id) => format!("/data-queues/{}", enc(id)),
        EntityRef::Agent { application, id } => {
            format!("/agents/{}/{}", enc(application), enc(id))
        }
        EntityRef::Classifier { application, .. } => {
            format!("/applications/{}", enc(application))
        }
        EntityRef::LaunchSetting(id) => launch_setting(id),
        EntityRef::ScheduleGroup(id) => schedule_group(id),
    }
}

/// An entity's history: the audit log filtered to it.
pub fn history(entity_type: &str, id: &str) -> String {
    href("/audit", &[("entity_type", entity_type), ("entity_id", id)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_and_values_are_encoded_and_empty_values_left_out() {
        assert_eq!(enc("a b/c"), "a%20b%2Fc");
        assert_eq!(href("/x", &[("a", ""), ("b", "1 2")]), "/x?b=1%202");
        assert_eq!(level_path("ls", "", "h"), "/failures/ls");
        assert_eq!(level_path("ls", "act", "h/1"), "/failures/ls/act/h%2F1");
        assert_eq!(
            dead_letters_of("billing.sync"),
            "/dead-letters?launch_setting=billing.sync&status=dead"
        );
    }

    #[test]
    fn audited_entities_link_to_their_pages_and_history() {
        assert_eq!(
            entity("agent", "demo/echo").as_deref(),
            Some("/agents/demo/echo")
        );
        assert_eq!(
            entity("data_queue", "a b").as_deref(),
            Some("/data-queues/a%20b")
        );
        assert_eq!(
            entity("operation", "0190").as_deref(),
            Some("/operations/0190")
        );
        assert_eq!(
            entity_page(&EntityRef::classifier("demo", "orgs")),
            "/applications/demo",
            "a classifier is shown on its application's page"
        );
        assert_eq!(dead_letter(42), "/dead-letters/42");
        assert_eq!(entity("user", "admin"), None);
        assert_eq!(entity("agent", "no-slash"), None);
        assert_eq!(
            history("launch_setting", "demo.echo.1"),
            "/audit?entity_type=launch_setting&entity_id=demo.echo.1"
        );
    }
}
