//! Server functions check the role before their arguments, as the API does: the table of their
//! operations (`app::api::server_fn_operations`) is kept equal to what each function's code
//! requires and to the functions the binary registers, and a caller whose role is too low gets
//! 403 whatever arguments they sent.

use crate::browser::session;
use crate::{TestApp, on_both_backends};
use am_domain::roles::{Operation, Role};
use app::api::server_fn_operations::{Caller, OPERATIONS};
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};
use std::{collections::BTreeMap, path::Path};

on_both_backends!(a_role_too_low_is_refused_before_the_arguments_are_read);

/// Every server function in the app's sources, by endpoint, with the first operation its body
/// requires (`Anyone` when it requires none).
fn declared() -> BTreeMap<String, Caller> {
    fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("app sources").flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/src"),
        &mut paths,
    );
    let mut out = BTreeMap::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("readable source");
        let marker = "#[server(prefix = \"/ui\", endpoint = \"";
        let mut rest = text.as_str();
        while let Some(i) = rest.find(marker) {
            rest = &rest[i + marker.len()..];
            let endpoint = rest.split('"').next().unwrap_or_default().to_owned();
            // The function's body runs to the next server function (or the file's end).
            let body = rest.find(marker).map_or(rest, |next| &rest[..next]);
            let caller = Operation::ALL
                .into_iter()
                .filter_map(|op| {
                    body.find(&format!("require(Operation::{op:?})"))
                        .map(|at| (at, op))
                })
                .min()
                .map_or(Caller::Anyone, |(_, op)| Caller::May(op));
            out.insert(endpoint, caller);
        }
    }
    out
}

#[test]
fn the_table_is_what_the_functions_require_and_names_every_one() {
    let table: BTreeMap<String, Caller> = OPERATIONS
        .iter()
        .map(|(e, c)| ((*e).to_owned(), *c))
        .collect();
    let declared = declared();
    assert!(
        declared.len() > 40,
        "only {} server functions read",
        declared.len()
    );
    assert_eq!(
        table, declared,
        "app::api::server_fn_operations differs from the code"
    );
    let registered: BTreeMap<String, ()> = leptos::server_fn::axum::server_fn_paths()
        .filter_map(|(p, _)| p.strip_prefix("/ui/").map(|e| (e.to_owned(), ())))
        .collect();
    let named: BTreeMap<String, ()> = table.keys().map(|e| (e.clone(), ())).collect();
    assert_eq!(
        registered, named,
        "a registered server function is not in the table"
    );
}

fn call(path: &str, cookie: &str, content_type: &str, body: &'static str) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri(path)
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::ORIGIN, "http://127.0.0.1:3000")
        .header(header::ACCEPT, "application/json")
        .header(header::COOKIE, cookie)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .expect("request")
}

async fn a_role_too_low_is_refused_before_the_arguments_are_read(app: TestApp) {
    let viewer = session(&app, "low-viewer", Role::Viewer).await;
    let operator = session(&app, "low-operator", Role::Operator).await;
    let mut failures = Vec::new();
    let mut checked = 0;
    for (endpoint, caller) in OPERATIONS {
        let Caller::May(operation) = caller else {
            continue;
        };
        let path = format!("/ui/{endpoint}");
        let too_low: &[(&str, &String)] = match operation.least_role() {
            Role::Viewer => &[],
            Role::Operator => &[("viewer", &viewer)],
            Role::Admin => &[("viewer", &viewer), ("operator", &operator)],
        };
        for (who, cookie) in too_low {
            for (content_type, body) in [
                ("application/json", "{\"not\": \"an argument\"}"),
                ("application/x-www-form-urlencoded", "garbage=%ZZ"),
            ] {
                checked += 1;
                let r = app.send(call(&path, cookie, content_type, body)).await;
                if r.status != StatusCode::FORBIDDEN || !r.text().contains("may not") {
                    failures.push(format!("{path} as {who}: {} {}", r.status, r.text()));
                }
            }
        }
    }
    assert!(checked > 40, "only {checked} calls");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The right role gets past the door to the arguments, which are refused as malformed.
    let r = app
        .send(call("/ui/run_now", &operator, "application/json", "{}"))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text());
}
