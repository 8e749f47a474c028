//! The subcommands of `agent-manager`. Each reads the configuration once and works directly on
//! the database; `serve` also runs the HTTP server and the broker connection.

use crate::{broker, config::Config, http, jobs, runtime, state::AppState};
use agent_client::Topology;
use am_domain::{catalog::Catalog, roles::Role};
use am_services::runtime::{NotifySettings, RuntimeConfig};
use am_services::{
    Principal, ServiceError, Services, Settings, accounts, catalog, db, health::BrokerStatus,
};
use anyhow::{Context, Result, bail};
use sea_orm::DatabaseConnection;
use std::{net::SocketAddr, path::Path, sync::Arc};
use tokio_util::sync::CancellationToken;

/// Opens the database, creating and migrating it as needed (`serve`, `migrate`, an import).
async fn open_db(config: &Config) -> Result<DatabaseConnection> {
    let url = &config.database.url;
    tracing::info!(database = %db::describe(url), "opening the database");
    let conn = db::connect(url).await?;
    db::migrate(&conn).await?;
    Ok(conn)
}

/// Opens the database of an existing installation, for commands that act on one: a database
/// that is not there is named, never created.
async fn open_existing(config: &Config) -> Result<DatabaseConnection> {
    let url = &config.database.url;
    tracing::info!(database = %db::describe(url), "opening the database");
    Ok(db::connect_existing(url).await?)
}

/// Errors from services, shown in full (this is the operator's own terminal).
fn explain(e: ServiceError) -> anyhow::Error {
    match e {
        ServiceError::Invalid(errors) => {
            let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
            anyhow::anyhow!("{} error(s):\n{}", errors.len(), lines.join("\n"))
        }
        other => anyhow::anyhow!(other),
    }
}

pub async fn migrate(config: &Config) -> Result<()> {
    open_db(config).await?;
    println!("database is up to date");
    Ok(())
}

pub async fn serve(config: Config) -> Result<()> {
    let conn = open_db(&config).await?;
    if let Some(generated) =
        accounts::ensure_first_admin(&conn, config.admin.initial_password.as_deref())
            .await
            .map_err(explain)?
    {
        // Printed once, on the terminal only: it is not logged.
        println!(
            "\n  First admin created. User: admin  Password: {generated}\n  (shown only now; set AM_ADMIN_PASSWORD to choose it)\n"
        );
    }

    let broker_status = BrokerStatus::default();
    let settings = Settings {
        node_timeout: chrono_duration(config.runtime.node_timeout),
        session_ttl: chrono_duration(config.http.session_idle),
        session_max_age: chrono_duration(config.http.session_max_age),
    };
    let jobs = jobs::JobStore::open(&conn)
        .await
        .context("setting up the background-job tables")?;
    let services = Services::new(conn, broker_status.clone(), settings)
        .with_runtime(runtime_config(&config))
        .with_operation_queue(Arc::new(jobs.clone()));
    let stop = CancellationToken::new();
    let mut topology = Topology::new(config.broker.prefix.clone());
    if let Some(expiry) = config.broker.queue_expiry {
        topology = topology.ephemeral(expiry);
    }
    let (link_tx, link) = broker::link();
    // Validated with the configuration; replicas start at different members of a cluster.
    let brokers = agent_client::BrokerAddresses::parse(&config.broker.url)
        .context("AM_AMQP_URL")?
        .spread_by(&format!("agent-manager {}", std::process::id()));
    let broker_task = tokio::spawn(broker::supervise(
        brokers,
        topology.clone(),
        broker_status,
        link_tx,
        Arc::clone(&services.runtime.metrics),
        stop.clone(),
    ));
    let mut job_tasks = jobs::spawn(
        jobs,
        &services,
        link.clone(),
        retention_policy(&config),
        stop.clone(),
    );
    let mut runtime_tasks = runtime::spawn(&services, topology, link, stop.clone());

    let mut leptos_options = leptos::config::get_configuration(None)
        .context("reading the Leptos site configuration")?
        .leptos_options;
    leptos_options.site_addr = config.http.listen;
    let state = AppState {
        dashboard: crate::live::DashboardFeed::new(services.clone(), stop.clone()),
        services,
        leptos_options,
        http: Arc::new(config.http.clone()),
    };
    let app = http::router(state);

    let listener = tokio::net::TcpListener::bind(config.http.listen)
        .await
        .with_context(|| format!("cannot listen on {} (AM_LISTEN)", config.http.listen))?;
    tracing::info!(listen = %config.http.listen, "agent-manager serving");
    println!("agent-manager listening on http://{}", config.http.listen);
    let shutdown = stop.clone();
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
        shutdown_signal().await;
        shutdown.cancel();
    })
    .await?;
    stop.cancel();
    while runtime_tasks.join_next().await.is_some() {}
    while job_tasks.join_next().await.is_some() {}
    let _ = broker_task.await;
    Ok(())
}

fn chrono_duration(d: std::time::Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}

/// The failure-log retention rules from the configuration.
pub fn retention_policy(config: &Config) -> am_services::retention::RetentionPolicy {
    am_services::retention::RetentionPolicy {
        keep_failed_for: chrono_duration(config.runtime.failure_retention),
        ..Default::default()
    }
}

/// The runtime's tunables from the configuration.
pub fn runtime_config(config: &Config) -> RuntimeConfig {
    RuntimeConfig {
        node_timeout: chrono_duration(config.runtime.node_timeout),
        wait_timeout: chrono_duration(config.runtime.wait_timeout),
        misfire_threshold: chrono_duration(config.runtime.misfire_threshold),
        notify: NotifySettings {
            public_url: config.http.public_url.clone(),
            give_up: chrono_duration(config.runtime.notify_give_up),
            smtp: config.runtime.smtp.clone(),
            ..NotifySettings::default()
        },
        ..RuntimeConfig::new(&config.broker.prefix)
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down");
}

pub async fn catalog_export(config: &Config, file: &Path) -> Result<()> {
    let conn = open_existing(config).await?;
    let doc = catalog::export(&conn, &Principal::cli())
        .await
        .map_err(explain)?;
    let json = serde_json::to_string_pretty(&doc)?;
    if file == Path::new("-") {
        println!("{json}");
    } else {
        tokio::fs::write(file, json + "\n")
            .await
            .with_context(|| format!("writing {}", file.display()))?;
        eprintln!("catalog written to {}", file.display());
    }
    Ok(())
}

pub async fn catalog_import(config: &Config, file: &Path) -> Result<()> {
    let text = if file == Path::new("-") {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
        s
    } else {
        tokio::fs::read_to_string(file)
            .await
            .with_context(|| format!("reading {}", file.display()))?
    };
    let doc: Catalog = match crate::api::json::parse(text.as_bytes()) {
        Ok(doc) => doc,
        Err(crate::error::AppError::Service(e)) => return Err(explain(e)),
        Err(e) => bail!("{}: {e}", file.display()),
    };
    let conn = open_db(config).await?;
    let summary = catalog::import(&conn, &Principal::cli(), doc)
        .await
        .map_err(explain)?;
    println!(
        "catalog imported: {} created, {} updated, {} deleted",
        summary.created.len(),
        summary.updated.len(),
        summary.deleted.len()
    );
    Ok(())
}

pub async fn user_create(
    config: &Config,
    name: &str,
    role: Role,
    password: Option<String>,
) -> Result<()> {
    let conn = open_existing(config).await?;
    let (password, generated) = match password {
        Some(p) => (p, false),
        None => (accounts::generate_password(), true),
    };
    let user = accounts::create_user(&conn, &Principal::cli(), name, &password, role)
        .await
        .map_err(explain)?;
    println!("user '{}' created with role {}", user.name, user.role);
    if generated {
        println!("password: {password}");
    }
    Ok(())
}

pub async fn token_create(
    config: &Config,
    user: &str,
    name: &str,
    role: Option<Role>,
    expires: Option<std::time::Duration>,
) -> Result<()> {
    let conn = open_existing(config).await?;
    let expires_at = match expires {
        Some(d) => Some(
            chrono::Utc::now()
                + chrono::Duration::from_std(d)
                    .map_err(|_| anyhow::anyhow!("--expires: too far in the future"))?,
        ),
        None => None,
    };
    let new = am_domain::read::accounts::NewToken {
        user: Some(user.to_owned()),
        name: name.to_owned(),
        role,
        expires_at,
    };
    let created = accounts::tokens::create(&conn, &Principal::cli(), new)
        .await
        .map_err(explain)?;
    println!("{}", created.token);
    Ok(())
}

pub async fn token_revoke(config: &Config, id: i64) -> Result<()> {
    let conn = open_existing(config).await?;
    let revoked = accounts::tokens::revoke(&conn, &Principal::cli(), id)
        .await
        .map_err(explain)?;
    println!(
        "revoked token {} ({}) of {}",
        revoked.id, revoked.name, revoked.user
    );
    Ok(())
}
