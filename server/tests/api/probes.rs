use crate::TestApp;
use am_services::{health::BrokerStatus, testing::Backend};
use axum::http::StatusCode;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn healthz_is_public_and_alive() {
    let app = TestApp::new(Backend::Sqlite).await;
    let r = app.api("GET", "/healthz", None, None).await;
    assert_eq!(r.status, StatusCode::OK);
}

async fn wait_for(status: &BrokerStatus, up: bool) {
    for _ in 0..100 {
        if status.get().up == up && status.get().detail != "not connected yet" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("broker state never became up={up}: {:?}", status.get());
}

/// A prefix of its own whose queues expire, so the shared broker keeps nothing.
fn throwaway_topology() -> agent_client::Topology {
    agent_client::Topology::new(format!("t-{}", uuid::Uuid::new_v4().simple()))
        .ephemeral(std::time::Duration::from_secs(30))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_reports_a_real_broker_up() {
    let status = BrokerStatus::default();
    let stop = CancellationToken::new();
    let url = std::env::var("AM_TEST_AMQP_URL")
        .unwrap_or_else(|_| server::config::DEFAULT_AMQP_URL.into());
    let (link, _) = server::broker::link();
    let task = tokio::spawn(server::broker::supervise(
        agent_client::BrokerAddresses::parse(&url).expect("address"),
        throwaway_topology(),
        status.clone(),
        link,
        Default::default(),
        stop.clone(),
    ));
    wait_for(&status, true).await;
    let app = TestApp::with_broker(Backend::Sqlite, status).await;
    let r = app.api("GET", "/readyz", None, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let j = r.json();
    assert_eq!(j["ready"], true);
    assert_eq!(j["database"]["up"], true);
    assert_eq!(j["broker"]["up"], true);
    stop.cancel();
    task.await.expect("supervisor ends");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_reports_an_unreachable_broker_and_keeps_serving() {
    let status = BrokerStatus::default();
    let stop = CancellationToken::new();
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let (link, _) = server::broker::link();
    let task = tokio::spawn(server::broker::supervise(
        agent_client::BrokerAddresses::parse("amqp://guest:secret@127.0.0.1:1/%2f")
            .expect("address"),
        throwaway_topology(),
        status.clone(),
        link,
        Default::default(),
        stop.clone(),
    ));
    wait_for(&status, false).await;
    let app = TestApp::with_broker(Backend::Sqlite, status).await;
    let r = app.api("GET", "/readyz", None, None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    let j = r.json();
    assert_eq!(j["ready"], false);
    assert_eq!(j["database"]["up"], true);
    assert_eq!(j["broker"]["up"], false);
    assert!(
        j["broker"].get("detail").is_none() && j["database"].get("detail").is_none(),
        "an anonymous probe sees up or down, nothing of the infrastructure: {j}"
    );
    let viewer = app.token(am_domain::roles::Role::Viewer).await;
    let r = app.api("GET", "/readyz", Some(&viewer), None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    let j = r.json();
    let detail = j["broker"]["detail"].as_str().expect("detail");
    assert!(detail.contains("cannot connect"), "{detail}");
    assert!(!detail.contains("secret"), "credentials leak: {detail}");
    // The API still answers while the broker is down.
    assert_eq!(
        app.api("GET", "/healthz", None, None).await.status,
        StatusCode::OK
    );
    stop.cancel();
    task.await.expect("supervisor ends");
}
