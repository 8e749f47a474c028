//! Server functions of the UI. Each one resolves the caller, checks the role and calls one
//! service function; nothing else happens here.

pub mod activations;
pub mod audit;
pub mod broker;
pub mod bulk;
pub mod catalog;
pub mod dashboard;
pub mod dead_letters;
pub mod failures;
pub mod nodes;
pub mod notifications;
pub mod operations;
pub mod overview;
pub mod search;
pub mod server_fn_operations;
pub mod sessions;
pub mod users;

use crate::error::UiError;
use am_domain::roles::Role;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// The logged-in user as the UI shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrentUser {
    pub name: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentStatus {
    pub up: bool,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthView {
    pub database: ComponentStatus,
    pub broker: ComponentStatus,
    pub checked_at: String,
}

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "am_session";

#[cfg(feature = "ssr")]
pub mod ssr {
    //! What server functions need from the request: the services and the caller.

    use crate::error::UiError;
    pub use am_domain::roles::Operation;
    use am_services::{Principal, Services, accounts::ClientAddr};
    use leptos::prelude::*;

    pub fn services() -> Result<Services, UiError> {
        use_context::<Services>().ok_or_else(|| {
            tracing::error!("services missing from the server function context");
            UiError::Internal
        })
    }

    fn parts() -> Option<http::request::Parts> {
        use_context::<http::request::Parts>()
    }

    /// The authenticated caller, put on the request by the server's auth middleware.
    pub fn principal() -> Result<Principal, UiError> {
        parts()
            .and_then(|p| p.extensions.get::<Principal>().cloned())
            .ok_or(UiError::Unauthenticated)
    }

    /// The caller, if their role may do `operation`.
    pub fn require(operation: Operation) -> Result<Principal, UiError> {
        let p = principal()?;
        p.require(operation)?;
        Ok(p)
    }

    pub fn client_addr() -> String {
        parts()
            .and_then(|p| p.extensions.get::<ClientAddr>().map(|c| c.0.clone()))
            .unwrap_or_default()
    }

    /// The browser's `User-Agent`, recorded with a new session.
    pub fn user_agent() -> Option<String> {
        parts()?
            .headers
            .get(http::header::USER_AGENT)?
            .to_str()
            .ok()
            .map(str::to_owned)
    }

    pub fn session_cookie_secret() -> Option<String> {
        let parts = parts()?;
        let header = parts.headers.get(http::header::COOKIE)?.to_str().ok()?;
        header.split(';').find_map(|kv| {
            let (k, v) = kv.trim().split_once('=')?;
            (k == super::SESSION_COOKIE).then(|| v.to_owned())
        })
    }

    /// Whether the session cookie must be `Secure`; set by the server from its configuration.
    #[derive(Debug, Clone, Copy)]
    pub struct SecureCookies(pub bool);

    pub fn set_cookie(value: &str, max_age_secs: i64) {
        let secure = use_context::<SecureCookies>().is_some_and(|s| s.0);
        let cookie = format!(
            "{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{}",
            super::SESSION_COOKIE,
            if secure { "; Secure" } else { "" }
        );
        if let (Some(resp), Ok(v)) = (
            use_context::<leptos_axum::ResponseOptions>(),
            http::HeaderValue::from_str(&cookie),
        ) {
            resp.append_header(http::header::SET_COOKIE, v);
        }
    }
}

/// Checks the password and starts a session (an HttpOnly cookie).
#[server(prefix = "/ui", endpoint = "login")]
pub async fn login(name: String, password: String) -> Result<CurrentUser, UiError> {
    use ssr::*;
    let services = services()?;
    let principal =
        am_services::accounts::authenticate(&services, name.trim(), &password, &client_addr())
            .await?;
    let secret =
        am_services::accounts::create_session(&services, &principal, user_agent().as_deref())
            .await?;
    // The browser keeps the cookie until the absolute age; the idle end is the server's.
    set_cookie(&secret, services.settings.session_max_age.num_seconds());
    tracing::info!(user = %principal.name, "logged in");
    Ok(CurrentUser {
        name: principal.name,
        role: principal.role,
    })
}

/// Ends the session.
#[server(prefix = "/ui", endpoint = "logout")]
pub async fn logout() -> Result<(), UiError> {
    use ssr::*;
    let services = services()?;
    if let Some(secret) = session_cookie_secret() {
        am_services::accounts::delete_session(&services.db, &secret).await?;
    }
    set_cookie("", 0);
    Ok(())
}

/// Who is logged in.
#[server(prefix = "/ui", endpoint = "whoami")]
pub async fn whoami() -> Result<CurrentUser, UiError> {
    use ssr::{Operation, require};
    let p = require(Operation::Read)?;
    Ok(CurrentUser {
        name: p.name,
        role: p.role,
    })
}

/// Health of the database and the broker, for the dashboard.
#[server(prefix = "/ui", endpoint = "health")]
pub async fn health() -> Result<HealthView, UiError> {
    use ssr::*;
    require(Operation::Read)?;
    let services = services()?;
    let h = am_services::health::check(&services.db, &services.broker).await;
    Ok(HealthView {
        database: ComponentStatus {
            up: h.database.up,
            detail: h.database.detail,
        },
        broker: ComponentStatus {
            up: h.broker.up,
            detail: h.broker.detail,
        },
        checked_at: am_domain::display::time(chrono::Utc::now()),
    })
}
