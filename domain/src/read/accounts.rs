//! Users, API tokens and login sessions as the API and the pages read them: never with a
//! password hash, a token or a session's secret.

use crate::roles::Role;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A user as listed to admins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserInfo {
    pub id: i64,
    pub name: String,
    pub role: Role,
    pub disabled: bool,
    pub last_login_at: Option<DateTime<Utc>>,
}

/// A token to create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// Whose token; the caller's own when left out (only admins name another user).
    #[serde(default)]
    pub user: Option<String>,
    /// What it is for, e.g. `grafana`.
    pub name: String,
    /// At most the caller's and the user's role; the user's role when left out.
    #[serde(default)]
    pub role: Option<Role>,
    /// When it stops working; never when left out.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
}

/// A token as lists show it (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenInfo {
    pub id: i64,
    pub user: String,
    pub name: String,
    /// The token's first characters, to tell tokens apart.
    pub prefix: String,
    /// The role the token acts with: its own, or its user's.
    pub role: Role,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    /// The client address of its last use.
    pub last_used_from: Option<String>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A token just created: `token` is shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedToken {
    pub token: String,
    #[serde(flatten)]
    pub info: TokenInfo,
}

/// One of the caller's sessions, as the page and the API list them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionInfo {
    /// Names the session for revoking it; not a credential.
    pub handle: String,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    /// When it ends unless used again (and at the latest at its absolute age).
    pub expires_at: DateTime<Utc>,
    pub address: Option<String>,
    pub user_agent: Option<String>,
    /// The session of this request.
    pub current: bool,
}
