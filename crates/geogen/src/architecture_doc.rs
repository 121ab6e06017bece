//! `docs/ARCHITECTURE.md`'s crate table is checked against the workspace's manifests, so the map a
//! new maintainer reads first cannot drift from the tree: every crate has a row, every row a
//! crate, and each row's "depends on" names exactly the crate's geogen dependencies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The table's rows: crate name → the short names of its "depends on" cell (`diag`, `geogen`...).
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let doc = include_str!("../../../docs/ARCHITECTURE.md");
    let mut rows = BTreeMap::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // `| `geogen-x` | stage | depends on |` splits into ["", crate, stage, deps, ""].
        if cells.len() < 5 {
            continue;
        }
        let Some(name) = cells[1].strip_prefix('`').and_then(|c| c.strip_suffix('`')) else { continue };
        if !name.starts_with("geogen") {
            continue;
        }
        rows.insert(name.to_string(), short_names(cells[cells.len() - 2]));
    }
    rows
}

/// `diag, render (the sequence type only), slang and random` → {diag, render, slang, random}.
fn short_names(cell: &str) -> BTreeSet<String> {
    let mut plain = String::new();
    let mut depth = 0;
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .replace(" and ", ",")
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty() && *n != "—")
        .map(str::to_string)
        .collect()
}

/// The geogen crates a manifest depends on, as short names: its `[dependencies]`, or, for a crate
/// with none (a benchmark), its `[dev-dependencies]`.
fn manifest_dependencies(manifest: &str) -> BTreeSet<String> {
    let section = |header: &str| -> BTreeSet<String> {
        let mut inside = false;
        let mut names = BTreeSet::new();
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                inside = line == header;
                continue;
            }
            let name = line.split(|c: char| c == '=' || c == '.' || c.is_whitespace()).next().unwrap_or("");
            if inside && (name == "geogen" || name.starts_with("geogen-")) {
                names.insert(name.strip_prefix("geogen-").unwrap_or(name).to_string());
            }
        }
        names
    };
    let normal = section("[dependencies]");
    if normal.is_empty() {
        section("[dev-dependencies]")
    } else {
        normal
    }
}

#[test]
fn the_crate_table_matches_the_manifests() {
    let crates_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut actual = BTreeMap::new();
    for entry in std::fs::read_dir(&crates_dir).expect("the crates directory") {
        let manifest = entry.expect("an entry").path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else { continue };
        let name = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("name = \"").and_then(|r| r.strip_suffix('"')))
            .expect("a package name")
            .to_string();
        actual.insert(name, manifest_dependencies(&text));
    }
    let documented = documented();
    let missing: Vec<&String> = actual.keys().filter(|c| !documented.contains_key(*c)).collect();
    let stale: Vec<&String> = documented.keys().filter(|c| !actual.contains_key(*c)).collect();
    assert!(missing.is_empty(), "crates without a row in docs/ARCHITECTURE.md: {missing:?}");
    assert!(stale.is_empty(), "rows of docs/ARCHITECTURE.md for no crate: {stale:?}");
    for (name, dependencies) in &actual {
        assert_eq!(&documented[name], dependencies, "docs/ARCHITECTURE.md: what `{name}` depends on");
    }
}

#[test]
fn depends_on_cells_are_read_without_their_remarks() {
    let names = short_names("geogen, io, stdlib and syntax (the registry, for completion), vm (steps)");
    assert_eq!(names, ["geogen", "io", "stdlib", "syntax", "vm"].map(String::from).into());
    assert!(short_names("—").is_empty());
}
