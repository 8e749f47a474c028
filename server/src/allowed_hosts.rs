//! Which `Host` headers the manager answers to (the rule; `host_check` applies it to each
//! request): a defence against DNS rebinding, where a page on a hostile domain re-points its
//! name at the manager's address and then reads the manager's pages as its own origin (the
//! Origin check cannot tell, the origin *is* the hostile name).
//!
//! Rebinding needs a domain name, so an IP literal (`10.1.2.3:3000`, `[::1]`) is always
//! accepted, and so is `localhost`. Any other name must be configured (`AM_ALLOWED_HOSTS`, or
//! the host of an `AM_ALLOWED_ORIGINS` entry). docs/operations.md, "Host names".

use std::net::IpAddr;

/// The host names the manager answers to besides IP literals and `localhost`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts {
    /// `*`: any host (a reverse proxy in front already checks it).
    any: bool,
    /// Lower-case names; `*.example.com` entries are kept as `.example.com`.
    names: Vec<String>,
}

/// Why a configured host entry was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{entry}` is not a host name (expected e.g. manager.example.com, *.example.com or *)")]
pub struct BadHostEntry {
    pub entry: String,
}

impl AllowedHosts {
    /// Entries are host names (a port is ignored), `*.domain` for every sub-domain, or `*`.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Self, BadHostEntry> {
        let mut allowed = AllowedHosts::default();
        for raw in entries {
            let entry = raw.trim();
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                allowed.any = true;
                continue;
            }
            let (wildcard, name) = match entry.strip_prefix("*.") {
                Some(rest) => (true, rest),
                None => (false, entry),
            };
            let name = strip_port(name).to_ascii_lowercase();
            let well_formed = !name.is_empty()
                && name.len() <= 253
                && name.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                });
            if !well_formed {
                return Err(BadHostEntry {
                    entry: raw.to_owned(),
                });
            }
            allowed
                .names
                .push(if wildcard { format!(".{name}") } else { name });
        }
        Ok(allowed)
    }

    /// Adds the host of each origin (`https://manager.example.com` → `manager.example.com`).
    pub fn with_origins(mut self, origins: &[String]) -> Self {
        for origin in origins {
            if let Some(host) = url::Url::parse(origin)
                .ok()
                .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
                && !self.names.contains(&host)
            {
                self.names.push(host);
            }
        }
        self
    }

    /// Whether a request whose `Host` header is `host` may be served.
    pub fn allows(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let name = strip_port(host.trim());
        let bare = name.trim_start_matches('[').trim_end_matches(']');
        if bare.parse::<IpAddr>().is_ok() {
            return true;
        }
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if name == "localhost" {
            return true;
        }
        self.names
            .iter()
            .any(|allowed| match allowed.strip_prefix('.') {
                Some(domain) => name
                    .strip_suffix(domain)
                    .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
                None => *allowed == name,
            })
    }
}

/// `host:port` → `host`, also for `[v6]:port`; a bare IPv6 literal keeps its colons.
fn strip_port(host: &str) -> &str {
    if let Some(end) = host.find(']') {
        return &host[..=end];
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_literals_and_localhost_are_always_allowed() {
        let none = AllowedHosts::default();
        for host in [
            "127.0.0.1",
            "127.0.0.1:3000",
            "10.2.3.4:8080",
            "[::1]:3000",
            "[::1]",
            "localhost:3000",
            "LOCALHOST",
        ] {
            assert!(none.allows(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:3000",
            "127.0.0.1.evil.example",
            "",
        ] {
            assert!(!none.allows(host), "{host}");
        }
    }

    #[test]
    fn configured_names_wildcards_and_origins() {
        let allowed = AllowedHosts::parse(["Manager.Example.com:443", "*.corp.example"])
            .expect("valid")
            .with_origins(&["https://ops.example.org".to_owned()]);
        assert!(allowed.allows("manager.example.com"));
        assert!(allowed.allows("MANAGER.example.com:3000"));
        assert!(allowed.allows("am.corp.example"));
        assert!(allowed.allows("a.b.corp.example:80"));
        assert!(
            !allowed.allows("corp.example"),
            "the wildcard is for sub-domains"
        );
        assert!(!allowed.allows("evilcorp.example"));
        assert!(allowed.allows("ops.example.org"));
        assert!(!allowed.allows("example.com"));
        assert!(
            AllowedHosts::parse(["*"])
                .expect("valid")
                .allows("anything.example")
        );
    }

    #[test]
    fn malformed_entries_are_refused() {
        for bad in ["http://x.example", "a..b", "exa mple.com", "*.", "x/y"] {
            assert!(AllowedHosts::parse([bad]).is_err(), "{bad}");
        }
    }
}
