//! round-trip, the smallest built-in workload (and the template of docs/architecture.md): its
//! option, its line under the terminal table, its result, on SQLite and on the servers.
//!
//! A test target of its own (cargo finds `tests/*.rs`), sharing the helpers of `tests/it`: a
//! new workload's tests edit no list of modules.

#[allow(dead_code)]
#[path = "it/common.rs"]
mod common;

use common::*;

fn run(dir: &std::path::Path, url: &str, extra: &[&str]) -> Out {
    let results = dir.join("results");
    let mut args = vec![
        "run",
        "round-trip",
        "--target",
        url,
        "--threads",
        "1,2",
        "--warmup",
        "200ms",
        "--duration",
        "300ms",
        "--runs",
        "1",
        "--results-dir",
        results.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    eb(dir, &args)
}

fn check(dir: &std::path::Path, url: &str) {
    let out = run(dir, url, &["--round-trip-columns", "3"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("round-trip floor at 2 thread(s): p50 "),
        "the terminal line under the table:\n{}",
        out.stdout
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(result_file(&dir.join("results"))).unwrap())
            .unwrap();
    assert_schema_valid(&doc);
    assert_eq!(doc["config"]["workload"], "round-trip");
    assert_eq!(doc["config"]["workload_options"]["columns"], 3);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "one point per thread count");
    for p in points {
        assert_eq!(p["operation"], "SELECT_CONSTANTS");
        assert!(p["aggregate"]["ops_per_s_max"].as_f64().unwrap() > 0.0);
        assert_eq!(p["aggregate"]["errors_total"], 0);
    }
}

#[test]
fn round_trip_on_sqlite() {
    let dir = tempdir();
    let url = format!("sqlite://{}/rt.db", dir.path().display());
    check(dir.path(), &url);
}

#[test]
fn round_trip_on_mariadb_and_postgres() {
    for var in ["EB_TEST_MYSQL_URL", "EB_TEST_PG_URL"] {
        let Some(url) = server_url(var) else { continue };
        let dir = tempdir();
        check(dir.path(), &url);
    }
}

#[test]
fn round_trip_options_and_help() {
    let dir = tempdir();
    let url = format!("sqlite://{}/rt.db", dir.path().display());
    let out = run(dir.path(), &url, &["--round-trip-columns", "0"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("--round-trip-columns 0"),
        "{}",
        out.stderr
    );
    let help = eb(dir.path(), &["run", "round-trip", "--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    assert!(
        help.stdout.contains("--round-trip-columns"),
        "{}",
        help.stdout
    );
    // Another workload is told whose option it is.
    let out = eb(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--round-trip-columns",
            "2",
            "--target",
            &url,
        ],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("applies to round-trip only"),
        "{}",
        out.stderr
    );
}
