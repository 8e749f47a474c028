//! Connecting to the manager's database and bringing its schema up to date.

use migration::{Migrator, MigratorTrait};
use sea_orm::{
    ConnectOptions, Database, DatabaseConnection, DatabaseTransaction, DbErr,
    SqliteTransactionMode, TransactionOptions, TransactionTrait,
};
use std::time::Duration;

/// The embedded default: a SQLite file under `./data/`, created on first use.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/agent-manager.sqlite?mode=rwc";

#[derive(Debug, thiserror::Error)]
pub enum DbSetupError {
    #[error("cannot create the directory {dir} for the SQLite database: {source}")]
    CreateDir { dir: String, source: std::io::Error },
    #[error("cannot connect to the database {url}: {source}")]
    Connect { url: String, source: DbErr },
    #[error("migrating the database failed: {0}")]
    Migrate(DbErr),
    #[error("cannot take the migration lock on the database: {0}")]
    MigrationLock(sea_orm::sqlx::Error),
    #[error(
        "no database file at {path} ({url}; a relative path is read from the current directory): \
         run this command in the folder the manager runs from, or point AM_DATABASE_URL (or \
         `database.url` of the configuration file) at its database"
    )]
    MissingFile { path: String, url: String },
    #[error(
        "the database {url} holds no Agent Manager installation (no migration applied): start the \
         manager on it once (`agent-manager serve` or `agent-manager migrate`), or point \
         AM_DATABASE_URL at the installation's database"
    )]
    NotInstalled { url: String },
}

/// Connects with pool settings suited to the backend. SQLite files get their directory created.
pub async fn connect(url: &str) -> Result<DatabaseConnection, DbSetupError> {
    let is_sqlite = url.starts_with("sqlite:");
    if is_sqlite && let Some(dir) = sqlite_dir(url) {
        std::fs::create_dir_all(&dir).map_err(|source| DbSetupError::CreateDir {
            dir: dir.clone(),
            source,
        })?;
    }
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.connect_timeout(Duration::from_secs(10))
        .acquire_timeout(Duration::from_secs(10))
        .sqlx_logging(false);
    if is_sqlite {
        // One writer at a time is all SQLite allows; a small pool avoids lock contention, and an
        // in-memory database only exists within a single connection.
        let max = if url.contains(":memory:") || url.contains("mode=memory") {
            1
        } else {
            4
        };
        opts.max_connections(max).min_connections(1);
        opts.map_sqlx_sqlite_opts(|o| {
            o.foreign_keys(true)
                .busy_timeout(Duration::from_secs(10))
                .journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
        });
    } else {
        opts.max_connections(16).min_connections(1);
    }
    Database::connect(opts)
        .await
        .map_err(|source| DbSetupError::Connect {
            url: redact_url(url),
            source,
        })
}

/// The PostgreSQL advisory lock replicas take around their migrations ("am-migra").
const MIGRATION_LOCK: i64 = 0x616d_2d6d_6967_7261;

/// Applies every pending migration. On PostgreSQL one replica at a time: replicas started
/// together on a new database would otherwise create the same tables at once, and all but one
/// would fail (a session-level advisory lock, held on one connection of the pool while the
/// migrations run on others, released when done or when the process dies).
pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbSetupError> {
    if db.get_database_backend() != sea_orm::DbBackend::Postgres {
        return Migrator::up(db, None).await.map_err(DbSetupError::Migrate);
    }
    let mut held = db
        .get_postgres_connection_pool()
        .acquire()
        .await
        .map_err(DbSetupError::MigrationLock)?;
    sea_orm::sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *held)
        .await
        .map_err(DbSetupError::MigrationLock)?;
    let migrated = Migrator::up(db, None).await.map_err(DbSetupError::Migrate);
    if let Err(e) = sea_orm::sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *held)
        .await
    {
        // Released anyway when this connection closes.
        tracing::warn!(error = %e, "migration lock not released");
    }
    migrated
}

/// Connects to a database that already holds an installation, for commands that act on one
/// (tokens, users, an export): a SQLite file is never created, an empty database is refused,
/// each with where it looked and how to point elsewhere. Pending migrations are applied.
pub async fn connect_existing(url: &str) -> Result<DatabaseConnection, DbSetupError> {
    if let Some(file) = sqlite_file(url)
        && !file.exists()
    {
        let path = std::path::absolute(&file).unwrap_or(file);
        return Err(DbSetupError::MissingFile {
            path: path.display().to_string(),
            url: redact_url(url),
        });
    }
    let db = connect(url).await?;
    let installed = migration::SchemaManager::new(&db)
        .has_table("seaql_migrations")
        .await
        .unwrap_or(false);
    if !installed {
        return Err(DbSetupError::NotInstalled {
            url: redact_url(url),
        });
    }
    migrate(&db).await?;
    Ok(db)
}

/// What a person recognises a database by: a SQLite file's absolute path, or the URL without
/// its password.
pub fn describe(url: &str) -> String {
    match sqlite_file(url) {
        Some(file) => std::path::absolute(&file)
            .unwrap_or(file)
            .display()
            .to_string(),
        None => redact_url(url),
    }
}

/// The file of a SQLite URL (`:memory:` has none).
fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = path.split('?').next().unwrap_or_default();
    (!path.is_empty() && path != ":memory:").then(|| std::path::PathBuf::from(path))
}

/// Directory of a SQLite file URL, if it has one.
fn sqlite_dir(url: &str) -> Option<String> {
    let file = sqlite_file(url)?;
    let s = file.parent()?.to_string_lossy().into_owned();
    if s.is_empty() { None } else { Some(s) }
}

/// The URL without its password, fit for logs and error messages.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// Begins a transaction that will write. On SQLite it takes the write lock at once (`BEGIN
/// IMMEDIATE`, waiting up to the busy timeout for another writer): a default (deferred)
/// transaction that reads first and writes later fails at once with "database is locked" when
/// another connection wrote in between, and the busy timeout does not help it — *run now*
/// failed that way while heartbeats were being stored. It also makes a check-then-write (the
/// last admin, a fire key) one step on SQLite; PostgreSQL ignores the mode.
pub(crate) async fn begin_write(db: &DatabaseConnection) -> Result<DatabaseTransaction, DbErr> {
    db.begin_with_options(TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..TransactionOptions::default()
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sqlite_dirs() {
        assert_eq!(
            sqlite_dir("sqlite://data/x.sqlite?mode=rwc").as_deref(),
            Some("data")
        );
        assert_eq!(sqlite_dir("sqlite:/tmp/a/b.db").as_deref(), Some("/tmp/a"));
        assert_eq!(sqlite_dir("sqlite::memory:"), None);
        assert_eq!(sqlite_dir("sqlite://x.db"), None);
    }

    #[test]
    fn redacts_passwords() {
        assert_eq!(
            redact_url("postgres://am:secret@db:5432/am"),
            "postgres://am:***@db:5432/am"
        );
        assert_eq!(redact_url("postgres://am@db/am"), "postgres://am@db/am");
        assert_eq!(redact_url("sqlite://data/x"), "sqlite://data/x");
    }
}
