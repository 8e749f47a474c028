//! `docs/getting-started.md` stays true: its catalog document is a valid catalog, the node, the
//! commands and the producers in it name what that document defines, and its Rust code is the
//! example program `getting-started` (which `server/tests/runtime/getting_started.rs` runs as a
//! node; the code is also a doctest of the crate).

use agent_client::domain::{catalog::Catalog, validate::validate_catalog};

const GUIDE: &str = include_str!("../../../docs/getting-started.md");
const EXAMPLE: &str = include_str!("../../examples/getting-started.rs");

/// The code blocks of `lang`, in order.
fn blocks(lang: &str) -> Vec<String> {
    let fence = format!("```{lang}");
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in GUIDE.lines() {
        match &mut current {
            None if line.trim_start() == fence
                || line.trim_start().starts_with(&format!("{fence},")) =>
            {
                current = Some(String::new());
            }
            Some(_) if line.trim_start() == "```" => out.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

fn catalog() -> Catalog {
    let json = blocks("json");
    assert_eq!(json.len(), 1, "one catalog document");
    serde_json::from_str(&json[0]).expect("the catalog document parses")
}

#[test]
fn the_guides_catalog_is_valid() {
    let c = catalog();
    if let Err(e) = validate_catalog(&c) {
        panic!("the guide's catalog is refused: {e}");
    }
}

#[test]
fn the_guides_node_commands_and_producers_agree_with_its_catalog() {
    let c = catalog();
    let rust = blocks("rust").join("\n");
    let sh = blocks("sh").join("\n");
    let python = blocks("python").join("\n");
    let app = &c.applications[0];
    let pool = c.pool(&app.default_pool).expect("the application's pool");
    // The node is started as a host of the application's pool.
    assert!(
        sh.contains(&format!("AM_APP={} AM_HOST={}", app.id, pool.hosts[0])),
        "the node's start command names application {} and host {}",
        app.id,
        pool.hosts[0]
    );
    // The node offers the catalog's agents, suggesting the data queue the catalog gives them.
    for agent in &c.agents {
        assert!(
            rust.contains(&format!("AgentSpec::new(\"{}\")", agent.id)),
            "the node offers agent {}",
            agent.id
        );
        if let Some(dq) = &agent.data_queue {
            assert!(rust.contains(&format!("suggest_data_queue(\"{dq}\")")));
        }
    }
    // Producers publish to the data queue's address.
    let dq = &c.data_queues[0];
    let address = dq.effective_address();
    assert!(
        python.contains(&format!("exchange=\"{address}\"")),
        "{python}"
    );
    assert!(sh.contains(&format!("-e {address} ")), "{sh}");
    // Run now names a scheduled launch setting of the catalog.
    let run = sh
        .split("/api/v1/launch-settings/")
        .nth(1)
        .and_then(|rest| rest.split("/run").next())
        .expect("a run-now command");
    assert!(c.launch_setting(run).is_some(), "run-now names `{run}`");
}

#[test]
fn the_example_program_is_the_guides_code() {
    let rust = blocks("rust");
    assert_eq!(rust.len(), 1, "one Rust block");
    let code: String = EXAMPLE
        .lines()
        .skip_while(|l| l.starts_with("//!") || l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        code, rust[0],
        "client-lib/examples/getting-started.rs differs from the guide's code"
    );
}

#[test]
fn the_guides_dependencies_are_what_its_code_uses() {
    let toml = blocks("toml").join("\n");
    let rust = blocks("rust").join("\n");
    for (krate, path) in [
        ("agent-client", "agent_client::"),
        ("tokio", "tokio::"),
        ("serde", "serde::"),
        ("serde_json", "serde_json::"),
        ("tracing", "tracing::"),
        ("tracing-subscriber", "tracing_subscriber::"),
    ] {
        assert!(rust.contains(path), "the code uses {krate}");
        assert!(
            toml.lines().any(|l| l.starts_with(&format!("{krate} "))),
            "the dependency block lists {krate}"
        );
    }
    // The library is named by the crate's own name, as its Cargo.toml says.
    let manifest = include_str!("../../Cargo.toml");
    assert!(manifest.contains("name = \"agent-client\""));
}
