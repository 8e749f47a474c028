//! A browser without JavaScript: a session started by the login form, and server-rendered
//! pages read with its cookie.

use crate::TestApp;
use am_domain::roles::Role;
use am_services::{Principal, accounts};
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};

/// A new user `name` with `role`, logged in through the login form; returns the session
/// cookie (`name=value`).
pub async fn session(app: &TestApp, name: &str, role: Role) -> String {
    accounts::create_user(
        &app.services.db,
        &Principal::cli(),
        name,
        "a long enough password",
        role,
    )
    .await
    .expect("user");
    login(app, name).await
}

/// Another session of existing user `name`, logged in through the login form.
pub async fn login(app: &TestApp, name: &str) -> String {
    let login = Request::builder()
        .method("POST")
        .uri("/ui/login")
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::ORIGIN, "http://127.0.0.1:3000")
        .header(header::ACCEPT, "application/json")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!(
            "name={name}&password=a+long+enough+password"
        )))
        .expect("request");
    let r = app.send(login).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.headers
        .get(header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("cookie")
        .to_owned()
}

/// A GET of `path` with the session cookie.
pub fn with_cookie(path: &str, cookie: &str) -> Request<Body> {
    Request::builder()
        .uri(path)
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::COOKIE, cookie)
        .body(Body::empty())
        .expect("request")
}

/// The page's HTML; it must answer 200.
pub async fn page(app: &TestApp, cookie: &str, path: &str) -> String {
    page_with(app, cookie, path, StatusCode::OK).await
}

/// The page, answered with `status` (a failed server function sets the page's status).
pub async fn page_with(app: &TestApp, cookie: &str, path: &str, status: StatusCode) -> String {
    let r = app.send(with_cookie(path, cookie)).await;
    assert_eq!(r.status, status, "{path}: {}", r.text());
    r.text()
}

pub fn has(html: &str, needle: &str, path: &str) {
    assert!(html.contains(needle), "{path} lacks {needle}:\n{html}");
}

pub fn lacks(html: &str, needle: &str, path: &str) {
    assert!(!html.contains(needle), "{path} has {needle}:\n{html}");
}

/// Some element's start tag and text (up to the next tag) hold every one of `parts`.
pub fn tag(html: &str, parts: &[&str], path: &str) {
    assert!(
        html.split('<').any(|t| parts.iter().all(|p| t.contains(p))),
        "{path} has no element with {parts:?}:\n{html}"
    );
}
