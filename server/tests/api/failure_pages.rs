//! The activations and failure-log pages rendered on the server, as a browser without
//! JavaScript gets them, for a viewer, over a run recorded by the runtime from node reports.

use crate::browser::{has, page, session, tag};
use crate::{TestApp, failures_api::failed_run, on_both_backends};
use am_domain::roles::Role;

on_both_backends!(pages_drill_from_launch_setting_to_one_failure);

async fn pages_drill_from_launch_setting_to_one_failure(app: TestApp) {
    let id = failed_run(&app).await;
    let cookie = session(&app, "watcher", Role::Viewer).await;
    let ls = "demo.fail.nightly";
    let row_id = format!(r#"data-id="{id}""#);

    let path = "/activations?launch_setting=demo.fail.nightly&status=failed";
    let html = page(&app, &cookie, path).await;
    let row = [
        r#"data-test="activation-row""#,
        &row_id,
        r#"data-status="failed""#,
    ];
    tag(&html, &row, path);
    has(&html, &format!(r#"href="/failures/{ls}/{id}""#), path);

    let path = &format!("/activations/{id}");
    let html = page(&app, &cookie, path).await;
    tag(
        &html,
        &[r#"data-test="lane""#, r#"data-host="demo-b""#],
        path,
    );
    for kind in ["dispatched", "accepted", "started", "failed"] {
        has(&html, &format!(r#"data-kind="{kind}""#), path);
    }
    tag(&html, &[r#"data-test="failures-total""#, ">3"], path);
    let demo = [r#"data-error-type="DemoFailure""#, r#"data-count="2""#];
    tag(&html, &demo, path);
    has(&html, "at demo::fail (fail.rs:1)", path);

    // The drill-down, level by level, with the filter carried along.
    let path = "/failures";
    let html = page(&app, &cookie, path).await;
    let ls_id = format!(r#"data-id="{ls}""#);
    tag(&html, &[r#"data-test="launch-setting-row""#, &ls_id], path);
    has(&html, &format!(r#"href="/failures/{ls}""#), path);
    let path = &format!("/failures/{ls}?error_type=DemoFailure");
    let html = page(&app, &cookie, path).await;
    tag(&html, &[r#"data-level="activations""#], path);
    tag(&html, &[r#"data-test="level-total""#, ">2"], path);
    let next = format!(r#"href="/failures/{ls}/{id}?error_type=DemoFailure""#);
    has(&html, &next, path);
    let path = &format!("/failures/{ls}/{id}?error_type=DemoFailure");
    let html = page(&app, &cookie, path).await;
    tag(
        &html,
        &[r#"data-test="host-row""#, r#"data-id="demo-b""#],
        path,
    );
    let next = format!(r#"href="/failures/{ls}/{id}/demo-b?error_type=DemoFailure""#);
    has(&html, &next, path);
    let path = &format!("/failures/{ls}/{id}/demo-b?error_type=DemoFailure");
    let html = page(&app, &cookie, path).await;
    tag(&html, &[r#"data-level="failures""#], path);
    tag(
        &html,
        &[r#"data-test="failure-type""#, ">DemoFailure"],
        path,
    );
    tag(&html, &["details", r#"class="stack""#], path);
    tag(&html, &[r#"data-test="failure-message-id""#, ">m-"], path);
    assert!(
        !html.contains("Other happened"),
        "the filter holds at the last level"
    );
}
