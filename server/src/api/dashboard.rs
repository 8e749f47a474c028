//! The dashboard: `GET /api/v1/dashboard` (the figures now) and `GET /api/v1/dashboard/events`
//! (server-sent events: the figures at once, then whenever they are refreshed, every 2 s).

use crate::{auth::Caller, error::ApiResult, error::ErrorBody, state::AppState};
use am_domain::{dashboard::Dashboard, roles::Operation};
use am_services::dashboard;
use axum::{
    Json,
    extract::State,
    response::sse::{Event, KeepAlive, Sse},
};
use futures_util::{Stream, StreamExt, stream};
use std::{convert::Infallible, time::Duration};

/// How long one event stream lasts before the browser reconnects: each reconnection passes the
/// authentication again, so a logged-out or expired session stops receiving figures.
const STREAM_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// How soon the browser reconnects after a stream ended.
const RECONNECT: Duration = Duration::from_secs(1);

/// One event of the stream as a client reads it (the OpenAPI document describes a
/// `text/event-stream` answer by the schema of each event; the server writes them with axum's
/// `Event`, so this type is never built).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct DashboardEvent {
    /// The JSON of the figures, as `GET /api/v1/dashboard` answers them.
    #[schema(content_media_type = "application/json")]
    data: String,
    /// Always `message`.
    event: Option<String>,
    /// Milliseconds the browser waits before reconnecting.
    retry: Option<u64>,
    id: Option<String>,
}

/// Activations by status, the active ones, live nodes and their load, dead letters waiting,
/// disabled launch settings and groups with the reason, and failures per hour over the last
/// 24 hours by error type.
#[utoipa::path(get, path = "/api/v1/dashboard", tag = "dashboard", responses(
    (status = 200, body = Dashboard),
    (status = 401, body = ErrorBody),
))]
pub async fn get(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Dashboard>> {
    let s = &state.services;
    let d = dashboard::snapshot(&s.db, &who, &s.runtime, chrono::Utc::now()).await?;
    Ok(Json(dashboard::with_broker(d, s).await?))
}

/// The dashboard's figures as server-sent events: one `message` event with the same JSON as
/// `GET /api/v1/dashboard` at once, then one each time the figures are refreshed (every 2 s),
/// with keep-alive comments in between. Every open stream shares one refresh. A stream ends
/// after ten minutes and the browser's `EventSource` reconnects (authenticating again).
#[utoipa::path(get, path = "/api/v1/dashboard/events", tag = "dashboard", responses(
    (status = 200, content_type = "text/event-stream",
        description = "`data:` lines holding the dashboard's JSON", body = DashboardEvent),
    (status = 401, body = ErrorBody),
))]
pub async fn events(
    State(state): State<AppState>,
    Caller(who): Caller,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    who.require(Operation::Read)?;
    let rx = state.dashboard.subscribe();
    let updates = stream::unfold((rx, true), |(mut rx, first)| async move {
        let mut wait = !first;
        loop {
            // The first event goes out as soon as a snapshot exists; later ones on change.
            if wait {
                rx.changed().await.ok()?;
            }
            wait = true;
            let latest = rx.borrow_and_update().clone();
            if let Some(json) = latest {
                let event = Event::default().data(&*json);
                let event = if first { event.retry(RECONNECT) } else { event };
                return Some((Ok(event), (rx, false)));
            }
        }
    });
    let feed = state.dashboard.clone();
    let end = async move {
        tokio::select! {
            () = feed.stopping() => {}
            () = tokio::time::sleep(STREAM_LIFETIME) => {}
        }
    };
    Ok(Sse::new(updates.take_until(end)).keep_alive(KeepAlive::default()))
}
