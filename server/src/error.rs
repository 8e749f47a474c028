//! The HTTP layer's error: maps service errors to statuses and the JSON error body of the API,
//! `{"error": "...", "errors": [{"path": "...", "message": "..."}]}`. Our own failures are
//! logged in full and shown generically.

use am_domain::FieldError;
use am_services::ServiceError;
use axum::{
    Json,
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// The request itself is malformed (unparseable JSON, wrong content type, ...).
    #[error("{0}")]
    BadRequest(String),
    #[error("invalid API token")]
    BadToken,
    #[error("the request's Origin is not allowed for this state-changing request")]
    BadOrigin,
    #[error("this manager does not answer to the host name `{0}`; add it to AM_ALLOWED_HOSTS")]
    BadHost(String),
    #[error("the request body is larger than the {limit} bytes this endpoint accepts")]
    TooLarge { limit: usize },
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

impl AppError {
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::Service(e) => match e {
                ServiceError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
                ServiceError::NotFound(_) => StatusCode::NOT_FOUND,
                ServiceError::Conflict(_) => StatusCode::CONFLICT,
                ServiceError::Unauthenticated | ServiceError::BadCredentials => {
                    StatusCode::UNAUTHORIZED
                }
                ServiceError::Forbidden { .. } => StatusCode::FORBIDDEN,
                ServiceError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
                ServiceError::Db(_) | ServiceError::Internal(_) => {
                    StatusCode::INTERNAL_SERVER_ERROR
                }
            },
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::BadToken => StatusCode::UNAUTHORIZED,
            AppError::BadOrigin => StatusCode::FORBIDDEN,
            AppError::BadHost(_) => StatusCode::BAD_REQUEST,
            AppError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }

    fn body(&self) -> ErrorBody {
        match self {
            AppError::Service(ServiceError::Invalid(errors)) => ErrorBody {
                error: format!("the request has {} error(s)", errors.len()),
                errors: errors.0.clone(),
            },
            AppError::Service(e) if !e.is_client_error() => {
                tracing::error!(error = %e, "request failed");
                ErrorBody {
                    error: "internal error; the details are in the server log".into(),
                    errors: vec![],
                }
            }
            other => ErrorBody {
                error: other.to_string(),
                errors: vec![],
            },
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut resp = (status, Json(self.body())).into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        if let AppError::Service(ServiceError::RateLimited { retry_after_secs }) = &self {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, (*retry_after_secs).into());
        }
        resp
    }
}

pub type ApiResult<T> = Result<T, AppError>;
