//! What the workload registry and the one run harness must deliver, seen from the command
//! line: `list` names every workload, each workload's `--help` shows its own options only, a
//! flag of another workload is refused naming its owner, sysbench's spellings keep working,
//! and every workload records an interrupted run as `interrupted` with exit code 130.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::faults::{has_note, read_json, results_under, serial, sqlite, wait_exit};

/// Every workload `run` accepts by name, from the registry (never typed twice), with the
/// operations its `list` entry names (for the sysbench family and the workload files: the
/// workload names again; for compression and schema-change: the DBMS whose formats or
/// algorithms follow).
fn workloads() -> Vec<(&'static str, Vec<String>)> {
    let reg = enginebench::registry::Registry::default();
    reg.entries()
        .iter()
        .flat_map(|e| {
            let ops: Vec<String> = e.listing().operations.into_iter().map(|(o, _)| o).collect();
            e.names().into_iter().map(move |n| (n, ops.clone()))
        })
        .collect()
}

/// The words of `text`: flags, names and identifiers split at anything else, so that
/// `--max-rows` is not found in `--max-table-rows` nor `tpcc` in `tpcc_new_order`.
fn words(text: &str) -> HashSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn list_names_every_workload_and_its_operations() {
    let dir = tempdir();
    let out = eb(dir.path(), &["list"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // A workload is named at the start of its own line, not only in passing.
    let firsts: HashSet<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let workloads = workloads();
    // The registry's list is not empty, nor is any entry's list of operations; the built-in
    // workload files (workloads/*.toml but the example) are among its names.
    let reg = enginebench::registry::Registry::default();
    assert!(reg.entries().len() >= 10, "{} entries", reg.entries().len());
    for e in reg.entries() {
        assert!(!e.names().is_empty(), "{} has no name", e.label());
        assert!(
            !e.listing().operations.is_empty(),
            "{} lists no operation",
            e.label()
        );
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in std::fs::read_dir(root.join("workloads")).unwrap() {
        let p = f.unwrap().path();
        let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
        if p.extension().is_some_and(|x| x == "toml") && stem != "example" {
            assert!(
                workloads.iter().any(|(w, _)| *w == stem),
                "workloads/{stem}.toml is not a workload of the registry"
            );
        }
    }
    let missing: Vec<&str> = workloads
        .iter()
        .map(|(w, _)| *w)
        .filter(|w| !firsts.contains(w))
        .collect();
    assert!(
        missing.is_empty(),
        "list leaves out {missing:?}:\n{}",
        out.stdout
    );
    // Each operation heads a line of its own, under its workload's heading.
    let missing: Vec<&String> = workloads
        .iter()
        .flat_map(|(_, ops)| ops)
        .filter(|op| {
            !out.stdout
                .lines()
                .any(|l| l.starts_with(' ') && l.split_whitespace().next() == Some(op.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "list leaves out the operations {missing:?}:\n{}",
        out.stdout
    );
}

/// The result schema describes sections under the names of registered workloads only (each
/// key a report owner's): a section of a workload gone or renamed fails here.
#[test]
fn schema_sections_belong_to_registered_workloads() {
    fn keys(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(p) = m.get("sections").and_then(|s| s.get("properties")) {
                    out.extend(p.as_object().into_iter().flat_map(|o| o.keys().cloned()));
                }
                m.values().for_each(|x| keys(x, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
            _ => {}
        }
    }
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/result-v2.schema.json")).unwrap();
    let mut found = Vec::new();
    keys(&schema, &mut found);
    assert!(!found.is_empty(), "the schema describes no section");
    let owners: HashSet<&str> = enginebench::registry::Registry::default()
        .owners()
        .iter()
        .map(|o| o.key())
        .collect();
    let stray: Vec<&String> = found
        .iter()
        .filter(|k| !owners.contains(k.as_str()))
        .collect();
    assert!(
        stray.is_empty(),
        "the schema has sections of no registered workload: {stray:?}"
    );
}

#[test]
fn init_workload_prints_only_what_it_wrote() {
    let dir = tempdir();
    let out = eb(dir.path(), &["init-workload", "mine.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = std::fs::read_to_string(dir.path().join("mine.toml")).expect("mine.toml written");
    assert!(!text.is_empty());
    let stdout = out.stdout.trim();
    assert!(
        stdout.is_empty() || (stdout.lines().count() == 1 && stdout.contains("mine.toml")),
        "stdout should be empty or say what was written, got:\n{}",
        out.stdout
    );
    for (name, stream) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        // No workload's name (the ones with phases of their own, compression, schema-change
        // and sqlbench, once printed theirs here).
        for other in enginebench::registry::Registry::default().names() {
            assert!(
                !stream.contains(other),
                "init-workload's {name} mentions {other}:\n{stream}"
            );
        }
    }

    let out = eb(dir.path(), &["init-workload", "-"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout, text,
        "init-workload - prints the file's text, nothing else"
    );
}

/// Options every workload that runs timed points takes.
const COMMON: &[&str] = &["--target", "--threads", "--duration", "--results-dir"];
/// sqlbench runs a fixed count of tests one after the other: it refuses --threads and
/// --duration (exit 2), so its help need not show them.
const COMMON_SQLBENCH: &[&str] = &["--target", "--results-dir"];

/// (workload, its own options that its help must show, other workloads' options it must not).
#[rustfmt::skip]
const HELP: &[(&str, &[&str], &[&str])] = &[
    ("micro-read",      &["--queries", "--table-size"],
                        &["--warehouses", "--maxid1", "--max-rows", "--engines", "--before", "--range-size", "--var"]),
    ("oltp_read_write", &["--tables", "--range-size"],
                        &["--warehouses", "--maxid1", "--max-rows", "--engines", "--before", "--var"]),
    ("tpcc",            &["--warehouses", "--weights"],
                        &["--maxid1", "--max-rows", "--engines", "--range-size", "--before", "--var"]),
    ("linkbench",       &["--maxid1", "--requesters"],
                        &["--warehouses", "--max-rows", "--engines", "--range-size", "--before", "--var"]),
    ("iibench",         &["--max-rows", "--query-threads"],
                        &["--warehouses", "--tables", "--maxid1", "--engines", "--before", "--var"]),
    ("compression",     &["--table-size"],
                        &["--warehouses", "--maxid1", "--max-rows", "--engines", "--before", "--range-size", "--var"]),
    ("schema-change",   &["--before", "--during"],
                        &["--warehouses", "--maxid1", "--max-rows", "--engines", "--var"]),
    ("sqlbench",        &["--engines", "--dry-run", "--scale"],
                        &["--warehouses", "--maxid1", "--max-rows", "--before", "--range-size", "--var"]),
    ("ycsb-a",          &["--var"],
                        &["--warehouses", "--maxid1", "--max-rows", "--engines", "--before", "--range-size"]),
    ("round-trip",      &["--round-trip-columns"],
                        &["--warehouses", "--maxid1", "--max-rows", "--engines", "--before", "--range-size", "--var"]),
];

#[test]
fn workload_help_shows_only_its_own_options() {
    let dir = tempdir();
    let mut wrong = Vec::new();
    // Every workload of the registry says here what its help must show.
    for e in enginebench::registry::Registry::default().entries() {
        if !e.names().iter().any(|n| HELP.iter().any(|(w, ..)| w == n)) {
            wrong.push(format!("HELP has no line for {}", e.label()));
        }
    }
    for (w, own, others) in HELP {
        let out = eb(dir.path(), &["run", w, "--help"]);
        assert_eq!(out.code, 0, "run {w} --help: {}", out.stderr);
        let shown = words(&out.stdout);
        let common = if *w == "sqlbench" {
            COMMON_SQLBENCH
        } else {
            COMMON
        };
        for f in common.iter().chain(own.iter()) {
            if !shown.contains(f) {
                wrong.push(format!("run {w} --help lacks {f}"));
            }
        }
        for f in others.iter() {
            if shown.contains(f) {
                wrong.push(format!("run {w} --help shows {f}"));
            }
        }
    }

    let out = eb(dir.path(), &["run", "--help"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let shown = words(&out.stdout);
    for (w, _) in workloads() {
        if !shown.contains(w) {
            wrong.push(format!("run --help does not name {w}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The one error line of a usage error (exit 2, one line, no panic), or what was wrong.
fn usage_error(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = eb(dir, args);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| !l.starts_with("warning:"))
        .collect();
    match lines[..] {
        [line]
            if out.code == 2 && line.starts_with("enginebench: ") && !line.contains("panicked") =>
        {
            Ok(line.to_string())
        }
        _ => Err(format!(
            "{args:?}: exit {} (2 expected) with one error line expected on stderr, got:\n{}",
            out.code, out.stderr
        )),
    }
}

#[test]
fn old_flag_spellings_work_and_foreign_flags_name_their_workload() {
    let dir = tempdir();
    let target = sqlite(dir.path());
    let short_run = [
        "run",
        "oltp_point_select",
        "--target",
        &target,
        "--table-size",
        "1000",
        "--threads",
        "1",
        "--warmup",
        "0",
        "--runs",
        "1",
    ];

    // sysbench's --time and --rand-seed.
    let mut args = short_run.to_vec();
    args.extend(["--time", "1", "--rand-seed", "3", "--results-dir", "time"]);
    let out = eb(dir.path(), &args);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let doc = read_json(&result_file(&dir.path().join("time")));
    assert_eq!(doc["status"], "complete");
    assert_eq!(doc["config"]["duration_s"], 1.0, "{}", doc["config"]);
    assert_eq!(doc["config"]["seed"], 3, "{}", doc["config"]);

    // The aliases --maxtime and --requests (0 time: the events alone end the run).
    let mut args = short_run.to_vec();
    args.extend([
        "--maxtime",
        "0",
        "--requests",
        "300",
        "--results-dir",
        "req",
    ]);
    let out = eb(dir.path(), &args);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let doc = read_json(&result_file(&dir.path().join("req")));
    assert_eq!(doc["config"]["events"], 300, "{}", doc["config"]);
    assert_eq!(doc["points"][0]["runs"][0]["ops"], 300);

    // sysbench's --mysql-storage-engine is --engine (which SQLite has no use for).
    let line = usage_error(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &target,
            "--mysql-storage-engine",
            "InnoDB",
        ],
    )
    .unwrap();
    assert!(line.contains("--engine applies to MySQL"), "{line}");

    // A flag of another workload: refused, naming the flag and the workload it belongs to.
    // (The rest of each command line keeps a run short should the flag be let through.)
    let run = |w: &'static str, flag: &'static str, value: &'static str| {
        let mut a = vec!["run", w, "--target", &target, flag, value];
        a.extend([
            "--threads",
            "1",
            "--warmup",
            "0",
            "--duration",
            "200ms",
            "--runs",
            "1",
        ]);
        a.extend(match w {
            "micro-read" => &["--table-size", "1000", "--queries", "READ_PK_POINT"][..],
            "oltp_read_write" => &["--table-size", "1000"][..],
            "iibench" => &["--max-rows", "1000"][..],
            "linkbench" => &["--maxid1", "1000"][..],
            _ => &[][..],
        });
        usage_error(dir.path(), &a)
    };
    let mut wrong = Vec::new();
    for (w, flag, value, owner) in [
        ("micro-read", "--warehouses", "2", Some("tpcc")),
        ("tpcc", "--maxid1", "5", Some("linkbench")),
        ("linkbench", "--max-rows", "10", Some("iibench")),
        ("oltp_read_write", "--engines", "InnoDB", Some("sqlbench")),
        ("iibench", "--before", "5s", Some("schema-change")),
        // OLTP options, which have defaults and so can pass unnoticed on other workloads.
        ("micro-read", "--range-size", "2", None),
        ("iibench", "--tables", "2", None),
    ] {
        match run(w, flag, value) {
            Ok(line) if line.contains(flag) && owner.iter().all(|o| line.contains(o)) => {}
            Ok(line) => wrong.push(format!(
                "run {w} {flag}: '{line}' should name {flag} and {owner:?}"
            )),
            Err(e) => wrong.push(format!("run {w} {flag}: {e}")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Start a run that would last well over 20 s, SIGINT it once it measures, and check it stops
/// within 15 s with exit code 130 and a valid result that says `interrupted` and names the
/// signal.
fn interrupt_run(workload: &str, extra: &[&str]) {
    let _s = serial();
    let dir = tempdir();
    let target = sqlite(dir.path());
    let mut args = vec!["run", workload, "--target", &target];
    args.extend(extra);
    let (mut child, err) = spawn(dir.path(), &args);
    let res = dir.path().join("enginebench-results");
    // "results in FOLDER": result.json is on disk and the measurement starts.
    wait_text(&err, "results in", Duration::from_secs(120));
    assert_eq!(results_under(&res).len(), 1, "{}", read(&err));
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        child.try_wait().unwrap().is_none(),
        "{workload} ended before the signal (make the run longer): {}",
        read(&err)
    );
    let t0 = Instant::now();
    signal(child.id(), libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(60));
    let took = t0.elapsed();
    let text = read(&err);
    assert_eq!(code, Ok(130), "{workload}: {text}");
    assert!(
        took < Duration::from_secs(15),
        "{workload} stopped {took:?} after SIGINT: {text}"
    );
    let doc = read_json(&results_under(&res)[0]);
    assert_eq!(
        doc["status"], "interrupted",
        "{workload}: error {}",
        doc["error"]
    );
    // As every run the harness interrupts (faults.rs): the result names the signal.
    assert!(
        has_note(&doc, "interrupted by SIGINT"),
        "{workload}: no note names the signal: {}",
        doc["notes"]
    );
    assert_schema_valid(&doc);
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn sigint_interrupts_sqlbench() {
    interrupt_run("sqlbench", &["--scale", "1"]);
}

#[test]
fn sigint_interrupts_iibench() {
    interrupt_run("iibench", &["--duration", "60s", "--max-rows", "100M"]);
}

#[test]
fn sigint_interrupts_schema_change() {
    interrupt_run(
        "schema-change",
        &[
            "--before",
            "30s",
            "--after",
            "30s",
            "--threads",
            "1",
            "--table-size",
            "10k",
        ],
    );
}
