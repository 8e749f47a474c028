//! The service layer's error. Front doors map it to HTTP statuses or form errors.

use am_domain::ValidationErrors;
use sea_orm::DbErr;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The input broke catalog rules; every broken rule is listed with its path.
    #[error("invalid input: {0}")]
    Invalid(ValidationErrors),
    #[error("{0} not found")]
    NotFound(String),
    /// The change conflicts with existing data (already exists, still in use, ...).
    #[error("{0}")]
    Conflict(String),
    #[error("authentication required")]
    Unauthenticated,
    #[error("wrong user name or password")]
    BadCredentials,
    #[error("your role '{have}' may not do this; it needs '{need}'")]
    Forbidden {
        have: am_domain::roles::Role,
        need: am_domain::roles::Role,
    },
    #[error("too many failed login attempts; try again in {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    #[error("database error: {0}")]
    Db(#[from] DbErr),
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        let mut errors = ValidationErrors::new();
        errors.push(path, message);
        ServiceError::Invalid(errors)
    }

    /// Whether the message is about the caller's input (safe and useful to show) rather than
    /// about our own failure (logged, shown generically).
    pub fn is_client_error(&self) -> bool {
        !matches!(self, ServiceError::Db(_) | ServiceError::Internal(_))
    }
}

pub type ServiceResult<T> = Result<T, ServiceError>;
