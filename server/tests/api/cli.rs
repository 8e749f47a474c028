//! The `agent-manager` binary itself: no configuration at all, and the catalog and account
//! commands, as an operator runs them.

use std::{
    path::Path,
    process::{Command, Output, Stdio},
    time::Duration,
};

const BIN: &str = env!("CARGO_BIN_EXE_agent-manager");

/// A command in `dir` with no AM_* configuration but what the test gives.
fn cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(dir).args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("AM_") {
            c.env_remove(k);
        }
    }
    c
}

fn run(dir: &Path, args: &[&str]) -> Output {
    cmd(dir, args).output().expect("runs")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn temp_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("am-cli-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&d).expect("dir");
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_without_configuration_uses_sqlite_and_serves_the_login_page() {
    let dir = temp_dir();
    let port = free_port();
    // Only the port is set, so parallel tests do not collide on 3000; everything else defaults.
    let mut child = cmd(&dir, &[])
        .env("AM_LISTEN", format!("127.0.0.1:{port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let mut html = None;
    for _ in 0..100 {
        if let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            s.write_all(b"GET /login HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .await
                .expect("write");
            let mut buf = String::new();
            s.read_to_string(&mut buf).await.expect("read");
            html = Some(buf);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("exits");
    let html = html.expect("the server answered");
    assert!(html.starts_with("HTTP/1.1 200"), "{html}");
    assert!(html.contains("data-test=\"login-form\""), "{html}");
    assert!(
        dir.join("data/agent-manager.sqlite").exists(),
        "SQLite file under ./data/"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("User: admin  Password: "),
        "first admin password printed once: {stdout}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn catalog_and_account_commands() {
    let dir = temp_dir();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../demo/catalog.json");
    let demo = demo.to_str().expect("utf-8 path");

    let out = run(&dir, &["catalog", "import", demo]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&dir, &["catalog", "export", "exported.json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &Path| -> am_domain::catalog::Catalog {
        serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("parse")
    };
    let mut expected = read(Path::new(demo));
    expected.normalize();
    assert_eq!(read(&dir.join("exported.json")), expected);

    // A broken file: every error listed with its path, exit code non-zero, nothing changed.
    let mut bad: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(demo).expect("read")).expect("json");
    bad["applications"][0]["default_pool"] = "missing".into();
    bad["schedule_groups"][0]["time_zone"] = "Mars/Base".into();
    std::fs::write(dir.join("bad.json"), bad.to_string()).expect("write");
    let out = run(&dir, &["catalog", "import", "bad.json"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("applications[0].default_pool")
            && err.contains("schedule_groups[0].time_zone"),
        "{err}"
    );
    let out = run(&dir, &["catalog", "export", "again.json"]);
    assert!(out.status.success());
    assert_eq!(read(&dir.join("again.json")), expected);

    let out = run(
        &dir,
        &[
            "user",
            "create",
            "ops",
            "--role",
            "operator",
            "--password",
            "a long password",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&dir, &["user", "create", "x", "--role", "root"]);
    assert!(!out.status.success(), "unknown role refused");
    let out = run(&dir, &["token", "create", "--user", "ops"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .starts_with("amt_")
    );
    let out = run(&dir, &["token", "create", "--user", "nobody"]);
    assert!(!out.status.success(), "unknown user refused");
    // A viewer token for a scraper, for a day; then revoked (the first token is id 1).
    let out = run(
        &dir,
        &[
            "token",
            "create",
            "--user",
            "ops",
            "--name",
            "scraper",
            "--role",
            "viewer",
            "--expires",
            "1d",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(
        &dir,
        &["token", "create", "--user", "ops", "--role", "admin"],
    );
    assert!(!out.status.success(), "a role above the user's refused");
    assert!(String::from_utf8_lossy(&out.stderr).contains("role"));
    let out = run(
        &dir,
        &["token", "create", "--user", "ops", "--expires", "soon"],
    );
    assert!(!out.status.success(), "a bad duration refused");
    let out = run(&dir, &["token", "revoke", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("revoked token 1"));
    let out = run(&dir, &["token", "revoke", "999"]);
    assert!(!out.status.success(), "an unknown token refused");
    let _ = std::fs::remove_dir_all(dir);
}

/// Commands that act on an installation, run where there is none: each names where it looked
/// and how to point elsewhere, creates nothing, and shows no stack trace.
#[test]
fn account_commands_outside_an_installation_name_the_database_and_create_nothing() {
    let dir = temp_dir();
    for args in [
        &["token", "create", "--user", "admin"][..],
        &["token", "revoke", "1"],
        &["user", "create", "ops", "--role", "operator"],
        &["catalog", "export", "-"],
    ] {
        let out = cmd(&dir, args)
            .env("RUST_BACKTRACE", "1")
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        let file = dir.join("data").join("agent-manager.sqlite");
        assert!(
            err.contains(&format!("no database file at {}", file.display()))
                && err.contains("AM_DATABASE_URL"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains("stack backtrace") && !err.contains("Stack backtrace"),
            "{err}"
        );
        assert!(!dir.join("data").exists(), "{args:?} created a database");
    }
    // A file that is there but holds no installation: refused as such.
    std::fs::write(dir.join("empty.sqlite"), b"").expect("an empty file");
    let out = cmd(&dir, &["token", "create", "--user", "admin"])
        .env("AM_DATABASE_URL", "sqlite://empty.sqlite")
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("holds no Agent Manager installation"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
