//! Isolated databases for tests: a fresh SQLite file or a fresh PostgreSQL database per test,
//! migrated and removed again when the handle is dropped.

use crate::db;
use sea_orm::{ConnectionTrait, Database, DatabaseConnection};

/// PostgreSQL server used by tests; override with `AM_TEST_PG_URL` (must name an existing
/// database the test user may connect to and create databases from).
pub fn pg_admin_url() -> String {
    std::env::var("AM_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Both backends, for tests that must pass on each.
pub const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

pub struct TestDb {
    pub db: DatabaseConnection,
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Dir(std::path::PathBuf),
    PgDatabase(String),
}

impl TestDb {
    /// A new, migrated, empty database.
    ///
    /// # Panics
    /// When the database cannot be created: the test cannot run.
    #[expect(
        clippy::unwrap_used,
        reason = "test support: failing to set up is a test failure"
    )]
    pub async fn new(backend: Backend) -> TestDb {
        let t = Self::unmigrated(backend).await;
        db::migrate(&t.db).await.unwrap();
        t
    }

    /// A new database without a table, as a first start finds it.
    ///
    /// # Panics
    /// When the database cannot be created: the test cannot run.
    #[expect(
        clippy::unwrap_used,
        reason = "test support: failing to set up is a test failure"
    )]
    pub async fn unmigrated(backend: Backend) -> TestDb {
        let unique = uuid::Uuid::new_v4().simple().to_string();
        let (url, cleanup) = match backend {
            Backend::Sqlite => {
                let dir = std::env::temp_dir().join(format!("am-test-{unique}"));
                std::fs::create_dir_all(&dir).unwrap();
                let url = format!("sqlite://{}/test.sqlite?mode=rwc", dir.display());
                (url, Cleanup::Dir(dir))
            }
            Backend::Postgres => {
                let name = format!("am_test_{unique}");
                let admin = Database::connect(pg_admin_url()).await.unwrap();
                admin
                    .execute_unprepared(&format!("CREATE DATABASE {name}"))
                    .await
                    .unwrap();
                admin.close().await.unwrap();
                let base = pg_admin_url();
                let url = match base.rfind('/') {
                    Some(i) => format!("{}/{name}", &base[..i]),
                    None => panic!("AM_TEST_PG_URL has no database part: {base}"),
                };
                (url, Cleanup::PgDatabase(name))
            }
        };
        let db = db::connect(&url).await.unwrap();
        TestDb { db, url, cleanup }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        match &self.cleanup {
            Cleanup::Dir(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Cleanup::PgDatabase(name) => {
                // Drop cannot await; a helper thread with its own runtime does the async work.
                let name = name.clone();
                let handle = std::thread::spawn(move || {
                    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                    else {
                        return;
                    };
                    rt.block_on(async move {
                        if let Ok(admin) = Database::connect(pg_admin_url()).await {
                            let _ = admin
                                .execute_unprepared(&format!(
                                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                                ))
                                .await;
                            let _ = admin.close().await;
                        }
                    });
                });
                let _ = handle.join();
            }
        }
    }
}
