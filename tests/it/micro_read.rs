//! micro-read for real on SQLite, MariaDB (InnoDB, MyISAM) and PostgreSQL: every query returns
//! what a direct SQL count says, the runs read every row, warm-up is excluded, and on MariaDB
//! the operations counted equal the server's own count of executed statements.

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::{Conn, Value};
use enginebench::rng::Rng;
use enginebench::workload::micro_read::Query;

const ROWS: u64 = 3000;

fn lit(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        other => panic!("micro-read parameters are integers, got {other:?}"),
    }
}

/// The row count a query must return for these parameters, from an independent count(*).
async fn direct_count(c: &mut Conn, q: Query, p: &[Value]) -> u64 {
    let name = q.name();
    if name.starts_with("READ_PK_RANGE") || name == "READ_FTS" {
        return 1; // aggregates: one row
    }
    let pred = if name.starts_with("READ_PK_POINT") {
        format!("id = {}", lit(&p[0]))
    } else if name.starts_with("READ_KEY_POINT") {
        format!("country_id = {}", lit(&p[0]))
    } else {
        format!(
            "country_id = {} AND state_id BETWEEN {} AND {}",
            lit(&p[0]),
            lit(&p[1]),
            lit(&p[2])
        )
    };
    let n: u64 = c
        .query_one(&format!("SELECT count(*) FROM normal WHERE {pred}"))
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    match (name.ends_with("_LIMIT"), name.starts_with("READ_KEY_POINT")) {
        (true, true) => n.min(5),
        (true, false) => n.min(50),
        _ => n,
    }
}

fn check_row_counts(url: &str, engine: Option<&str>) {
    let dir = tempdir();
    let mut args = vec![
        "prepare",
        "micro-read",
        "--target",
        url,
        "--table-size",
        "3000",
    ];
    if let Some(e) = engine {
        args.extend(["--engine", e]);
    }
    let out = eb(dir.path(), &args);
    assert_eq!(out.code, 0, "prepare failed: {}", out.stderr);
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        let total: u64 = c
            .query_one("SELECT count(*) FROM normal")
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(total, ROWS);
        let mut rng = Rng::new(99);
        let mut params = Vec::new();
        for q in Query::ALL {
            let st = c.prepare(q.sql()).await.unwrap();
            let mut sum = 0;
            let draws = 30;
            for _ in 0..draws {
                q.params(&mut rng, ROWS, &mut params);
                let got = c.exec_rows(st, &params).await.unwrap();
                assert_eq!(
                    got,
                    direct_count(&mut c, q, &params).await,
                    "{} with {params:?}",
                    q.name()
                );
                sum += got;
            }
            let avg = sum as f64 / draws as f64;
            // The documented domains: ~80 rows per key point, ~60 per key range.
            match q.name() {
                "READ_KEY_POINT" | "READ_KEY_POINT_NO_DATA" => {
                    assert!((55.0..=105.0).contains(&avg), "{}: {avg}", q.name())
                }
                "READ_KEY_RANGE" | "READ_KEY_RANGE_NO_DATA" => {
                    assert!(avg > 50.0, "{}: {avg}", q.name())
                }
                "READ_KEY_POINT_LIMIT" | "READ_KEY_POINT_NO_DATA_LIMIT" => assert_eq!(avg, 5.0),
                _ => {}
            }
        }
    });
}

/// Run three queries at 1 and 3 threads, 2 runs each; return the result document.
fn run_small(url: &str, engine: Option<&str>) -> Json {
    let dir = tempdir();
    let results = dir.path().join("results");
    let mut args = vec![
        "run",
        "micro-read",
        "--target",
        url,
        "--table-size",
        "3000",
        "--threads",
        "1,3",
        "--runs",
        "2",
        "--duration",
        "400ms",
        "--warmup",
        "300ms",
        "--format",
        "json",
        "--queries",
        "READ_PK_POINT,READ_KEY_POINT_LIMIT,READ_KEY_RANGE_NO_DATA",
        "--results-dir",
        results.to_str().unwrap(),
    ];
    if let Some(e) = engine {
        args.extend(["--engine", e]);
    }
    let out = eb(dir.path(), &args);
    assert_eq!(out.code, 0, "run failed: {}", out.stderr);
    let doc: Json =
        serde_json::from_str(&out.stdout).expect("--format json prints the result document");
    let file: Json =
        serde_json::from_str(&std::fs::read_to_string(result_file(&results)).unwrap()).unwrap();
    assert_eq!(
        doc, file,
        "stdout JSON and the result file must be the same document"
    );
    assert_schema_valid(&doc);
    assert_eq!(doc["status"], "complete");
    assert_eq!(doc["points"].as_array().unwrap().len(), 6);
    for p in doc["points"].as_array().unwrap() {
        let op = p["operation"].as_str().unwrap();
        assert!(p["warmup"]["ops"].as_u64().unwrap() > 0, "warm-up ran");
        let runs = p["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        for r in runs {
            let ops = r["ops"].as_u64().unwrap();
            assert!(ops > 0, "{op}: no operations");
            assert_eq!(r["errors_total"], 0, "{op}: {r}");
            let interval_ops: u64 = r["intervals"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["ops"].as_u64().unwrap())
                .sum();
            assert_eq!(interval_ops, ops, "{op}: intervals must add up to the run");
            let rows_per_op = r["rows_per_op"].as_f64().unwrap();
            match op {
                "READ_PK_POINT" => assert_eq!(rows_per_op, 1.0),
                "READ_KEY_POINT_LIMIT" => assert_eq!(rows_per_op, 5.0),
                _ => assert!(rows_per_op > 50.0, "{op}: {rows_per_op} rows per op"),
            }
            let lat = &r["latency_us"];
            assert!(
                lat["p50_us"].as_u64() <= lat["p99_us"].as_u64()
                    && lat["p99_us"].as_u64() <= lat["max_us"].as_u64()
            );
            assert!(r["client_cpu"]["us_per_op"].as_f64().unwrap() > 0.0);
        }
        let agg = &p["aggregate"];
        assert!(agg["ops_per_s_max"].as_f64() >= agg["ops_per_s_median"].as_f64());
        assert!(agg["ops_per_s_median"].as_f64() >= agg["ops_per_s_min"].as_f64());
    }
    doc
}

#[test]
fn sqlite_end_to_end() {
    let dir = tempdir();
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    check_row_counts(&url, None);
    let doc = run_small(&url, None);
    assert_eq!(doc["target"]["dbms"], "sqlite");
    assert!(doc["target"]["server_version"]
        .as_str()
        .unwrap()
        .starts_with("SQLite 3."));
    assert!(
        doc["load"].as_array().unwrap().is_empty(),
        "the prepared table is reused"
    );
}

#[test]
fn sqlite_default_target_and_table_output() {
    let dir = tempdir();
    let out = eb(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--table-size",
            "2000",
            "--threads",
            "2",
            "--runs",
            "1",
            "--duration",
            "200ms",
            "--warmup",
            "0",
            "--queries",
            "READ_PK_POINT,READ_FTS",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        dir.path().join("enginebench-data/enginebench.db").exists(),
        "default target is an SQLite file under ./enginebench-data"
    );
    assert!(
        out.stdout.contains("READ_PK_POINT") && out.stdout.contains("READ_FTS"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("loaded 2000 rows"), "{}", out.stderr);
    let csv = eb(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--table-size",
            "2000",
            "--threads",
            "1",
            "--runs",
            "2",
            "--duration",
            "200ms",
            "--warmup",
            "0",
            "--queries",
            "READ_PK_POINT",
            "--format",
            "csv",
        ],
    );
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "header + 2 runs: {}", csv.stdout);
    assert!(lines[0].starts_with("workload,operation,threads,run,"));
    assert!(lines[1].starts_with("micro-read,READ_PK_POINT,1,1,"));
}

/// Each measured run's operations equal the server's Com_stmt_execute delta over that run:
/// warm-up is excluded and nothing is counted twice.
fn check_statement_counts(doc: &Json) {
    for p in doc["points"].as_array().unwrap() {
        for r in p["runs"].as_array().unwrap() {
            let ops = r["ops"].as_f64().unwrap();
            let server = r["server_counters"]["Com_stmt_execute"]
                .as_f64()
                .unwrap_or(0.0);
            assert_eq!(
                ops, server,
                "{} at {} threads run {}: client counted {ops}, server executed {server}",
                p["operation"], p["threads"], r["run"]
            );
        }
    }
}

fn mysql_engine(engine: &str, db: &str) {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _lock = server_lock();
    let url = fresh_db(&base, db);
    check_row_counts(&url, Some(engine));
    let doc = run_small(&url, Some(engine));
    assert_eq!(
        doc["target"]["engine"]
            .as_str()
            .unwrap()
            .to_ascii_lowercase(),
        engine.to_ascii_lowercase()
    );
    assert!(doc["target"]["server_version"]
        .as_str()
        .unwrap()
        .contains("MariaDB"));
    check_statement_counts(&doc);
}

#[test]
fn mariadb_innodb() {
    mysql_engine("InnoDB", "eb_it_innodb");
}

#[test]
fn mariadb_myisam() {
    mysql_engine("MyISAM", "eb_it_myisam");
}

#[test]
fn mariadb_over_tcp() {
    let Some(base) = server_url("EB_TEST_MYSQL_TCP_URL") else {
        return;
    };
    let _lock = server_lock();
    let url = fresh_db(&base, "eb_it_tcp");
    let dir = tempdir();
    let out = eb(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--target",
            &url,
            "--table-size",
            "500",
            "--threads",
            "2",
            "--runs",
            "1",
            "--duration",
            "200ms",
            "--warmup",
            "0",
            "--queries",
            "READ_PK_POINT",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn postgres() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_it_pg");
    check_row_counts(&url, None);
    let doc = run_small(&url, None);
    assert!(doc["target"]["server_version"]
        .as_str()
        .unwrap()
        .contains("PostgreSQL"));
}

/// SIGINT in the middle of a measured run: the client stops within 3 s with exit code 130, and
/// the result on disk is valid, says `interrupted`, and keeps the point that finished.
#[test]
fn sigint_keeps_finished_points() {
    use std::time::{Duration, Instant};
    let dir = tempdir();
    let results = dir.path().join("results");
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    let prep = eb(
        dir.path(),
        &[
            "prepare",
            "micro-read",
            "--target",
            &url,
            "--table-size",
            "2000",
        ],
    );
    assert_eq!(prep.code, 0, "{}", prep.stderr);
    let mut child = std::process::Command::new(BIN)
        .current_dir(dir.path())
        .args([
            "run",
            "micro-read",
            "--target",
            &url,
            "--table-size",
            "2000",
            "--threads",
            "1,2",
            "--runs",
            "1",
            "--duration",
            "1500ms",
            "--warmup",
            "0",
            "--queries",
            "READ_PK_POINT,READ_KEY_POINT",
            "--results-dir",
            results.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2300));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let sent = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "the client did not stop after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let stopped = sent.elapsed();
    assert!(
        stopped < Duration::from_secs(3),
        "stopped after {stopped:?}"
    );
    assert_eq!(status.code(), Some(130));
    let doc: Json =
        serde_json::from_str(&std::fs::read_to_string(result_file(&results)).unwrap()).unwrap();
    assert_schema_valid(&doc);
    assert_eq!(doc["status"], "interrupted");
    let points = doc["points"].as_array().unwrap();
    assert!(
        !points.is_empty(),
        "the point that finished before the signal is kept"
    );
    assert_eq!(points[0]["runs"][0]["interrupted"], false);
    assert!(points.len() < 4, "the sweep stopped at the signal");
}
