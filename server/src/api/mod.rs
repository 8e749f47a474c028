//! The JSON HTTP API under `/api/v1/`, and the probes. The OpenAPI document is generated from
//! the handlers' annotations, so it cannot drift from the code.

mod activations;
mod audit;
mod broker;
mod catalog;
mod dashboard;
mod dead_letters;
pub mod door;
mod entities;
mod entity_schemas;
mod failures;
mod health;
pub mod json;
mod links;
mod nodes;
mod notifications;
mod operations;
mod paging;
pub mod query;
mod refusals;
mod search;
mod sessions;
mod throughput;
mod tokens;
mod users;

use crate::state::AppState;
use axum::{Json, Router, extract::DefaultBodyLimit, routing::get};
use entity_schemas::{ChannelsBeside, IdPatterns, StatusIsReadOnly};
use links::OperationLinks;
use refusals::Refusals;
use utoipa::{
    Modify, OpenApi,
    openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
};

/// Largest accepted catalog document: room for a catalog at its entity limits with large
/// classifiers (docs/operations.md, "Limits"). Other bodies take axum's 2 MiB.
pub const CATALOG_BODY_LIMIT: usize = 32 * 1024 * 1024;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Agent Manager API", description = "Catalog, runtime and operations of Agent Manager."),
    modifiers(
        &BearerAuth,
        &Refusals,
        &ChannelsBeside,
        &StatusIsReadOnly,
        &IdPatterns,
        &OperationLinks
    ),
    security(("bearer" = [])),
    paths(
        health::healthz,
        health::readyz,
        catalog::export,
        catalog::import,
        entities::applications::list, entities::applications::get, entities::applications::create,
        entities::applications::update, entities::applications::delete,
        entities::pools::list, entities::pools::get, entities::pools::create,
        entities::pools::update, entities::pools::delete,
        entities::data_queues::list, entities::data_queues::get, entities::data_queues::create,
        entities::data_queues::update, entities::data_queues::delete,
        entities::schedule_groups::list, entities::schedule_groups::get, entities::schedule_groups::create,
        entities::schedule_groups::update, entities::schedule_groups::delete,
        entities::agents::list, entities::agents::get, entities::agents::create,
        entities::agents::update, entities::agents::delete,
        entities::launch_settings::list, entities::launch_settings::get, entities::launch_settings::create,
        entities::launch_settings::update, entities::launch_settings::delete,
        entities::launch_settings::enable, entities::launch_settings::disable,
        entities::launch_settings::run, entities::launch_settings::clear_quarantine,
        throughput::of_launch_setting,
        entities::schedule_groups::enable, entities::schedule_groups::disable,
        entities::schedule_groups::run,
        nodes::list,
        activations::list, activations::get, activations::rerun, activations::interrupt,
        failures::list, failures::launch_settings, failures::activations, failures::hosts,
        dead_letters::list, dead_letters::get, dead_letters::replay, dead_letters::delete,
        notifications::list, notifications::get, notifications::resend, notifications::test,
        operations::start, operations::list, operations::get, operations::cancel,
        dashboard::get, dashboard::events,
        broker::get, broker::reconcile,
        search::find,
        audit::list, audit::export,
        users::list, users::create, users::update,
        tokens::list, tokens::create, tokens::revoke,
        sessions::list, sessions::revoke,
    ),
    tags(
        (name = "probes", description = "Liveness and readiness"),
        (name = "catalog", description = "The whole catalog as one document"),
        (name = "applications"), (name = "pools"), (name = "data-queues"), (name = "agents"),
        (name = "launch-settings"), (name = "schedule-groups"),
        (name = "nodes", description = "Application instances, their liveness and load"),
        (name = "activations", description = "Runs of launch settings and groups, with their timeline per host"),
        (name = "failures", description = "Failure logs: entries, and the drill-down by launch setting, activation and host"),
        (name = "dead-letters", description = "Messages launch settings gave up on: browse, open, replay to their subscription, delete"),
        (name = "operations", description = "Bulk operations in the background, with progress; cancellable"),
        (name = "dashboard", description = "The manager's state at a glance, now and live"),
        (name = "broker", description = "The broker topology the manager keeps from the catalog"),
        (name = "search", description = "Anything by id or title, from one box"),
        (name = "notifications", description = "What operators were told (breaker trips, disabled items, lost runs and nodes), with each delivery's status"),
        (name = "users", description = "People and their roles (admins)"),
        (name = "tokens", description = "API tokens: one's own, or everyone's for admins; shown once, revocable"),
        (name = "sessions", description = "One's own login sessions: listed with where they came from, revocable"),
        (name = "audit", description = "Who changed what, when, from where: every write and login, with the state before and after"),
    )
)]
pub struct ApiDoc;

/// The document as served: built once, with its links' field names as OpenAPI spells them.
pub fn document() -> &'static serde_json::Value {
    static DOC: std::sync::LazyLock<serde_json::Value> = std::sync::LazyLock::new(|| {
        let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
        links::spell_link_fields(&mut doc);
        doc
    });
    &DOC
}

async fn openapi_json() -> Json<&'static serde_json::Value> {
    Json(document())
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(crate::metrics::metrics))
        .route("/api/v1/openapi.json", get(openapi_json))
        .route(
            "/api/v1/catalog",
            get(catalog::export)
                .put(catalog::import)
                .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(CATALOG_BODY_LIMIT))
                .layer::<_, std::convert::Infallible>(axum::Extension(json::BodyLimit(
                    CATALOG_BODY_LIMIT,
                ))),
        )
        .route("/api/v1/nodes", get(nodes::list))
        .route("/api/v1/broker", get(broker::get))
        .route(
            "/api/v1/broker/reconcile",
            axum::routing::post(broker::reconcile),
        )
        .route("/api/v1/search", get(search::find))
        .route("/api/v1/audit", get(audit::list))
        .route("/api/v1/users", get(users::list).post(users::create))
        .route("/api/v1/tokens", get(tokens::list).post(tokens::create))
        .route("/api/v1/tokens/{id}", axum::routing::delete(tokens::revoke))
        .route("/api/v1/sessions", get(sessions::list))
        .route(
            "/api/v1/sessions/{handle}",
            axum::routing::delete(sessions::revoke),
        )
        .route("/api/v1/users/{name}", axum::routing::patch(users::update))
        .route("/api/v1/audit/export", get(audit::export))
        .route("/api/v1/notifications", get(notifications::list))
        .route(
            "/api/v1/notifications/test",
            axum::routing::post(notifications::test),
        )
        .route("/api/v1/notifications/{id}", get(notifications::get))
        .route(
            "/api/v1/notifications/{id}/resend",
            axum::routing::post(notifications::resend),
        )
        .route(
            "/api/v1/launch-settings/{id}/throughput",
            get(throughput::of_launch_setting),
        )
        .route("/api/v1/dashboard", get(dashboard::get))
        .route("/api/v1/dashboard/events", get(dashboard::events))
        .route("/api/v1/activations", get(activations::list))
        .route("/api/v1/activations/{id}", get(activations::get))
        .route(
            "/api/v1/activations/{id}/rerun",
            axum::routing::post(activations::rerun),
        )
        .route(
            "/api/v1/activations/{id}/interrupt",
            axum::routing::post(activations::interrupt),
        )
        .route("/api/v1/failures", get(failures::list))
        .route(
            "/api/v1/failures/launch-settings",
            get(failures::launch_settings),
        )
        .route(
            "/api/v1/failures/launch-settings/{id}/activations",
            get(failures::activations),
        )
        .route(
            "/api/v1/failures/activations/{id}/hosts",
            get(failures::hosts),
        )
        .route(
            "/api/v1/operations",
            get(operations::list).post(operations::start),
        )
        .route("/api/v1/operations/{id}", get(operations::get))
        .route(
            "/api/v1/operations/{id}/cancel",
            axum::routing::post(operations::cancel),
        )
        .route("/api/v1/dead-letters", get(dead_letters::list))
        .route("/api/v1/dead-letters/{id}", get(dead_letters::get))
        .route(
            "/api/v1/dead-letters/replay",
            axum::routing::post(dead_letters::replay),
        )
        .route(
            "/api/v1/dead-letters/delete",
            axum::routing::post(dead_letters::delete),
        )
        .merge(entities::router())
        // Every other address under /api/ answers here, in the API's error shape: the admin
        // UI's fallback (an HTML page) never sees an API path.
        .route("/api", axum::routing::any(door::no_such_endpoint))
        .route("/api/{*rest}", axum::routing::any(door::no_such_endpoint))
}
