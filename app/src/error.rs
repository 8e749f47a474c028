//! The error server functions return to the UI: structured, so forms can put each validation
//! error next to its field, and free of internal detail.

use am_domain::FieldError;
use leptos::server_fn::{
    codec::JsonEncoding,
    error::{FromServerFnError, ServerFnErrorErr},
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum UiError {
    #[error("please log in")]
    Unauthenticated,
    #[error("{0}")]
    Forbidden(String),
    #[error("wrong user name or password")]
    BadCredentials,
    #[error("{0}")]
    RateLimited(String),
    #[error("please correct the highlighted fields")]
    Invalid(Vec<FieldError>),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// The call's arguments did not decode.
    #[error("{0}")]
    BadRequest(String),
    /// Our failure; the detail is in the server log.
    #[error("something went wrong on the server; the details are in its log")]
    Internal,
    /// The call itself failed (network, encoding).
    #[error("the server could not be reached: {0}")]
    Transport(String),
}

impl FromServerFnError for UiError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        // On the server these mean the caller sent arguments that do not decode: its
        // mistake, answered 400 with what was wrong. In the browser every one of them is a
        // failed call.
        #[cfg(feature = "ssr")]
        if let ServerFnErrorErr::Args(m)
        | ServerFnErrorErr::Deserialization(m)
        | ServerFnErrorErr::MissingArg(m) = &value
        {
            return UiError::BadRequest(format!("the request's arguments are malformed: {m}"))
                .set_response_status();
        }
        UiError::Transport(value.to_string())
    }
}

impl UiError {
    /// The errors of one field, for showing next to it.
    pub fn field(&self, path: &str) -> Vec<String> {
        match self {
            UiError::Invalid(errors) => errors
                .iter()
                .filter(|e| e.path == path)
                .map(|e| e.message.clone())
                .collect(),
            _ => vec![],
        }
    }

    /// The whole error in one line, field messages included: for small forms that have no
    /// place beside each field.
    pub fn detail(&self) -> String {
        match self {
            UiError::Invalid(errors) if !errors.is_empty() => errors
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string(),
        }
    }
}

#[cfg(feature = "ssr")]
impl UiError {
    /// The HTTP status a server function answers with this error.
    pub fn status(&self) -> http::StatusCode {
        use http::StatusCode as C;
        match self {
            UiError::Unauthenticated | UiError::BadCredentials => C::UNAUTHORIZED,
            UiError::Forbidden(_) => C::FORBIDDEN,
            UiError::RateLimited(_) => C::TOO_MANY_REQUESTS,
            UiError::Invalid(_) => C::UNPROCESSABLE_ENTITY,
            UiError::NotFound(_) => C::NOT_FOUND,
            UiError::Conflict(_) => C::CONFLICT,
            UiError::BadRequest(_) => C::BAD_REQUEST,
            UiError::Internal | UiError::Transport(_) => C::INTERNAL_SERVER_ERROR,
        }
    }

    /// A request a server function cannot take (`what` says which argument and why),
    /// answered 400.
    pub fn bad_request(what: impl Into<String>) -> Self {
        UiError::BadRequest(what.into()).set_response_status()
    }

    /// Gives the response of the running server function this error's status, so a user's
    /// mistake is a 4xx rather than a 500. Plain HTML form posts keep their redirect back.
    fn set_response_status(self) -> Self {
        use leptos::prelude::use_context;
        let form_post = use_context::<http::request::Parts>()
            .and_then(|p| {
                p.headers
                    .get(http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok())
                    .map(|v| v.contains("text/html"))
            })
            .unwrap_or(false);
        if !form_post && let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
            resp.set_status(self.status());
        }
        self
    }
}

#[cfg(feature = "ssr")]
impl From<am_services::ServiceError> for UiError {
    fn from(e: am_services::ServiceError) -> Self {
        if let am_services::ServiceError::RateLimited { retry_after_secs } = &e
            && let Some(resp) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>()
        {
            resp.insert_header(http::header::RETRY_AFTER, (*retry_after_secs).into());
        }
        Self::from_service(e).set_response_status()
    }
}

#[cfg(feature = "ssr")]
impl UiError {
    /// What a service error says about one item of a call that otherwise succeeded (a row of a
    /// bulk action): unlike `From`, it leaves the call's own status alone.
    pub fn item_detail(e: am_services::ServiceError) -> String {
        Self::from_service(e).detail()
    }

    fn from_service(e: am_services::ServiceError) -> Self {
        use am_services::ServiceError as S;
        match e {
            S::Invalid(errors) => UiError::Invalid(errors.0),
            S::NotFound(what) => UiError::NotFound(format!("{what} not found")),
            S::Conflict(m) => UiError::Conflict(m),
            S::Unauthenticated => UiError::Unauthenticated,
            S::BadCredentials => UiError::BadCredentials,
            e @ S::Forbidden { .. } => UiError::Forbidden(e.to_string()),
            e @ S::RateLimited { .. } => UiError::RateLimited(e.to_string()),
            e @ (S::Db(_) | S::Internal(_)) => {
                tracing::error!(error = %e, "server function failed");
                UiError::Internal
            }
        }
    }
}
