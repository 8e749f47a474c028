use crate::browser::{page, session};
use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::roles::Role;
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};

on_both_backends!(
    api_needs_a_token_and_the_right_role,
    browser_writes_need_an_allowed_origin,
    user_text_in_a_textarea_is_escaped,
    a_page_with_classifier_parameters_renders_without_a_panic,
    only_configured_host_names_are_served,
    form_posts_never_redirect_to_another_site,
    malformed_server_function_input_is_a_400,
    too_large_bodies_are_a_413,
    oversized_catalogs_are_refused_with_the_limit,
    every_answer_tells_the_browser_what_it_may_do,
    sessions_are_listed_and_revoked_by_their_owner,
);

/// A form post from the manager's own page.
fn form_post(path: &str) -> axum::http::request::Builder {
    Request::builder()
        .method("POST")
        .uri(path)
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::ORIGIN, "http://127.0.0.1:3000")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
}

async fn api_needs_a_token_and_the_right_role(app: TestApp) {
    let r = app.api("GET", "/api/v1/catalog", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.json()["error"].as_str().is_some());
    assert_eq!(
        r.headers
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().ok()),
        Some(Some("Bearer"))
    );

    let r = app
        .api("GET", "/api/v1/catalog", Some("amt_not-a-real-token"), None)
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    let viewer = app.token(Role::Viewer).await;
    let r = app.api("GET", "/api/v1/catalog", Some(&viewer), None).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = app
        .api(
            "PUT",
            "/api/v1/catalog",
            Some(&viewer),
            Some(demo_catalog()),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text());
    assert!(
        r.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("admin"))
    );
    let pool = serde_json::json!({"id": "p1", "hosts": []});
    let r = app
        .api("POST", "/api/v1/pools", Some(&viewer), Some(pool.clone()))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    let operator = app.token(Role::Operator).await;
    let r = app
        .api("POST", "/api/v1/pools", Some(&operator), Some(pool.clone()))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    let admin = app.token(Role::Admin).await;
    let r = app
        .api("POST", "/api/v1/pools", Some(&admin), Some(pool))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
}

async fn browser_writes_need_an_allowed_origin(app: TestApp) {
    let form = |origin: Option<&str>| {
        let mut b = Request::builder()
            .method("POST")
            .uri("/ui/login")
            .header(header::HOST, "127.0.0.1:3000")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(o) = origin {
            b = b.header(header::ORIGIN, o);
        }
        b.body(Body::from("name=admin&password=wrong-password"))
            .expect("request")
    };
    assert_eq!(app.send(form(None)).await.status, StatusCode::FORBIDDEN);
    assert_eq!(
        app.send(form(Some("http://evil.example"))).await.status,
        StatusCode::FORBIDDEN
    );
    // Same origin: reaches the server function, which rejects the password.
    let r = app.send(form(Some("http://127.0.0.1:3000"))).await;
    assert_ne!(r.status, StatusCode::FORBIDDEN, "{}", r.text());
}

/// Regression: a textarea's content was written unescaped, so a filter value closing the
/// textarea ran a script in every browser that opened the launch setting.
async fn user_text_in_a_textarea_is_escaped(app: TestApp) {
    let payload = "</textarea><script>alert('xss')</script>";
    let mut catalog = demo_catalog();
    let ls = catalog["launch_settings"]
        .as_array_mut()
        .and_then(|all| all.iter_mut().find(|ls| ls["id"] == "demo.echo.1"))
        .expect("demo.echo.1");
    ls["filter"] = serde_json::json!({ "headers": { "tenant": payload } });
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(catalog))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());

    let cookie = session(&app, "vic", Role::Viewer).await;
    let html = page(&app, &cookie, "/launch-settings/demo.echo.1").await;
    assert!(!html.contains("<script>alert("), "script in the page");
    assert!(
        html.contains("tenant=&lt;/textarea&gt;&lt;script&gt;alert('xss')&lt;/script&gt;"),
        "the filter is shown as text"
    );
}

/// Regression: the classifier-label lookup was dispatched while rendering on the server,
/// which called a browser-only function and panicked a worker twice per page load.
async fn a_page_with_classifier_parameters_renders_without_a_panic(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let panics = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = panics.clone();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        previous(info);
    }));
    let cookie = session(&app, "vic", Role::Viewer).await;
    // demo.echo.1 has `organisations: [acme, globex]`, a classifier parameter.
    let html = page(&app, &cookie, "/launch-settings/demo.echo.1").await;
    assert!(html.contains("acme"), "the codes are shown");
    let _ = std::panic::take_hook();
    assert_eq!(
        panics.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "rendering panicked"
    );
}

/// DNS rebinding: a hostile name pointed at the manager passes the Origin check (the origin
/// is the hostile name), so the Host itself must be one the manager answers to.
async fn only_configured_host_names_are_served(app: TestApp) {
    let get = |host: &'static str, path: &'static str| {
        Request::builder()
            .uri(path)
            .header(header::HOST, host)
            .body(Body::empty())
            .expect("request")
    };
    let r = app.send(get("evil.example", "/login")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("evil.example") && e.contains("AM_ALLOWED_HOSTS")),
        "{}",
        r.text()
    );
    let rebound = Request::builder()
        .method("POST")
        .uri("/ui/login")
        .header(header::HOST, "evil.example:3000")
        .header(header::ORIGIN, "http://evil.example:3000")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("name=admin&password=wrong-password"))
        .expect("request");
    assert_eq!(app.send(rebound).await.status, StatusCode::BAD_REQUEST);
    // Configured names, IP literals and localhost are served; probes under any name.
    for host in [
        "manager.example.com",
        "MANAGER.example.com:443",
        "10.0.0.7:3000",
        "localhost:3000",
    ] {
        assert_eq!(
            app.send(get(host, "/login")).await.status,
            StatusCode::OK,
            "{host}"
        );
    }
    assert_eq!(
        app.send(get("lb.internal", "/healthz")).await.status,
        StatusCode::OK
    );
    let r = app.send(get("lb.internal", "/readyz")).await;
    assert_ne!(r.status, StatusCode::BAD_REQUEST, "{}", r.text());
}

/// A plain form post is answered with a redirect back to its Referer: never to another site.
async fn form_posts_never_redirect_to_another_site(app: TestApp) {
    for (referer, expected) in [
        ("http://evil.example/phish", "/"),
        ("http://127.0.0.1:3000/login", "http://127.0.0.1:3000/login"),
    ] {
        let req = form_post("/ui/login")
            .header(header::ACCEPT, "text/html")
            .header(header::REFERER, referer)
            .body(Body::from("name=nobody&password=wrong-password"))
            .expect("request");
        let r = app.send(req).await;
        assert!(r.status.is_redirection(), "{referer}: {}", r.status);
        let location = r
            .headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(
            location.starts_with(expected) && !location.contains("evil"),
            "{referer} → {location}"
        );
    }
}

async fn malformed_server_function_input_is_a_400(app: TestApp) {
    // A form post without the password field.
    let req = form_post("/ui/login")
        .header(header::ACCEPT, "application/json")
        .body(Body::from("name=admin"))
        .expect("request");
    let r = app.send(req).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text());
    // A JSON server function given something that is not JSON, and JSON of the wrong shape.
    let cookie = session(&app, "vic", Role::Viewer).await;
    for body in ["{not json", r#"{"application": 7}"#] {
        let req = Request::builder()
            .method("POST")
            .uri("/ui/classifier_labels")
            .header(header::HOST, "127.0.0.1:3000")
            .header(header::ORIGIN, "http://127.0.0.1:3000")
            .header(header::COOKIE, &cookie)
            .header(header::ACCEPT, "application/json")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .expect("request");
        let r = app.send(req).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.text());
        assert!(r.text().contains("malformed"), "{body}: {}", r.text());
    }
}

async fn too_large_bodies_are_a_413(app: TestApp) {
    let big = format!("name=admin&password={}", "x".repeat(3 * 1024 * 1024));
    // Declared in Content-Length …
    let req = form_post("/ui/login")
        .header(header::CONTENT_LENGTH, big.len())
        .body(Body::from(big.clone()))
        .expect("request");
    assert_eq!(app.send(req).await.status, StatusCode::PAYLOAD_TOO_LARGE);
    // … or not (a chunked body).
    let req = form_post("/ui/login")
        .body(Body::from(big))
        .expect("request");
    let r = app.send(req).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.text());
    assert!(r.text().contains("1048576 bytes"), "{}", r.text());

    let admin = app.token(Role::Admin).await;
    let pool = serde_json::json!({"id": "p1", "title": "x".repeat(3 * 1024 * 1024), "hosts": []});
    let r = app
        .api("POST", "/api/v1/pools", Some(&admin), Some(pool))
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.text());
    assert!(r.text().contains("2097152 bytes"), "{}", r.text());
}

/// Limits on the catalog: a document that exceeds one is refused whole with the path and the
/// limit, and the catalog is unchanged.
async fn oversized_catalogs_are_refused_with_the_limit(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let mut catalog = demo_catalog();
    catalog["pools"] = (0..10_001)
        .map(|i| serde_json::json!({"id": format!("p{i}"), "hosts": []}))
        .collect();
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(catalog))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    let j = r.json();
    assert_eq!(j["errors"][0]["path"], "pools");
    assert!(
        j["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 10000"))
    );

    let mut catalog = demo_catalog();
    catalog["applications"][0]["title"] = serde_json::json!("t".repeat(1_000_000));
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(catalog))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert_eq!(r.json()["errors"][0]["path"], "applications[0].title");

    let r = app.api("GET", "/api/v1/catalog", Some(&admin), None).await;
    assert_eq!(
        r.json()["pools"].as_array().map(Vec::len),
        Some(0),
        "nothing was written"
    );
}

/// Browser safety headers: a page's policy admits its own hydration scripts by their nonce
/// and nothing else inline; every other answer gets the policy without a nonce.
async fn every_answer_tells_the_browser_what_it_may_do(app: TestApp) {
    let header_of = |r: &crate::TestResponse, name: header::HeaderName| {
        r.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let login = app
        .send(
            Request::builder()
                .uri("/login")
                .header(header::HOST, "127.0.0.1:3000")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
    assert_eq!(login.status, StatusCode::OK);
    let csp = header_of(&login, header::CONTENT_SECURITY_POLICY);
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap_or_else(|| panic!("a nonce in {csp}"));
    assert!(nonce.len() >= 16, "{nonce}");
    for part in [
        "default-src 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
        "base-uri 'none'",
        "'wasm-unsafe-eval'",
    ] {
        assert!(csp.contains(part), "{part} in {csp}");
    }
    let scripts = csp
        .split(';')
        .find(|d| d.trim().starts_with("script-src"))
        .unwrap_or_default();
    assert!(
        !scripts.contains("unsafe-inline"),
        "no inline script without the nonce: {scripts}"
    );
    let html = login.text();
    assert!(
        html.contains(&format!("nonce=\"{nonce}\"")),
        "the hydration script carries the page's nonce"
    );
    assert_eq!(header_of(&login, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
    assert_eq!(header_of(&login, header::X_FRAME_OPTIONS), "DENY");
    assert_eq!(header_of(&login, header::REFERRER_POLICY), "same-origin");
    assert_eq!(
        header_of(&login, header::STRICT_TRANSPORT_SECURITY),
        "",
        "no HSTS over plain HTTP"
    );

    // Two loads, two nonces.
    let again = app
        .send(
            Request::builder()
                .uri("/login")
                .header(header::HOST, "127.0.0.1:3000")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
    assert!(!header_of(&again, header::CONTENT_SECURITY_POLICY).contains(nonce));

    // The API and probes: the policy without any nonce.
    let api = app.api("GET", "/api/v1/catalog", None, None).await;
    let csp = header_of(&api, header::CONTENT_SECURITY_POLICY);
    assert!(
        csp.contains("frame-ancestors 'none'") && !csp.contains("nonce-"),
        "{csp}"
    );
    assert_eq!(header_of(&api, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
}

/// Sessions over the API: one's own, the cookie's marked current, another's not found, and a
/// revoked one signed out at once.
async fn sessions_are_listed_and_revoked_by_their_owner(app: TestApp) {
    let laptop = session(&app, "sam", Role::Viewer).await;
    let phone = crate::browser::login(&app, "sam").await;
    let with = |method: &str, path: &str, cookie: &str| {
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "127.0.0.1:3000")
            .header(header::ORIGIN, "http://127.0.0.1:3000")
            .header(header::COOKIE, cookie)
            .body(Body::empty())
            .expect("request")
    };
    let r = app.send(with("GET", "/api/v1/sessions", &laptop)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let list = r.json();
    let rows = list.as_array().expect("a list");
    assert_eq!(rows.len(), 2, "{list}");
    assert_eq!(rows.iter().filter(|s| s["current"] == true).count(), 1);
    let other = rows
        .iter()
        .find(|s| s["current"] == false)
        .and_then(|s| s["handle"].as_str())
        .expect("the phone's handle")
        .to_owned();

    // Someone else cannot end it.
    let eve = app.token(Role::Admin).await;
    let r = app
        .api(
            "DELETE",
            &format!("/api/v1/sessions/{other}"),
            Some(&eve),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text());
    assert_eq!(
        app.send(with("GET", "/api/v1/sessions", &phone))
            .await
            .status,
        StatusCode::OK
    );

    let r = app
        .send(with(
            "DELETE",
            &format!("/api/v1/sessions/{other}"),
            &laptop,
        ))
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    assert_eq!(
        app.send(with("GET", "/api/v1/sessions", &phone))
            .await
            .status,
        StatusCode::UNAUTHORIZED,
        "the phone is signed out"
    );
    assert_eq!(
        app.send(with("GET", "/api/v1/sessions", &laptop))
            .await
            .status,
        StatusCode::OK
    );
    let doc = app
        .api("GET", "/api/v1/openapi.json", Some(&eve), None)
        .await
        .json();
    assert!(doc["paths"]["/api/v1/sessions"]["get"].is_object());
    assert!(doc["paths"]["/api/v1/sessions/{handle}"]["delete"].is_object());
    let schemas = &doc["components"]["schemas"];
    assert!(schemas["TestTarget"]["properties"]["channel"].is_object());
    assert!(schemas["Application"]["properties"]["notify_email"].is_object());
}
