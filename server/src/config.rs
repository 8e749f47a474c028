//! Configuration, read once at start-up from the environment and an optional TOML file
//! (`AM_CONFIG`, or `--config`). Environment variables win over the file. Every bad value is
//! reported with the name of the variable (or file key) it came from.

mod read;
mod settings;

pub use settings::*;

use read::Source;
use std::path::Path;

impl Config {
    /// Reads the process environment and the file it points to (or `file` if given).
    pub fn from_env(file: Option<&Path>) -> Result<Config, ConfigError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self::load(&env, file)
    }

    /// Reads every setting from `env` over the file (`file`, else `AM_CONFIG`), one reader per
    /// concern; the first bad value stops it, named by where it came from.
    pub fn load(
        env: &dyn Fn(&str) -> Option<String>,
        file: Option<&Path>,
    ) -> Result<Config, ConfigError> {
        let mut src = Source::open(env, file)?;
        let database = DatabaseConfig {
            url: src.database_url()?,
        };
        let broker = src.broker()?;
        let http = src.http()?;
        let admin = src.admin()?;
        let runtime = src.runtime()?;
        Ok(Config {
            database,
            broker,
            runtime,
            http,
            admin,
        })
    }
}

#[cfg(test)]
mod tests;
