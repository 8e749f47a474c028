//! The audit log (docs/operations.md, Audit log): `GET /api/v1/audit` (filtered, newest first,
//! by cursor) and `GET /api/v1/audit/export` (every matching entry as JSON lines), for anyone
//! signed in.

use super::paging::AfterQuery;
use crate::api::query::ApiQuery;
use crate::{
    auth::Caller,
    error::{ApiResult, ErrorBody},
    state::AppState,
};
use am_domain::read::audit::{AuditFilter, AuditPage};
use am_services::audit;
use axum::{
    Json,
    body::{Body, Bytes},
    extract::State,
    http::header,
    response::{IntoResponse, Response},
};
use futures_util::stream;

/// Entries matching the filters, newest first (100 per page unless `limit` asks for fewer).
#[utoipa::path(get, path = "/api/v1/audit", tag = "audit",
    params(AuditFilter, AfterQuery), responses(
    (status = 200, body = AuditPage),
    (status = 401, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "a malformed time or cursor"),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(filter): ApiQuery<AuditFilter>,
    ApiQuery(paging): ApiQuery<AfterQuery>,
) -> ApiResult<Json<AuditPage>> {
    let after = paging.id_after("audit entry")?;
    let limit = paging.limit.unwrap_or(audit::PAGE);
    Ok(Json(
        audit::list(&state.services.db, &who, &filter, after, limit).await?,
    ))
}

/// Every entry matching the filters, newest first, one JSON object per line
/// (`application/x-ndjson`), read page by page as it is sent.
#[utoipa::path(get, path = "/api/v1/audit/export", tag = "audit",
    params(AuditFilter), responses(
    (status = 200, content_type = "application/x-ndjson", description = "one audit entry per line, as in `GET /api/v1/audit`"),
    (status = 401, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "a malformed time"),
))]
pub async fn export(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(filter): ApiQuery<AuditFilter>,
) -> ApiResult<Response> {
    let db = state.services.db.clone();
    // The first page is read before answering, so a bad filter is a 422, not a cut stream.
    let first = audit::export_page(&db, &who, &filter, None).await?;
    let pages = stream::unfold(Some(Next::Page(first)), move |next| {
        let (db, who, filter) = (db.clone(), who.clone(), filter.clone());
        async move {
            let page = match next? {
                Next::Page(page) => page,
                Next::After(cursor) => {
                    match audit::export_page(&db, &who, &filter, Some(cursor)).await {
                        Ok(page) => page,
                        Err(e) => {
                            tracing::warn!(error = %e, "audit export stopped");
                            return Some((Err(std::io::Error::other(e.to_string())), None));
                        }
                    }
                }
            };
            let lines = lines(&page);
            Some((Ok(lines), page.next.map(Next::After)))
        }
    });
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-ndjson"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"audit.jsonl\"",
            ),
        ],
        Body::from_stream(pages),
    )
        .into_response())
}

enum Next {
    Page(AuditPage),
    After(i64),
}

fn lines(page: &AuditPage) -> Bytes {
    let mut out = Vec::new();
    for e in &page.entries {
        // An entry is plain data: it always serializes.
        if serde_json::to_writer(&mut out, e).is_ok() {
            out.push(b'\n');
        }
    }
    Bytes::from(out)
}
