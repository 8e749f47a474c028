use crate::{TestApp, on_both_backends};
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};

on_both_backends!(
    pages_need_a_login_and_the_login_page_renders_on_the_server,
    every_page_needs_a_login_and_opens_for_every_role,
);

/// Generated from the app's route list, so a new page cannot be forgotten: without a session
/// every page but the login sends to the login; with one, every role reads every page (what a
/// role may not do is left out of the page, and refused by the server functions), and no
/// page, with an id that names nothing, fails on the server.
async fn every_page_needs_a_login_and_opens_for_every_role(app: TestApp) {
    use am_domain::roles::Role;
    let paths: Vec<String> = leptos_axum::generate_route_list(app::App)
        .iter()
        .map(|r| {
            r.path()
                .split('/')
                .map(|seg| {
                    if seg.starts_with(':') || seg.starts_with('{') || seg.starts_with('*') {
                        "x"
                    } else {
                        seg
                    }
                })
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    assert!(paths.len() > 10, "{paths:?}");
    let mut wrong = Vec::new();
    for path in &paths {
        let r = app.send(crate::browser::with_cookie(path, "")).await;
        let to_login = r.status.is_redirection()
            && r.headers
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|l| l.starts_with("/login"));
        if path != "/login" && !to_login {
            wrong.push(format!("{path} without a session: {}", r.status));
        }
    }
    for role in [Role::Viewer, Role::Operator, Role::Admin] {
        let cookie = crate::browser::session(&app, &format!("page-{role}"), role).await;
        for path in paths.iter().filter(|p| p.as_str() != "/login") {
            let r = app.send(crate::browser::with_cookie(path, &cookie)).await;
            let refused = r.status == StatusCode::FORBIDDEN || r.status.is_redirection();
            if r.status.is_server_error() || refused {
                wrong.push(format!("{path} as {role}: {}", r.status));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

async fn pages_need_a_login_and_the_login_page_renders_on_the_server(app: TestApp) {
    let get = |path: &str, cookie: Option<&str>| {
        let mut b = Request::builder()
            .uri(path)
            .header(header::HOST, "127.0.0.1:3000");
        if let Some(c) = cookie {
            b = b.header(header::COOKIE, c);
        }
        b.body(Body::empty()).expect("request")
    };
    let r = app.send(get("/", None)).await;
    assert!(r.status.is_redirection());
    assert_eq!(
        r.headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok()),
        Some("/login")
    );
    let r = app.send(get("/launch-settings", None)).await;
    assert!(r.status.is_redirection());

    let r = app.send(get("/login", None)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.text().contains("data-test=\"login-form\""),
        "{}",
        r.text()
    );

    // Log in through the login server function, as the browser's form does.
    am_services::accounts::ensure_first_admin(&app.services.db, Some("the admin password"))
        .await
        .expect("admin");
    let login = Request::builder()
        .method("POST")
        .uri("/ui/login")
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::ORIGIN, "http://127.0.0.1:3000")
        .header(header::ACCEPT, "application/json")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("name=admin&password=the+admin+password"))
        .expect("request");
    let r = app.send(login).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let set_cookie = r
        .headers
        .get(header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .expect("cookie")
        .to_owned();
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"),
        "{set_cookie}"
    );
    let cookie = set_cookie.split(';').next().expect("pair").to_owned();

    let r = app.send(get("/", Some(&cookie))).await;
    assert_eq!(r.status, StatusCode::OK);
    let html = r.text();
    assert!(html.contains("Dashboard"), "{html}");
    assert!(html.contains("data-test=\"nav-schedule-groups\""), "{html}");

    // Logged in, the login page sends you home.
    let r = app.send(get("/login", Some(&cookie))).await;
    assert!(r.status.is_redirection());
}
