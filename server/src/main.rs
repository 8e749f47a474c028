//! `agent-manager`: the Agent Manager server and its administration commands.

use agent_client::telemetry::Telemetry;
use am_domain::roles::Role;
use anyhow::Result;
use clap::{Parser, Subcommand};
use server::{commands, config::Config};
use std::path::PathBuf;
use std::process::ExitCode;
use tracing_subscriber::{EnvFilter, Layer, layer::SubscriberExt, util::SubscriberInitExt};

#[derive(Parser)]
#[command(
    name = "agent-manager",
    version,
    about = "Schedules and supervises agents running in many application servers"
)]
struct Cli {
    /// TOML configuration file (default: $AM_CONFIG); environment variables override it.
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Migrate the database and serve the UI and API (the default).
    Serve,
    /// Bring the database schema up to date and exit.
    Migrate,
    /// Export or import the whole catalog as JSON.
    Catalog {
        #[command(subcommand)]
        action: CatalogAction,
    },
    /// Manage users.
    User {
        #[command(subcommand)]
        action: UserAction,
    },
    /// Manage API tokens.
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
}

#[derive(Subcommand)]
enum CatalogAction {
    /// Write the catalog to FILE (`-` for standard output).
    Export { file: PathBuf },
    /// Replace the catalog with FILE (`-` for standard input); all or nothing.
    Import { file: PathBuf },
}

#[derive(Subcommand)]
enum UserAction {
    /// Create a user; prints a generated password unless --password is given.
    Create {
        name: String,
        #[arg(long, value_parser = parse_role)]
        role: Role,
        #[arg(long, env = "AM_NEW_USER_PASSWORD", hide_env_values = true)]
        password: Option<String>,
    },
}

#[derive(Subcommand)]
enum TokenAction {
    /// Create an API token for a user and print it (shown only once).
    Create {
        #[arg(long)]
        user: String,
        /// A label for the token, e.g. what uses it.
        #[arg(long, default_value = "cli")]
        name: String,
        /// The token's own role, at most the user's (e.g. `viewer` for a metrics scraper);
        /// the user's role when left out.
        #[arg(long, value_parser = parse_role)]
        role: Option<Role>,
        /// How long it works, e.g. `90d` or `12h`; for ever when left out.
        #[arg(long, value_parser = parse_expiry)]
        expires: Option<std::time::Duration>,
    },
    /// Revoke an API token by its id (as `GET /api/v1/tokens` lists it); it stops at once.
    Revoke { id: i64 },
}

fn parse_expiry(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s)
        .map_err(|e| format!("`{s}` is not a duration like 90d or 12h: {e}"))
}

fn parse_role(s: &str) -> Result<Role, String> {
    s.parse()
}

/// Errors end the process with their chain of causes on one line and status 1: what an operator
/// got wrong is told as such, never as a stack trace (`RUST_BACKTRACE` is for bugs, and a bug
/// panics).
#[tokio::main]
async fn main() -> ExitCode {
    match start().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn start() -> Result<()> {
    // Traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, Observe).
    let telemetry = Telemetry::from_env("agent-manager")?;
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(
                    EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,lapin=warn")),
                ),
        )
        .with(telemetry.as_ref().map(|t| t.layer()))
        .init();
    let result = run().await;
    if let Some(t) = telemetry {
        t.shutdown();
    }
    result
}

async fn run() -> Result<()> {
    let cli = Cli::parse();
    let config = Config::from_env(cli.config.as_deref())?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => commands::serve(config).await,
        Command::Migrate => commands::migrate(&config).await,
        Command::Catalog {
            action: CatalogAction::Export { file },
        } => commands::catalog_export(&config, &file).await,
        Command::Catalog {
            action: CatalogAction::Import { file },
        } => commands::catalog_import(&config, &file).await,
        Command::User {
            action:
                UserAction::Create {
                    name,
                    role,
                    password,
                },
        } => commands::user_create(&config, &name, role, password).await,
        Command::Token {
            action:
                TokenAction::Create {
                    user,
                    name,
                    role,
                    expires,
                },
        } => commands::token_create(&config, &user, &name, role, expires).await,
        Command::Token {
            action: TokenAction::Revoke { id },
        } => commands::token_revoke(&config, id).await,
    }
}
