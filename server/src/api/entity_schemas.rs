//! What the catalog entities' schemas say beyond their Rust types:
//!
//! - the runtime `status` of launch settings and schedule groups, as the server takes it:
//!   answered with the entity (`LaunchSettingView`, `ScheduleGroupView`), and accepted and
//!   ignored when a read entity is sent back (`json::EntityJson`). The entities refuse unknown
//!   fields, so without it the document would call every answer invalid;
//! - the notification channels' fields beside each entity's own, as documents have them
//!   (`am_domain::catalog::Channels`, flattened into applications, launch settings and groups);
//! - the pattern of ids and of the fields that name another entity by id
//!   (`am_domain::ids::ID_PATTERN`, the rule `validate_id` applies), and of the path parameters
//!   that take one.

use am_domain::ids::ID_PATTERN;
use utoipa::openapi::{
    OpenApi, Ref, RefOr,
    path::ParameterIn,
    schema::{AdditionalProperties, Object, Schema},
};

/// Paths whose `{id}` and `{application}` parameters are catalog ids.
const ID_PATHS: [&str; 7] = [
    "/api/v1/applications/",
    "/api/v1/pools/",
    "/api/v1/data-queues/",
    "/api/v1/agents/",
    "/api/v1/launch-settings/",
    "/api/v1/schedule-groups/",
    "/api/v1/failures/launch-settings/",
];

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
        for (path, item) in openapi.paths.paths.iter_mut() {
            if !ID_PATHS.iter().any(|p| path.starts_with(p)) {
                continue;
            }
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for op in operations.into_iter().flatten() {
                for param in op.parameters.iter_mut().flatten() {
                    let names_an_id = matches!(param.name.as_str(), "id" | "application");
                    if param.parameter_in == ParameterIn::Path && names_an_id {
                        let mut schema = Object::with_type(utoipa::openapi::Type::String);
                        schema.pattern = Some(ID_PATTERN.to_owned());
                        param.schema = Some(RefOr::T(Schema::Object(schema)));
                    }
                }
            }
        }
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

/// The entities that carry notification channels.
const WITH_CHANNELS: [&str; 3] = ["Application", "LaunchSetting", "ScheduleGroup"];

/// utoipa writes a flattened field as `allOf: [the flattened type, the rest]`; the entities'
/// channels go back among their own fields, in one object that refuses unknown fields as the
/// server does, and the `Channels` schema, which nothing else names, goes.
pub struct ChannelsBeside;

impl utoipa::Modify for ChannelsBeside {
    fn modify(&self, openapi: &mut OpenApi) {
        let Some(components) = openapi.components.as_mut() else {
            return;
        };
        let Some(RefOr::T(Schema::Object(channels))) = components.schemas.remove("Channels") else {
            return;
        };
        for name in WITH_CHANNELS {
            let Some(RefOr::T(Schema::AllOf(all))) = components.schemas.get(name) else {
                continue;
            };
            let Some(mut object) = all.items.iter().find_map(|item| match item {
                RefOr::T(Schema::Object(o)) => Some(o.clone()),
                _ => None,
            }) else {
                continue;
            };
            object.description.clone_from(&all.description);
            object.properties.extend(channels.properties.clone());
            object.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
            components
                .schemas
                .insert(name.to_owned(), RefOr::T(Schema::Object(object)));
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
    fn path_ids_carry_their_pattern_and_activation_ids_their_format() {
        let doc = serde_json::to_value(super::super::ApiDoc::openapi()).expect("json");
        let param = |path: &str, method: &str, name: &str| {
            doc["paths"][path][method]["parameters"]
                .as_array()
                .and_then(|ps| ps.iter().find(|p| p["name"] == name).cloned())
                .unwrap_or_else(|| panic!("{method} {path} has a parameter {name}"))
        };
        for (path, method, name) in [
            ("/api/v1/launch-settings/{id}", "get", "id"),
            ("/api/v1/launch-settings/{id}/throughput", "get", "id"),
            ("/api/v1/agents/{application}/{id}", "put", "application"),
            (
                "/api/v1/failures/launch-settings/{id}/activations",
                "get",
                "id",
            ),
        ] {
            assert_eq!(
                param(path, method, name)["schema"]["pattern"],
                am_domain::ids::ID_PATTERN,
                "{method} {path} {name}"
            );
        }
        for path in [
            "/api/v1/activations/{id}",
            "/api/v1/failures/activations/{id}/hosts",
        ] {
            assert_eq!(
                param(path, "get", "id")["schema"]["format"],
                "uuid",
                "{path}"
            );
        }
    }

    #[test]
    fn the_channels_sit_beside_the_entities_fields() {
        let doc = serde_json::to_value(super::super::ApiDoc::openapi()).expect("json");
        let schemas = &doc["components"]["schemas"];
        assert!(schemas.get("Channels").is_none(), "named by nothing");
        for name in super::WITH_CHANNELS {
            let schema = &schemas[name];
            assert_eq!(schema["type"], "object", "{name}");
            assert_eq!(schema["additionalProperties"], false, "{name}");
            assert!(schema["description"].is_string(), "{name}");
            for field in am_domain::catalog::Channels::FIELDS {
                // The secret is write-only: never in an answer, so not in the schema.
                let listed = schema["properties"].get(field).is_some();
                assert_eq!(listed, field != "webhook_secret", "{name}.{field}");
            }
            assert!(schema["properties"]["id"].is_object(), "{name}");
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
