//! A host of its own on this machine: a network namespace joined to the machine by a veth pair,
//! for a node whose network a test cuts while the process runs on (a partition, not a crash).
//!
//! The node in the namespace reaches the machine's listeners through the machine's end of the
//! pair ([`Netns::gateway`]); [`Netns::cut`] takes that end down, so packets in both directions
//! are dropped and open TCP connections stall (no reset, as in a real partition) until
//! [`Netns::heal`]. Needs root and iproute2; where the machine does not allow it,
//! [`Netns::create`] says why and the test leaves this fault out.

use std::{net::Ipv4Addr, process::Command};
use uuid::Uuid;

pub struct Netns {
    name: String,
    /// The machine's end of the veth pair.
    outer: String,
    gateway: Ipv4Addr,
}

/// Runs `ip` with `args`; what it printed on failure.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("`ip` cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Netns {
    /// A new namespace with loopback up and a /30 link to the machine, or why there cannot be
    /// one here (not root, no iproute2, namespaces not allowed).
    pub fn create() -> Result<Netns, String> {
        let id = Uuid::new_v4().simple().to_string();
        // Interface names hold at most 15 bytes.
        let tag = &id[..8];
        let bytes = Uuid::new_v4().into_bytes();
        // A /30 within 10.231.0.0/16: one test in a run uses one, so a clash is unlikely and
        // shows as a failed `ip addr add`.
        let base = u32::from(Ipv4Addr::new(10, 231, bytes[0], bytes[1] & 0xfc));
        let gateway = Ipv4Addr::from(base + 1);
        let inner_addr = Ipv4Addr::from(base + 2);
        let ns = Netns {
            name: format!("am-{tag}"),
            outer: format!("amo-{tag}"),
            gateway,
        };
        let inner = format!("ami-{tag}");
        ip(&["netns", "add", &ns.name])?;
        let (gw, addr) = (format!("{gateway}/30"), format!("{inner_addr}/30"));
        let steps: [&[&str]; 7] = [
            &[
                "link", "add", &ns.outer, "type", "veth", "peer", "name", &inner,
            ],
            &["link", "set", &inner, "netns", &ns.name],
            &["addr", "add", &gw, "dev", &ns.outer],
            &["link", "set", &ns.outer, "up"],
            &["-n", &ns.name, "addr", "add", &addr, "dev", &inner],
            &["-n", &ns.name, "link", "set", &inner, "up"],
            &["-n", &ns.name, "link", "set", "lo", "up"],
        ];
        for step in steps {
            // On failure `ns` is dropped: the namespace and the pair go.
            ip(step)?;
        }
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The machine as the namespace sees it.
    pub fn gateway(&self) -> Ipv4Addr {
        self.gateway
    }

    /// Drops every packet between the namespace and the machine.
    pub fn cut(&self) {
        ip(&["link", "set", &self.outer, "down"]).expect("the link goes down");
    }

    /// Lets packets through again; connections that survived resume.
    pub fn heal(&self) {
        ip(&["link", "set", &self.outer, "up"]).expect("the link comes up");
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting the namespace deletes its end of the pair, and with it the machine's end.
        let _ = ip(&["netns", "del", &self.name]);
        let _ = ip(&["link", "del", &self.outer]);
    }
}
