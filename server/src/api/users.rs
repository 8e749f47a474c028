//! People (docs/operations.md, Users and tokens): `GET /api/v1/users`, `POST /api/v1/users`
//! and `PATCH /api/v1/users/{name}` (role, disabled, password), for admins.

use super::json::ApiJson;
use crate::{
    auth::{Allowed, Caller, may},
    error::{ApiResult, ErrorBody},
    state::AppState,
};
use am_domain::{read::accounts::UserInfo, roles::Role};
use am_services::accounts::{
    self,
    people::{self, UserChange},
};
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};

/// Every user, by name (admins).
#[utoipa::path(get, path = "/api/v1/users", tag = "users", responses(
    (status = 200, body = Vec<UserInfo>),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
) -> ApiResult<Json<Vec<UserInfo>>> {
    Ok(Json(accounts::list_users(&state.services.db, &who).await?))
}

/// A user to create.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    pub name: String,
    pub role: Role,
    /// At least 12 characters, not the user name.
    #[schema(min_length = 12, max_length = 1024)]
    pub password: String,
}

/// Creates a user (admins).
#[utoipa::path(post, path = "/api/v1/users", tag = "users", request_body = NewUser, responses(
    (status = 201, body = UserInfo),
    (status = 400, body = ErrorBody, description = "not a JSON body"),
    (status = 403, body = ErrorBody),
    (status = 409, body = ErrorBody, description = "the name is taken"),
    (status = 422, body = ErrorBody, description = "a bad name, a password against the policy, or an unknown field"),
))]
pub async fn create(
    State(state): State<AppState>,
    Allowed(who, _): Allowed<may::ManageUsers>,
    ApiJson(new): ApiJson<NewUser>,
) -> ApiResult<(StatusCode, Json<UserInfo>)> {
    let user =
        accounts::create_user(&state.services.db, &who, &new.name, &new.password, new.role).await?;
    Ok((StatusCode::CREATED, Json(user)))
}

/// Changes a user's role, enabled state or password (admins). Disabling or setting a password
/// signs the user out; the last active admin can be neither demoted nor disabled.
#[utoipa::path(patch, path = "/api/v1/users/{name}", tag = "users", request_body = UserChange,
    params(("name" = String, Path, description = "user name")), responses(
    (status = 200, body = UserInfo),
    (status = 400, body = ErrorBody, description = "not a JSON body"),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody, description = "it would leave no active admin"),
    (status = 422, body = ErrorBody, description = "a password against the policy, or an unknown field"),
))]
pub async fn update(
    State(state): State<AppState>,
    Allowed(who, _): Allowed<may::ManageUsers>,
    Path(name): Path<String>,
    ApiJson(change): ApiJson<UserChange>,
) -> ApiResult<Json<UserInfo>> {
    Ok(Json(
        people::update_user(&state.services.db, &who, &name, change).await?,
    ))
}
