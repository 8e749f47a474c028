//! The published contract in `protocol/` agrees with the wire types: the JSON Schemas are the
//! ones the types generate, every golden example reads as its type and writes back the same,
//! and the golden tables are what the rules compute. Run with `AM_BLESS=1` to write the files
//! anew after a deliberate change of the protocol (then review the diff: it is the change
//! every other implementation must follow).

mod examples;
mod golden;

use am_domain::wire::schema::message_schemas;
use std::path::{Path, PathBuf};

pub fn protocol_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../protocol")
}

pub fn bless() -> bool {
    std::env::var_os("AM_BLESS").is_some()
}

/// `expected` is the content of `path`, or (blessing) becomes it.
pub fn agrees(path: &Path, expected: &str, mismatches: &mut Vec<String>) {
    let found = std::fs::read_to_string(path).unwrap_or_default();
    if found == expected {
        return;
    }
    if bless() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, expected).expect("write");
    } else {
        mismatches.push(path.display().to_string());
    }
}

pub fn pretty(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("serializes");
    text.push('\n');
    text
}

#[test]
fn the_schemas_are_the_ones_the_wire_types_generate() {
    let dir = protocol_dir().join("schemas");
    let mut mismatches = Vec::new();
    let schemas = message_schemas();
    for s in &schemas {
        agrees(
            &dir.join(format!("{}.json", s.kind)),
            &pretty(&s.schema),
            &mut mismatches,
        );
    }
    let published: Vec<String> = std::fs::read_dir(&dir)
        .expect("protocol/schemas exists")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    for name in published {
        assert!(
            schemas.iter().any(|s| format!("{}.json", s.kind) == name),
            "protocol/schemas/{name} is no message type any more"
        );
    }
    assert!(
        mismatches.is_empty(),
        "the wire types and the published schemas disagree: {mismatches:?}; if the change is \
         deliberate, run the test with AM_BLESS=1 and commit the files"
    );
}
