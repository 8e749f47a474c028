//! Two things the OpenAPI document says about operations as a whole, set in one place:
//!
//! - every operation has an id of its own (`pools_get`, `launch-settings_enable`): utoipa names
//!   an operation after its handler, and most handlers are called `list`, `get`, `create`…,
//!   which generated clients cannot tell apart;
//! - what a create answers links to the operations on what it created (`POST /api/v1/pools` →
//!   `GET`, `PUT`, `DELETE /api/v1/pools/{id}`), each path parameter taken from the field of the
//!   same name in the answer, so a client (or a fuzzer's stateful phase) can follow them.

use std::collections::BTreeMap;
use utoipa::openapi::{
    OpenApi, RefOr,
    link::LinkBuilder,
    path::{Operation, PathItem},
    schema::Schema,
};

pub struct OperationLinks;

impl utoipa::Modify for OperationLinks {
    fn modify(&self, openapi: &mut OpenApi) {
        name_operations(openapi);
        let properties = component_properties(openapi);
        let paths: Vec<(String, Vec<(&'static str, String)>)> = openapi
            .paths
            .paths
            .iter()
            .map(|(path, item)| (path.clone(), operation_ids(item)))
            .collect();
        for (path, item) in openapi.paths.paths.iter_mut() {
            let Some(create) = item.post.as_mut() else {
                continue;
            };
            if path.contains('{') {
                continue;
            }
            let prefix = format!("{path}/{{");
            for (status, response) in create.responses.responses.iter_mut() {
                if !status.starts_with('2') {
                    continue;
                }
                let RefOr::T(response) = response else {
                    continue;
                };
                let Some(fields) = response
                    .content
                    .get("application/json")
                    .and_then(|c| c.schema.as_ref())
                    .and_then(|s| match s {
                        RefOr::Ref(r) => r.ref_location.rsplit('/').next(),
                        RefOr::T(_) => None,
                    })
                    .and_then(|name| properties.get(name))
                else {
                    continue;
                };
                for (target, ids) in paths.iter().filter(|(p, _)| p.starts_with(&prefix)) {
                    let params = path_params(target);
                    if params.is_empty() || !params.iter().all(|p| fields.contains(p)) {
                        continue;
                    }
                    for (method, id) in ids {
                        let mut link = LinkBuilder::new().operation_id(id.clone());
                        for p in &params {
                            link = link.parameter(p.clone(), format!("$response.body#/{p}"));
                        }
                        response
                            .links
                            .insert(format!("{method} {target}"), RefOr::T(link.build()));
                    }
                }
            }
        }
    }
}

fn operations_mut(item: &mut PathItem) -> [(&'static str, Option<&mut Operation>); 5] {
    [
        ("GET", item.get.as_mut()),
        ("PUT", item.put.as_mut()),
        ("POST", item.post.as_mut()),
        ("PATCH", item.patch.as_mut()),
        ("DELETE", item.delete.as_mut()),
    ]
}

fn operation_ids(item: &PathItem) -> Vec<(&'static str, String)> {
    [
        ("GET", item.get.as_ref()),
        ("PUT", item.put.as_ref()),
        ("POST", item.post.as_ref()),
        ("PATCH", item.patch.as_ref()),
        ("DELETE", item.delete.as_ref()),
    ]
    .into_iter()
    .filter_map(|(m, op)| Some((m, op?.operation_id.clone()?)))
    .collect()
}

/// `{tag}_{handler}`: unique, since a tag's handlers live in one module.
fn name_operations(openapi: &mut OpenApi) {
    for item in openapi.paths.paths.values_mut() {
        for (_, op) in operations_mut(item) {
            let Some(op) = op else { continue };
            if let (Some(tag), Some(id)) = (
                op.tags.as_ref().and_then(|t| t.first()).cloned(),
                op.operation_id.clone(),
            ) {
                op.operation_id = Some(format!("{tag}_{id}"));
            }
        }
    }
}

/// The property names of each object schema among the components.
fn component_properties(openapi: &OpenApi) -> BTreeMap<String, Vec<String>> {
    let Some(components) = openapi.components.as_ref() else {
        return BTreeMap::new();
    };
    components
        .schemas
        .iter()
        .filter_map(|(name, schema)| match schema {
            RefOr::T(Schema::Object(o)) => {
                Some((name.clone(), o.properties.keys().cloned().collect()))
            }
            _ => None,
        })
        .collect()
}

/// utoipa 5.5 writes a link's fields in Rust's spelling (`operation_id`); OpenAPI and every
/// tool that follows links read `operationId`, `operationRef` and `requestBody`.
pub fn spell_link_fields(doc: &mut serde_json::Value) {
    let Some(paths) = doc.get_mut("paths").and_then(|p| p.as_object_mut()) else {
        return;
    };
    for item in paths.values_mut().filter_map(|i| i.as_object_mut()) {
        for op in item.values_mut().filter_map(|o| o.as_object_mut()) {
            let Some(responses) = op.get_mut("responses").and_then(|r| r.as_object_mut()) else {
                continue;
            };
            for response in responses.values_mut() {
                let Some(links) = response.get_mut("links").and_then(|l| l.as_object_mut()) else {
                    continue;
                };
                for link in links.values_mut().filter_map(|l| l.as_object_mut()) {
                    for (from, to) in [
                        ("operation_id", "operationId"),
                        ("operation_ref", "operationRef"),
                        ("request_body", "requestBody"),
                    ] {
                        if let Some(v) = link.remove(from) {
                            link.insert(to.to_owned(), v);
                        }
                    }
                }
            }
        }
    }
}

/// The parameters of a path template, in order: `/a/{application}/{id}` → application, id.
fn path_params(template: &str) -> Vec<String> {
    template
        .split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn operation_ids_are_unique_and_creates_link_to_what_they_created() {
        let doc = super::super::document();
        let mut seen = HashSet::new();
        for item in doc["paths"].as_object().expect("paths").values() {
            for op in item.as_object().expect("item").values() {
                if let Some(id) = op["operationId"].as_str() {
                    assert!(seen.insert(id.to_owned()), "operation id {id} twice");
                }
            }
        }
        let links = &doc["paths"]["/api/v1/pools"]["post"]["responses"]["201"]["links"];
        let get = &links["GET /api/v1/pools/{id}"];
        assert_eq!(get["operationId"], "pools_get", "{links}");
        assert_eq!(get["parameters"]["id"], "$response.body#/id");
        let agent = &doc["paths"]["/api/v1/agents"]["post"]["responses"]["201"]["links"]["DELETE /api/v1/agents/{application}/{id}"];
        assert_eq!(
            agent["parameters"]["application"],
            "$response.body#/application"
        );
    }
}
