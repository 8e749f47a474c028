//! The manager's HTTP surface driven in-process (`router(state)` + `oneshot`, no socket), on
//! SQLite and PostgreSQL, with the real RabbitMQ where the broker matters.

// A test reads as one scenario, set-up to last check: the one-sitting bound of production
// functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

mod audit_api;
mod bad_input;
mod broker_api;
mod browser;
mod catalog_api;
mod cli;
mod contract;
mod dashboard_api;
mod dead_letter_pages;
mod dead_letters_api;
mod dead_letters_broker;
mod doors;
mod failure_pages;
mod failures_api;
mod node_pages;
mod nodes_api;
mod notifications_api;
mod operations_api;
mod pages;
mod probes;
mod roles;
mod security;
mod server_fn_roles;
mod tokens_api;
mod users_api;

use am_domain::roles::Role;
use am_services::{
    Principal, Services, Settings, accounts,
    health::BrokerStatus,
    testing::{Backend, TestDb},
};
use axum::{
    Router,
    body::Body,
    http::{Request, Response, StatusCode, header},
};
use http_body_util::BodyExt;
use server::{config::HttpConfig, state::AppState};
use std::sync::Arc;
use tower::ServiceExt;

/// Runs an `async fn(TestApp)` case once per database backend.
#[macro_export]
macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::$case($crate::TestApp::new(am_services::testing::Backend::Sqlite).await).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    super::$case($crate::TestApp::new(am_services::testing::Backend::Postgres).await).await;
                }
            }
        )*
    };
}

pub struct TestApp {
    pub router: Router,
    pub services: Services,
    _db: TestDb,
}

pub struct TestResponse {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: Vec<u8>,
}

impl TestResponse {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl TestApp {
    pub async fn new(backend: Backend) -> Self {
        Self::with_broker(backend, BrokerStatus::default()).await
    }

    pub async fn with_broker(backend: Backend, broker: BrokerStatus) -> Self {
        let db = TestDb::new(backend).await;
        let services = Services::new(db.db.clone(), broker, Settings::default());
        let leptos_options = leptos::config::LeptosOptions::builder()
            .output_name("agent-manager")
            .build();
        let state = AppState {
            dashboard: server::live::DashboardFeed::new(
                services.clone(),
                tokio_util::sync::CancellationToken::new(),
            ),
            services: services.clone(),
            leptos_options,
            http: Arc::new(HttpConfig {
                listen: ([127, 0, 0, 1], 3000).into(),
                allowed_origins: vec![],
                allowed_hosts: server::allowed_hosts::AllowedHosts::parse(["manager.example.com"])
                    .expect("host names"),
                secure_cookies: false,
                metrics_public: false,
                public_url: None,
                session_idle: std::time::Duration::from_secs(12 * 3600),
                session_max_age: std::time::Duration::from_secs(7 * 86_400),
            }),
        };
        TestApp {
            router: server::http::router(state),
            services,
            _db: db,
        }
    }

    /// A user with `role` and an API token for them.
    pub async fn token(&self, role: Role) -> String {
        let name = format!("{role}-{}", uuid::Uuid::new_v4().simple());
        let cli = Principal::cli();
        accounts::create_user(&self.services.db, &cli, &name, "a long password", role)
            .await
            .expect("user");
        accounts::create_token(&self.services.db, &cli, &name, "test")
            .await
            .expect("token")
    }

    pub async fn send(&self, req: Request<Body>) -> TestResponse {
        let resp: Response<Body> = self.router.clone().oneshot(req).await.expect("infallible");
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = resp
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes()
            .to_vec();
        TestResponse {
            status,
            headers,
            body,
        }
    }

    pub async fn api(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> TestResponse {
        let mut b = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "127.0.0.1:3000");
        if let Some(t) = token {
            b = b.header(header::AUTHORIZATION, format!("Bearer {t}"));
        }
        let req = match body {
            Some(v) => b
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(v.to_string())),
            None => b.body(Body::empty()),
        }
        .expect("request");
        self.send(req).await
    }
}

pub fn demo_catalog() -> serde_json::Value {
    serde_json::from_str(include_str!("../../../demo/catalog.json")).expect("demo catalog")
}

/// One operation of the OpenAPI document, as the generated tests walk them.
pub struct Operation {
    /// Upper case: `GET`, `POST`, ...
    pub method: String,
    /// As documented, with `{name}` for each path parameter.
    pub path: String,
    pub op: serde_json::Value,
}

impl Operation {
    /// A server-sent event stream, which never ends (its route is checked in dashboard_api).
    pub fn streams(&self) -> bool {
        self.op["responses"]["200"]["content"]["text/event-stream"].is_object()
    }

    pub fn has_body(&self) -> bool {
        self.op["requestBody"].is_object()
    }

    pub fn params(&self) -> Vec<serde_json::Value> {
        self.op["parameters"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

/// Every HTTP operation the manager documents, read from its OpenAPI document.
pub async fn operations(app: &TestApp) -> Vec<Operation> {
    let doc = app
        .api("GET", "/api/v1/openapi.json", None, None)
        .await
        .json();
    let mut out = Vec::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            if ["get", "post", "put", "delete", "patch"].contains(&method.as_str()) {
                out.push(Operation {
                    method: method.to_uppercase(),
                    path: path.clone(),
                    op: op.clone(),
                });
            }
        }
    }
    out
}
