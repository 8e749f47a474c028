//! The runtime `status` of launch settings and schedule groups in the OpenAPI document as the
//! server takes it: answered with the entity (`LaunchSettingView`, `ScheduleGroupView`), and
//! accepted and ignored when a read entity is sent back (`json::EntityJson`). The entities
//! refuse unknown fields, so without it the document would call every answer invalid.

use utoipa::openapi::{OpenApi, Ref, RefOr, schema::Schema};

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
    fn the_entities_name_their_status() {
        let doc = serde_json::to_value(super::super::ApiDoc::openapi()).expect("json");
        for name in ["LaunchSetting", "ScheduleGroup"] {
            let schema = &doc["components"]["schemas"][name];
            assert_eq!(schema["additionalProperties"], false, "{name}");
            assert!(schema["properties"]["status"].is_object(), "{name}");
        }
    }
}
