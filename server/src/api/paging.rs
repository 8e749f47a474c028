//! Paging parameters shared by the lists of the API.

use am_services::ServiceError;

/// Keyset paging: the cursor a previous page returned as `next`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AfterQuery {
    /// The `next` of the previous page.
    pub after: Option<String>,
    /// Items per page: 0 or absent for the list's default; each list caps it at its own
    /// maximum.
    #[serde(default, deserialize_with = "super::query::limit")]
    #[param(minimum = 0, maximum = 1000)]
    pub limit: Option<u64>,
}

impl AfterQuery {
    /// The cursor of a list keyed by numeric id; `what` names the items in the error.
    pub fn id_after(&self, what: &str) -> Result<Option<i64>, ServiceError> {
        match self
            .after
            .as_deref()
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            None => Ok(None),
            Some(a) => a
                .parse::<i64>()
                .map(Some)
                .map_err(|_| ServiceError::invalid("after", format!("`{a}` is not a {what} id"))),
        }
    }
}

/// The numeric id of a path (`/…/{id}`); anything else names no `what`, so it is not found.
pub fn path_id(raw: &str, what: &str) -> Result<i64, ServiceError> {
    raw.trim()
        .parse::<i64>()
        .map_err(|_| ServiceError::NotFound(format!("{what} '{raw}'")))
}

/// Offset paging.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// One-based page number.
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u64>,
    /// Items per page: 0 or absent for the list's default; each list caps it at its own
    /// maximum.
    #[serde(default, deserialize_with = "super::query::limit")]
    #[param(minimum = 0, maximum = 1000)]
    pub limit: Option<u64>,
}
