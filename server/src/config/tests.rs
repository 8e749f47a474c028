//! The settings read from the environment and the file, with their errors.

use super::*;
use am_services::db::DEFAULT_DATABASE_URL;
use std::collections::HashMap;

fn load(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect();
    Config::load(&move |k| map.get(k).cloned(), None)
}

#[test]
fn allowed_hosts_are_host_names() {
    let c = load(&[
        ("AM_ALLOWED_HOSTS", "manager.example.com, *.corp.example"),
        ("AM_ALLOWED_ORIGINS", "https://ops.example.org"),
    ])
    .expect("valid");
    for host in ["manager.example.com", "am.corp.example", "ops.example.org"] {
        assert!(c.http.allowed_hosts.allows(host), "{host}");
    }
    assert!(!c.http.allowed_hosts.allows("evil.example"));
    let e = load(&[("AM_ALLOWED_HOSTS", "http://x")]).expect_err("a URL is not a host");
    assert!(
        e.to_string()
            .starts_with("AM_ALLOWED_HOSTS: `http://x` is not a host name"),
        "{e}"
    );
}

#[test]
fn an_smtp_relay_is_checked_and_its_password_never_shown() {
    assert!(load(&[]).expect("defaults").runtime.smtp.is_none());
    let c = load(&[("AM_SMTP_URL", "smtp://mailer:s3cret@127.0.0.1:2525")]).expect("valid");
    let smtp = c.runtime.smtp.expect("a relay");
    assert_eq!(smtp.from, DEFAULT_SMTP_FROM);
    let shown = format!("{smtp:?}");
    assert!(
        !shown.contains("s3cret") && shown.contains("127.0.0.1:2525"),
        "{shown}"
    );
    let e = load(&[("AM_SMTP_URL", "http://mailer:s3cret@x")]).expect_err("not smtp");
    assert!(
        e.to_string().starts_with("AM_SMTP_URL: not an SMTP relay")
            && !e.to_string().contains("s3cret"),
        "{e}"
    );
    let e = load(&[("AM_SMTP_URL", "smtp://mail.example.com?tls=maybe")])
        .expect_err("unknown tls mode");
    assert!(e.to_string().starts_with("AM_SMTP_URL:"), "{e}");
    let e = load(&[
        ("AM_SMTP_URL", "smtps://mail.example.com"),
        ("AM_SMTP_FROM", "nobody"),
    ])
    .expect_err("bad sender");
    assert!(e.to_string().starts_with("AM_SMTP_FROM: `nobody`"), "{e}");
    let c = load(&[
        ("AM_SMTP_URL", "smtp://mail.example.com:587?tls=required"),
        ("AM_SMTP_FROM", "Ops <ops@example.com>"),
    ])
    .expect("valid");
    assert_eq!(
        c.runtime.smtp.map(|s| s.from).as_deref(),
        Some("Ops <ops@example.com>")
    );
}

#[test]
fn sessions_end_when_idle_and_at_an_age_no_shorter() {
    let c = load(&[]).expect("defaults");
    assert_eq!(c.http.session_idle.as_secs(), 12 * 3600);
    assert_eq!(c.http.session_max_age.as_secs(), 7 * 86_400);
    let c = load(&[("AM_SESSION_IDLE", "30m"), ("AM_SESSION_MAX_AGE", "8h")]).expect("valid");
    assert_eq!(c.http.session_idle.as_secs(), 1800);
    let e = load(&[("AM_SESSION_MAX_AGE", "1h")]).expect_err("shorter than idle");
    assert!(
        e.to_string().starts_with("AM_SESSION_MAX_AGE: shorter"),
        "{e}"
    );
    let e = load(&[("AM_SESSION_IDLE", "0s")]).expect_err("zero");
    assert!(e.to_string().starts_with("AM_SESSION_IDLE:"), "{e}");
}

#[test]
fn defaults_need_no_configuration() {
    let c = load(&[]).expect("defaults");
    assert_eq!(c.database.url, DEFAULT_DATABASE_URL);
    assert_eq!(c.broker.url, DEFAULT_AMQP_URL);
    assert_eq!(c.http.listen.to_string(), DEFAULT_LISTEN);
    assert!(c.admin.initial_password.is_none());
}

#[test]
fn bad_values_name_their_variable() {
    let e = load(&[("AM_LISTEN", "localhost")]).expect_err("bad listen");
    assert!(e.to_string().starts_with("AM_LISTEN: `localhost`"), "{e}");
    let e = load(&[("AM_AMQP_URL", "http://x")]).expect_err("bad scheme");
    assert!(e.to_string().starts_with("AM_AMQP_URL:"), "{e}");
    // A cluster's members: each one checked, the bad one named without its password.
    let c = load(&[(
        "AM_AMQP_URL",
        "amqp://u:p@r1:5672/%2f, amqp://u:p@r2:5672/%2f",
    )])
    .expect("a list of members");
    assert!(c.broker.url.contains("r2"));
    let e = load(&[(
        "AM_AMQP_URL",
        "amqp://u:p@r1:5672/%2f,amqp://u:hidden@r2:port/%2f",
    )])
    .expect_err("a bad member");
    assert!(
        e.to_string().contains("address 2") && !e.to_string().contains("hidden"),
        "{e}"
    );
    let e = load(&[("AM_DATABASE_URL", "mysql://u:pw@h/db")]).expect_err("bad db");
    assert!(
        e.to_string().contains("AM_DATABASE_URL") && !e.to_string().contains("pw"),
        "{e}"
    );
    let e = load(&[("AM_ADMIN_PASSWORD", "short")]).expect_err("short");
    assert!(e.to_string().starts_with("AM_ADMIN_PASSWORD:"), "{e}");
    let e = load(&[("AM_NODE_TIMEOUT", "soon")]).expect_err("bad duration");
    assert!(e.to_string().starts_with("AM_NODE_TIMEOUT: `soon`"), "{e}");
    let e = load(&[("AM_METRICS_PUBLIC", "maybe")]).expect_err("bad flag");
    assert!(
        e.to_string().starts_with("AM_METRICS_PUBLIC: `maybe`"),
        "{e}"
    );
    assert!(!load(&[]).expect("defaults").http.metrics_public);
    assert!(
        load(&[("AM_METRICS_PUBLIC", "true")])
            .expect("valid")
            .http
            .metrics_public
    );
    let e = load(&[("AM_PREFIX", "Not Valid")]).expect_err("bad prefix");
    assert!(e.to_string().starts_with("AM_PREFIX:"), "{e}");
    let c = load(&[("AM_NODE_TIMEOUT", "5s"), ("AM_PREFIX", "t-1")]).expect("valid");
    assert_eq!(c.runtime.node_timeout, std::time::Duration::from_secs(5));
    assert_eq!(c.broker.prefix, "t-1");
    assert_eq!(c.runtime.wait_timeout, std::time::Duration::from_secs(600));
}

#[test]
fn failure_retention_is_a_positive_number_of_days() {
    let day = std::time::Duration::from_secs(86_400);
    assert_eq!(
        load(&[]).expect("defaults").runtime.failure_retention,
        day * 30
    );
    let c = load(&[("AM_FAILURE_RETENTION_DAYS", "7")]).expect("valid");
    assert_eq!(c.runtime.failure_retention, day * 7);
    for bad in ["0", "-1", "thirty", "1.5", "7d", "36501"] {
        let e = load(&[("AM_FAILURE_RETENTION_DAYS", bad)]).expect_err(bad);
        assert!(
            e.to_string().starts_with(&format!(
                "AM_FAILURE_RETENTION_DAYS: `{bad}` is not a number of days"
            )),
            "{e}"
        );
    }

    let dir = std::env::temp_dir().join(format!("am-cfg-retention-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("am.toml");
    // In the file as a TOML number or as the environment's string.
    for text in [
        "failure_retention_days = 14\n",
        "failure_retention_days = \"14\"\n",
    ] {
        std::fs::write(&path, text).expect("write");
        let c = Config::load(&|_| None, Some(&path)).expect(text);
        assert_eq!(c.runtime.failure_retention, day * 14, "{text}");
    }
    let env = |k: &str| (k == "AM_FAILURE_RETENTION_DAYS").then(|| "3".to_owned());
    let c = Config::load(&env, Some(&path)).expect("env wins");
    assert_eq!(c.runtime.failure_retention, day * 3);
    std::fs::write(&path, "failure_retention_days = 0\n").expect("write");
    let e = Config::load(&|_| None, Some(&path)).expect_err("zero in the file");
    assert!(
        matches!(&e, ConfigError::Invalid { key, .. } if key.ends_with("(failure_retention_days)")),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn file_values_are_used_and_env_wins() {
    let dir = std::env::temp_dir().join(format!("am-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("am.toml");
    std::fs::write(
        &path,
        "listen = \"127.0.0.1:4000\"\namqp_url = \"amqp://h:5672/%2f\"\n",
    )
    .expect("write");
    let env = |k: &str| (k == "AM_LISTEN").then(|| "127.0.0.1:5000".to_owned());
    let c = Config::load(&env, Some(&path)).expect("loads");
    assert_eq!(c.http.listen.to_string(), "127.0.0.1:5000");
    assert_eq!(c.broker.url, "amqp://h:5672/%2f");
    std::fs::write(&path, "listen = 3\n").expect("write");
    let e = Config::load(&|_| None, Some(&path)).expect_err("bad file");
    assert!(matches!(e, ConfigError::File { .. }), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}
