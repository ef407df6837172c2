//! iibench for real on SQLite, MariaDB (InnoDB and RocksDB) and PostgreSQL: a few thousand
//! rows in batches, with a query thread; the window curve adds up to the rows inserted (and
//! the table holds exactly them), the server's bytes written per window and in total are
//! there when its pid is known, and bad flags are one-line usage errors.

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::Conn;

const ROWS: u64 = 3000;

fn run(dir: &std::path::Path, url: &str, extra: &[&str]) -> Json {
    let mut args = vec![
        "run",
        "iibench",
        "--target",
        url,
        "--max-rows",
        "3000",
        "--rows-per-commit",
        "200",
        "--window-rows",
        "500",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = eb(dir, &args);
    assert_eq!(out.code, 0, "iibench {extra:?}: {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    // The file on disk is the same document.
    let file: Json = serde_json::from_str(
        &std::fs::read_to_string(result_file(&dir.join("enginebench-results"))).unwrap(),
    )
    .unwrap();
    assert_eq!(file["points"], doc["points"]);
    doc
}

fn count_rows(url: &str) -> i64 {
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        c.query_one("SELECT count(*) FROM purchases_index")
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap()
    })
}

/// The curve adds up: windows of whole batches, cumulative, ending at the rows inserted.
fn check_curve(doc: &Json, with_server: bool) {
    let p = &doc["points"][0];
    let ii = &p["sections"]["iibench"];
    assert_eq!(ii["rows"].as_u64(), Some(ROWS));
    assert_eq!(ii["batches"].as_u64(), Some(ROWS / 200));
    assert_eq!(p["runs"][0]["rows"].as_u64(), Some(ROWS));
    assert_eq!(p["runs"][0]["ops"].as_u64(), Some(ROWS / 200));
    let windows = ii["windows"].as_array().unwrap();
    // 500-row windows close on 200-row batches: at 600, 1000, 1600, 2000, 2600, 3000.
    let ends: Vec<u64> = windows
        .iter()
        .map(|w| w["rows_end"].as_u64().unwrap())
        .collect();
    assert_eq!(ends, vec![600, 1000, 1600, 2000, 2600, 3000]);
    let sum: u64 = windows.iter().map(|w| w["rows"].as_u64().unwrap()).sum();
    assert_eq!(sum, ROWS);
    let logical: u64 = windows
        .iter()
        .map(|w| w["logical_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(logical, ii["logical_bytes"].as_u64().unwrap());
    // 32 bytes + 10 of data per row by default.
    assert_eq!(logical, ROWS * 42);
    for w in windows {
        assert!(w["rows_per_s"].as_f64().unwrap() > 0.0);
        // Other processes' CPU over every window, and its flag.
        assert!(w["others_cpus"].as_f64().unwrap() >= 0.0, "{w}");
        assert!(w["disturbed"].is_boolean(), "{w}");
    }
    let wear = &ii["wear"];
    assert!(wear["disk_after"]["allocated_bytes"].as_u64().unwrap() > 0);
    assert!(wear["disk_growth_bytes"].as_i64().is_some());
    if with_server {
        let total = wear["server_written_bytes_total"].as_u64().unwrap();
        let run = wear["server_written_bytes_run"].as_u64().unwrap();
        assert!(total >= run, "{total} < {run}");
        // The rows and their indexes reached the storage layer by the end of the flush.
        assert!(total > ROWS * 42, "total written {total}");
        assert!(wear["write_amplification"].as_f64().unwrap() > 1.0);
        let per_window: u64 = windows
            .iter()
            .map(|w| w["server_written_bytes"].as_u64().unwrap())
            .sum();
        // The run's figure also holds what was written after the last window closed.
        assert!(per_window <= run, "{per_window} > {run}");
        assert!(per_window > 0);
    } else {
        assert!(wear.get("server_written_bytes_total").is_none());
    }
    // The query thread ran and read 10 rows per query (the table is never nearly empty of
    // qualifying rows for long: some queries return fewer).
    let q = &ii["queries"];
    assert!(q["queries"].as_u64().unwrap() > 0, "{q}");
    assert!(q["rows"].as_u64().unwrap() <= q["queries"].as_u64().unwrap() * 10);
}

#[test]
fn sqlite_small_run() {
    let dir = tempdir();
    let url = format!("sqlite://{}/ii.db", dir.path().display());
    // --warmup 0 and --runs 1 (what harnesses pass to every workload) are accepted.
    let doc = run(
        dir.path(),
        &url,
        &["--query-threads", "1", "--warmup", "0", "--runs", "1"],
    );
    check_curve(&doc, false);
    assert_eq!(count_rows(&url), ROWS as i64);
    // The options and the data's measured compressibility are in the result.
    // One wake-up per batch: no SCHED_BATCH (it delayed them on a loaded machine).
    assert_eq!(doc["config"]["sched_batch"], false);
    let o = &doc["config"]["workload_options"];
    assert_eq!(o["rows_per_commit"], 200);
    assert!(o["data_compression"]["ratios"]["lz4"].as_f64().unwrap() > 0.0);
    assert!(doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("zstd-3")));
}

#[test]
fn sqlite_time_bound_and_compressed_data() {
    let dir = tempdir();
    let url = format!("sqlite://{}/ii.db", dir.path().display());
    let out = eb(
        dir.path(),
        &[
            "run",
            "iibench",
            "--target",
            &url,
            "--duration",
            "1s",
            "--window-rows",
            "2000",
            "--data-length-min",
            "200",
            "--data-length-max",
            "400",
            "--compressed-fraction",
            "0.3",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    assert_schema_valid(&doc);
    let ii = &doc["points"][0]["sections"]["iibench"];
    let rows = ii["rows"].as_u64().unwrap();
    assert!(rows > 0);
    assert_eq!(count_rows(&url), rows as i64);
    // Bounded by time: stopped about when asked (the last batch finishes after the deadline).
    let e = ii["elapsed_s"].as_f64().unwrap();
    assert!((0.9..5.0).contains(&e), "elapsed {e}");
    let z = doc["config"]["workload_options"]["data_compression"]["ratios"]["zstd3"]
        .as_f64()
        .unwrap();
    assert!((z - 0.3).abs() <= 0.03, "zstd-3 ratio {z}");
}

fn mysql(engine: &str) {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _lock = server_lock();
    let url = fresh_db(&base, &format!("eb_iib_{}", engine.to_lowercase()));
    let pid = std::env::var("EB_TEST_MYSQL_PID").ok();
    let mut extra = vec!["--engine", engine, "--query-threads", "1"];
    if let Some(p) = &pid {
        extra.extend(["--server-pid", p.as_str()]);
    }
    let dir = tempdir();
    let doc = run(dir.path(), &url, &extra);
    check_curve(&doc, pid.is_some());
    assert_eq!(count_rows(&url), ROWS as i64);
    assert_eq!(
        doc["target"]["engine"]
            .as_str()
            .unwrap()
            .to_ascii_lowercase(),
        engine.to_ascii_lowercase()
    );
    // The three secondary indexes are there.
    let n = block(async {
        let mut c = Conn::connect(&spec(&url)).await.unwrap();
        c.query_one("SELECT count(DISTINCT index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'purchases_index'")
            .await
            .unwrap()
            .unwrap()
    });
    assert_eq!(n, "4");
}

#[test]
fn mariadb_innodb_small_run() {
    mysql("InnoDB");
}

#[test]
fn mariadb_rocksdb_small_run() {
    mysql("ROCKSDB");
}

#[test]
fn postgres_small_run() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _lock = server_lock();
    let url = fresh_db(&base, "eb_iib_pg");
    let pid = std::env::var("EB_TEST_PG_PID").ok();
    let mut extra = vec!["--query-threads", "1"];
    if let Some(p) = &pid {
        extra.extend(["--server-pid", p.as_str()]);
    }
    let dir = tempdir();
    let doc = run(dir.path(), &url, &extra);
    check_curve(&doc, pid.is_some());
    assert_eq!(count_rows(&url), ROWS as i64);
}

#[test]
fn bad_flags_are_one_line_usage_errors() {
    let dir = tempdir();
    let url = format!("sqlite://{}/ii.db", dir.path().display());
    for args in [
        vec!["--compressed-fraction", "1.5"],
        vec!["--compressed-fraction", "0"],
        vec!["--max-rows", "0"],
        vec!["--rows-per-commit", "0"],
        vec!["--threads", "1,2"],
        vec!["--runs", "3"],
        vec!["--warmup", "5s"],
        vec!["--table-size", "10"],
        vec!["--data-length-max", "5000"],
        vec!["--max-table-rows", "0"],
    ] {
        let mut a = vec!["run", "iibench", "--target", url.as_str()];
        a.extend_from_slice(&args);
        let out = eb(dir.path(), &a);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_eq!(
            out.stderr.trim().lines().count(),
            1,
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"));
    }
    // iibench's flags and --compressed-fraction are refused by workloads that ignore them.
    for args in [
        vec!["run", "oltp_point_select", "--max-rows", "10"],
        vec!["run", "tpcc", "--compressed-fraction", "0.5"],
    ] {
        let mut a = args.clone();
        a.extend(["--target", url.as_str()]);
        let out = eb(dir.path(), &a);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("iibench"), "{}", out.stderr);
    }
}

/// --max-table-rows (iibench.py's --with_max_table_rows): the table ends at that size, every
/// batch past it came with one DELETE of as many rows, counted in the result.
fn deletes(url: &str, extra: &[&str]) {
    let dir = tempdir();
    let mut args = vec!["--max-table-rows", "1000"];
    args.extend_from_slice(extra);
    let doc = run(dir.path(), url, &args);
    assert_eq!(count_rows(url), 1000);
    let ii = &doc["points"][0]["sections"]["iibench"];
    assert_eq!(ii["rows"].as_u64(), Some(ROWS));
    let d = &ii["deletes"];
    assert_eq!(d["max_table_rows"], 1000, "{d}");
    assert_eq!(d["statements"].as_u64(), Some((ROWS - 1000) / 200), "{d}");
    assert_eq!(d["range_rows"].as_u64(), Some(ROWS - 1000), "{d}");
    assert_eq!(d["table_rows_end"], 1000, "{d}");
    assert_eq!(d["errors"], 0, "{d}");
    assert_eq!(doc["config"]["workload_options"]["max_table_rows"], 1000);
    // The oldest rows are the ones gone.
    let min = block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        c.query_one("SELECT min(transactionid) FROM purchases_index")
            .await
            .unwrap()
            .unwrap()
    });
    assert_eq!(min, (ROWS - 1000 + 1).to_string());
}

#[test]
fn sqlite_deletes_keep_the_table_size() {
    let dir = tempdir();
    deletes(&format!("sqlite://{}/ii.db", dir.path().display()), &[]);
}

#[test]
fn mariadb_innodb_deletes_keep_the_table_size() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _lock = server_lock();
    deletes(&fresh_db(&base, "eb_iib_deletes"), &["--engine", "InnoDB"]);
}
