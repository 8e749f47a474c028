//! Headers that tell browsers what the manager's answers may do (docs/operations.md,
//! "Browser safety"): no content sniffing, no framing, referrers only to the manager itself,
//! HTTPS only once served over it, and a Content-Security-Policy on every answer.
//!
//! Pages carry a policy whose nonce admits their own hydration scripts and nothing else
//! inline (`app::shell` sets it while rendering); every other answer gets the same policy
//! without a nonce, so a JSON or an error page opened in a browser runs no script at all.

use crate::state::AppState;
use axum::{
    extract::{Request, State},
    http::{HeaderValue, header},
    middleware::Next,
    response::Response,
};

/// How long browsers remember to use HTTPS only (one year), sent when cookies are `Secure`.
const HSTS: &str = "max-age=31536000";

pub async fn middleware(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    if !h.contains_key(header::CONTENT_SECURITY_POLICY)
        && let Ok(v) = HeaderValue::from_str(&app::content_security_policy(None))
    {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    if state.http.secure_cookies {
        h.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static(HSTS),
        );
    }
    res
}
