use crate::{TestApp, on_both_backends};
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};

on_both_backends!(pages_need_a_login_and_the_login_page_renders_on_the_server);

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
