//! What the catalog entities' schemas say beyond their Rust types:
//!
//! - the runtime `status` of launch settings and schedule groups, as the server takes it:
//!   answered with the entity (`LaunchSettingView`, `ScheduleGroupView`), and accepted and
//!   ignored when a read entity is sent back (`json::EntityJson`). The entities refuse unknown
//!   fields, so without it the document would call every answer invalid;
//! - the pattern of ids and of the fields that name another entity by id
//!   (`am_domain::ids::ID_PATTERN`, the rule `validate_id` applies).

use am_domain::ids::ID_PATTERN;
use utoipa::openapi::{OpenApi, Ref, RefOr, schema::Schema};

/// Fields holding a catalog id, per entity schema.
const ID_FIELDS: [(&str, &[&str]); 6] = [
    ("Application", &["id", "default_pool"]),
    ("Pool", &["id"]),
    ("DataQueue", &["id"]),
    ("Agent", &["application", "id", "data_queue"]),
    ("LaunchSetting", &["id", "application", "agent", "pool"]),
    ("ScheduleGroup", &["id", "application"]),
];

pub struct IdPatterns;

impl utoipa::Modify for IdPatterns {
    fn modify(&self, openapi: &mut OpenApi) {
        let Some(components) = openapi.components.as_mut() else {
            return;
        };
        for (name, fields) in ID_FIELDS {
            let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(name) else {
                continue;
            };
            for field in fields {
                if let Some(RefOr::T(Schema::Object(f))) = object.properties.get_mut(*field) {
                    f.pattern = Some(ID_PATTERN.to_owned());
                }
            }
        }
    }
}

pub struct StatusIsReadOnly;

impl utoipa::Modify for StatusIsReadOnly {
    fn modify(&self, openapi: &mut OpenApi) {
        let Some(components) = openapi.components.as_mut() else {
            return;
        };
        for name in ["LaunchSetting", "ScheduleGroup"] {
            if let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(name) {
                object.properties.insert(
                    "status".to_owned(),
                    RefOr::Ref({
                        let mut r = Ref::from_schema_name("RunStatus");
                        r.description =
                            "Read-only: the runtime status, ignored when sent back".to_owned();
                        r
                    }),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use utoipa::OpenApi as _;

    #[test]
    fn ids_carry_their_pattern() {
        let doc = serde_json::to_value(super::super::ApiDoc::openapi()).expect("json");
        for (name, fields) in super::ID_FIELDS {
            for field in fields {
                assert_eq!(
                    doc["components"]["schemas"][name]["properties"][field]["pattern"],
                    am_domain::ids::ID_PATTERN,
                    "{name}.{field}"
                );
            }
        }
    }

    #[test]
    fn the_entities_name_their_status() {
        let doc = serde_json::to_value(super::super::ApiDoc::openapi()).expect("json");
        for name in ["LaunchSetting", "ScheduleGroup"] {
            let schema = &doc["components"]["schemas"][name];
            assert_eq!(schema["additionalProperties"], false, "{name}");
            assert!(schema["properties"]["status"].is_object(), "{name}");
        }
    }
}
