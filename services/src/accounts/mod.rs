//! Users, password checks, login sessions and API tokens (README.md, Security; roles in
//! docs/concepts.md, Roles).
//!
//! Secrets handed out (session cookies, API tokens) are random 256-bit values; only their
//! SHA-256 is stored, so a leaked database does not leak usable credentials.

pub mod people;
pub mod sessions;
pub mod tokens;

pub use sessions::{create_session, delete_session, resolve_session};
pub use tokens::{create_token, resolve_token};

use crate::{
    ServiceError, Services,
    audit::{self, AuditEntry},
    entity::users,
    error::ServiceResult,
    login_limit::Attempt,
};
use am_domain::{
    audit::LOGIN_FAILED,
    read::accounts::UserInfo,
    roles::{Operation, Role},
};
use argon2::{
    Argon2, PasswordHash, PasswordHasher, PasswordVerifier,
    password_hash::{SaltString, rand_core::OsRng},
};
use base64::Engine;
use chrono::Utc;
use rand::RngCore;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, Set, TransactionTrait,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Prefix of API tokens, so leaked tokens are recognisable by secret scanners.
pub const TOKEN_PREFIX: &str = "amt_";

/// Who is making a request, and how they proved it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    pub user_id: i64,
    pub name: String,
    pub role: Role,
    pub via: AuthMethod,
    /// The client address of the request, recorded in the audit log; `None` from the command
    /// line and for the manager itself.
    #[serde(default)]
    pub address: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AuthMethod {
    /// A browser session cookie: state-changing requests need an Origin check.
    Session,
    /// A Bearer API token.
    Token,
    /// The command line, working directly on the database.
    Cli,
    /// The manager itself (breaker policy, node publications), acting on the catalog.
    System,
}

impl Principal {
    /// `Ok` when the principal's role may do `operation` (its one policy:
    /// [`Operation::least_role`]).
    pub fn require(&self, operation: Operation) -> ServiceResult<()> {
        if self.role.may(operation) {
            Ok(())
        } else {
            Err(ServiceError::Forbidden {
                have: self.role,
                need: operation.least_role(),
            })
        }
    }

    /// The operator of the command line, who owns the database anyway.
    pub fn cli() -> Self {
        Principal {
            user_id: 0,
            name: "cli".into(),
            role: Role::Admin,
            via: AuthMethod::Cli,
            address: None,
        }
    }

    /// The manager acting on its own behalf; `name` says which part (e.g. `breaker`), so the
    /// audit log tells who changed what.
    pub fn system(name: impl Into<String>) -> Self {
        Principal {
            user_id: 0,
            name: name.into(),
            role: Role::Admin,
            via: AuthMethod::System,
            address: None,
        }
    }
}

/// A user as admins see it.
fn user_info(u: &users::Model) -> ServiceResult<UserInfo> {
    Ok(UserInfo {
        id: u.id,
        name: u.name.clone(),
        role: parse_role(&u.role)?,
        disabled: u.disabled,
        last_login_at: u.last_login_at,
    })
}

fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// A readable random password for generated accounts.
pub fn generate_password() -> String {
    let mut bytes = [0u8; 18];
    rand::thread_rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Argon2id hash; CPU-heavy, so it runs off the async workers.
pub async fn hash_password(password: String) -> ServiceResult<String> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| ServiceError::Internal(format!("hashing a password failed: {e}")))
    })
    .await
    .map_err(|e| ServiceError::Internal(format!("password hashing task failed: {e}")))?
}

async fn verify_password(password: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || match PasswordHash::new(&hash) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    })
    .await
    .unwrap_or(false)
}

fn validate_user_name(name: &str) -> ServiceResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'));
    if ok {
        Ok(())
    } else {
        Err(ServiceError::invalid(
            "name",
            format!("user name '{name}' must be 1–64 letters, digits, '.', '_', '-' or '@'"),
        ))
    }
}

/// Shortest password accepted.
pub const MIN_PASSWORD: usize = 12;
/// Longest password accepted: hashing cost grows with it.
const MAX_PASSWORD: usize = 1024;

/// The password policy: 12 to 1,024 characters, and not the user's name.
fn validate_password(name: &str, password: &str) -> ServiceResult<()> {
    let n = password.chars().count();
    if n < MIN_PASSWORD {
        return Err(ServiceError::invalid(
            "password",
            format!("the password must be at least {MIN_PASSWORD} characters long"),
        ));
    }
    if n > MAX_PASSWORD {
        return Err(ServiceError::invalid(
            "password",
            format!("the password must be at most {MAX_PASSWORD} characters long"),
        ));
    }
    if password.trim().eq_ignore_ascii_case(name.trim()) {
        return Err(ServiceError::invalid(
            "password",
            "the password must not be the user name",
        ));
    }
    Ok(())
}

fn parse_role(s: &str) -> ServiceResult<Role> {
    s.parse()
        .map_err(|e: String| ServiceError::Internal(format!("stored role is invalid: {e}")))
}

/// Creates a user; audited.
pub async fn create_user(
    db: &DatabaseConnection,
    actor: &Principal,
    name: &str,
    password: &str,
    role: Role,
) -> ServiceResult<UserInfo> {
    actor.require(Operation::ManageUsers)?;
    validate_user_name(name)?;
    validate_password(name, password)?;
    let hash = hash_password(password.to_owned()).await?;
    let txn = crate::db::begin_write(db).await?;
    if users::Entity::find()
        .filter(users::Column::Name.eq(name))
        .one(&txn)
        .await?
        .is_some()
    {
        return Err(ServiceError::Conflict(format!(
            "user '{name}' already exists"
        )));
    }
    let model = users::ActiveModel {
        name: Set(name.to_owned()),
        password_hash: Set(hash),
        role: Set(role.as_str().to_owned()),
        disabled: Set(false),
        created_at: Set(Utc::now()),
        last_login_at: Set(None),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    let info = user_info(&model)?;
    audit::record(
        &txn,
        AuditEntry::new(actor, "create", "user", name).after(&info),
    )
    .await?;
    txn.commit().await?;
    Ok(info)
}

/// Creates the first admin when there is no user at all. Returns the generated password when
/// none was configured, for the caller to print once.
pub async fn ensure_first_admin(
    db: &DatabaseConnection,
    configured_password: Option<&str>,
) -> ServiceResult<Option<String>> {
    let txn = db.begin().await?;
    let any = users::Entity::find().one(&txn).await?.is_some();
    txn.commit().await?;
    if any {
        return Ok(None);
    }
    let (password, generated) = match configured_password {
        Some(p) => (p.to_owned(), None),
        None => {
            let p = generate_password();
            (p.clone(), Some(p))
        }
    };
    match create_user(db, &Principal::cli(), "admin", &password, Role::Admin).await {
        Ok(_) => Ok(generated),
        // Another replica created it between our check and insert: fine.
        Err(ServiceError::Conflict(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Checks a name and password, with the login rate limit applied per user name and per client.
pub async fn authenticate(
    services: &Services,
    name: &str,
    password: &str,
    client: &str,
) -> ServiceResult<Principal> {
    let now = std::time::Instant::now();
    let attempt = Attempt {
        user: name,
        address: client,
    };
    // Reserved before the slow hash check, so parallel guesses cannot all get a verdict.
    if let Err(retry_after_secs) = services.login_limiter.reserve(attempt, now) {
        return Err(ServiceError::RateLimited { retry_after_secs });
    }
    let user = users::Entity::find()
        .filter(users::Column::Name.eq(name))
        .one(&services.db)
        .await?;
    let ok = match &user {
        Some(u) if !u.disabled => {
            verify_password(password.to_owned(), u.password_hash.clone()).await
        }
        _ => {
            // Same work whether or not the user exists, so timing does not reveal user names.
            let _ = hash_password(password.to_owned()).await;
            false
        }
    };
    let address = (!client.is_empty()).then(|| client.to_owned());
    match user {
        Some(u) if ok => {
            services.login_limiter.succeeded(attempt);
            let principal = Principal {
                user_id: u.id,
                name: u.name.clone(),
                role: parse_role(&u.role)?,
                via: AuthMethod::Session,
                address,
            };
            let txn = crate::db::begin_write(&services.db).await?;
            let mut active: users::ActiveModel = u.into();
            active.last_login_at = Set(Some(Utc::now()));
            active.update(&txn).await?;
            audit::record(&txn, AuditEntry::new(&principal, "login", "user", name)).await?;
            txn.commit().await?;
            Ok(principal)
        }
        // The reserved attempt stays counted as a failure.
        _ => {
            let why = match &user {
                Some(u) if u.disabled => "the user is disabled",
                Some(_) => "wrong password",
                None => "no such user",
            };
            // The name is whatever the client sent: bounded, and its control characters
            // written as escapes, before it is stored.
            let name: String = name.chars().take(100).collect();
            let name = am_domain::text::escape_controls(&name).into_owned();
            audit::record(
                &services.db,
                AuditEntry::by(&name, address, LOGIN_FAILED, "user", &name).cause(why),
            )
            .await?;
            Err(ServiceError::BadCredentials)
        }
    }
}

/// Every user, for the admin's users page.
pub async fn list_users(
    db: &impl ConnectionTrait,
    actor: &Principal,
) -> ServiceResult<Vec<UserInfo>> {
    actor.require(Operation::ManageUsers)?;
    let rows = users::Entity::find()
        .order_by_asc(users::Column::Name)
        .all(db)
        .await?;
    rows.iter().map(user_info).collect()
}

/// The client's address as the HTTP layer saw it, for rate limiting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAddr(pub String);
