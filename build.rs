//! Compiles in the files a user picks by name, so that each list is the files themselves and
//! never typed twice: the reproduction plans (`plans/*.toml`, and `src/workload/*/plans/*.toml`
//! for a workload that brings its own) and the server profiles (`profiles/<kind>/*`), written
//! to `$OUT_DIR/files.rs` (included by `files`, read by `suite` and `server::profile`). The
//! workload folders are plain modules (`pub mod` lines in `src/workload/mod.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// (name, absolute path) of every file in `dir` ending in `ext`, by name.
fn files(dir: &Path, ext: &str) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .filter_map(|p| Some((p.file_stem()?.to_str()?.to_string(), p)))
        .collect();
    out.sort();
    out
}

fn list(out: &mut String, name: &str, items: &[(String, PathBuf)]) {
    writeln!(out, "pub const {name}: &[(&str, &str)] = &[").unwrap();
    for (n, p) in items {
        writeln!(
            out,
            "    ({n:?}, include_str!({:?})),",
            p.display().to_string()
        )
        .unwrap();
    }
    writeln!(out, "];").unwrap();
}

/// Write `text` unless the file already holds it (an unchanged file keeps its time, so the
/// crate is not rebuilt for nothing).
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return;
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut plans = files(&root.join("plans"), "toml");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(root.join("src/workload"))
        .expect("src/workload")
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("plans"))
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for f in &folders {
        plans.extend(files(f, "toml"));
    }
    // The oldest report first (the year that ends a plan's name), then by name.
    let year = |n: &str| -> u32 {
        n.rsplit('-')
            .next()
            .and_then(|y| y.parse().ok())
            .unwrap_or(u32::MAX)
    };
    plans.sort_by(|a, b| (year(&a.0), &a.0).cmp(&(year(&b.0), &b.0)));
    for (i, a) in plans.iter().enumerate() {
        if let Some(b) = plans[i + 1..].iter().find(|b| b.0 == a.0) {
            panic!(
                "two plans named {}: {} and {}",
                a.0,
                a.1.display(),
                b.1.display()
            );
        }
    }
    let mut out = String::from("// Written by build.rs from the files; do not edit.\n");
    list(&mut out, "PLANS", &plans);
    list(
        &mut out,
        "PROFILES_MARIADB",
        &files(&root.join("profiles/mariadb"), "cnf"),
    );
    list(
        &mut out,
        "PROFILES_POSTGRES",
        &files(&root.join("profiles/postgres"), "conf"),
    );
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    write_if_changed(&out_dir.join("files.rs"), &out);
    // A directory makes cargo look at everything under it: a new plan or profile re-runs this
    // (`src/workload` for the plans a workload folder brings).
    for d in ["plans", "profiles", "src/workload"] {
        println!("cargo:rerun-if-changed={d}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
