//! The refusals an operation can answer before or beside its own: added to the OpenAPI document
//! in one place, from the rules the door (`door.rs`), the sign-in check, the role extractors and
//! the JSON body reader follow for every route, so the document says what the server does
//! without each handler repeating them. A handler's own description of a code is kept.

use utoipa::openapi::{
    ContentBuilder, OpenApi, Ref, RefOr, ResponseBuilder,
    path::{HttpMethod, Operation},
};

/// Adds the refusals to every operation of the document.
pub struct Refusals;

impl utoipa::Modify for Refusals {
    fn modify(&self, openapi: &mut OpenApi) {
        for (path, item) in openapi.paths.paths.iter_mut() {
            let operations = [
                (HttpMethod::Get, item.get.as_mut()),
                (HttpMethod::Post, item.post.as_mut()),
                (HttpMethod::Put, item.put.as_mut()),
                (HttpMethod::Patch, item.patch.as_mut()),
                (HttpMethod::Delete, item.delete.as_mut()),
            ];
            for (method, op) in operations {
                if let Some(op) = op {
                    add(path, &method, op);
                }
            }
        }
    }
}

/// Whether `path` answers without a token (the probes and this document).
fn public(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/api/v1/openapi.json")
}

fn add(path: &str, method: &HttpMethod, op: &mut Operation) {
    if public(path) {
        return;
    }
    let write = !matches!(method, HttpMethod::Get);
    let has_query = op.parameters.as_ref().is_some_and(|ps| {
        ps.iter()
            .any(|p| matches!(p.parameter_in, utoipa::openapi::path::ParameterIn::Query))
    });
    let has_body = op.request_body.is_some();
    let mut codes = vec![
        (
            "400",
            "malformed request: a NUL character in the address, a path or query value of the \
             wrong type, or a body that is not JSON (or not the expected JSON)",
        ),
        ("401", "no valid token or session"),
        (
            "500",
            "an internal error (the database failed); the log has the cause",
        ),
    ];
    if write {
        codes.push((
            "403",
            "the caller's role may not do this, or a browser session's write came from another \
             origin",
        ));
    }
    if path.contains('{') {
        codes.push(("404", "nothing has the id or name in the address"));
    }
    if has_body {
        codes.push(("413", "the body is larger than the operation accepts"));
    }
    if has_body || has_query {
        codes.push((
            "422",
            "a value is out of its range or breaks a rule of the catalog; `errors` lists each \
             with its path",
        ));
    }
    for (code, description) in codes {
        op.responses
            .responses
            .entry(code.to_owned())
            .or_insert_with(|| {
                RefOr::T(
                    ResponseBuilder::new()
                        .description(description)
                        .content(
                            "application/json",
                            ContentBuilder::new()
                                .schema(Some(Ref::from_schema_name("ErrorBody")))
                                .build(),
                        )
                        .build(),
                )
            });
    }
}

#[cfg(test)]
mod tests {
    use utoipa::OpenApi as _;

    #[test]
    fn every_operation_documents_the_doors_refusals() {
        let doc = super::super::ApiDoc::openapi();
        let item = &doc.paths.paths["/api/v1/launch-settings/{id}"];
        let put = item.put.as_ref().expect("put");
        for code in ["400", "401", "403", "404", "413", "422", "500"] {
            assert!(
                put.responses.responses.contains_key(code),
                "PUT lacks {code}"
            );
        }
        let get = item.get.as_ref().expect("get");
        assert!(!get.responses.responses.contains_key("403"));
        let probe = doc.paths.paths["/healthz"].get.as_ref().expect("healthz");
        assert!(!probe.responses.responses.contains_key("401"));
    }
}
