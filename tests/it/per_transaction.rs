//! `--connect per-transaction` (pgbench -C): every operation on a new connection, which the
//! server counts (MariaDB's `Connections`, PostgreSQL's pg_stat_database.sessions) and closes
//! cleanly (MariaDB's `Aborted_clients` stays put, on the lean client and on mysql_async);
//! the result shows the set-up time on its own.

use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::Conn;

/// One number the server answers `sql` with, on a connection of its own.
fn number(url: &str, sql: &str) -> u64 {
    block(async {
        let mut c = Conn::connect(&spec(url)).await.expect("connect");
        let v = c.query_one(sql).await.expect("query");
        let _ = c.close().await;
        v.and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0) as u64
    })
}

fn mariadb_status(url: &str, name: &str) -> u64 {
    number(
        url,
        &format!(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '{name}'"
        ),
    )
}

/// The table of the point selects (its own invocation, before the counters are read).
fn prepare(dir: &std::path::Path, url: &str) {
    let out = eb(
        dir,
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            url,
            "--table-size",
            "1000",
        ],
    );
    assert_eq!(out.code, 0, "prepare: {}", out.stderr);
}

/// A short oltp_point_select run with `--connect per-transaction`; the result and stderr.
fn point_select(dir: &std::path::Path, url: &str) -> (Json, String) {
    let out = eb(
        dir,
        &[
            "run",
            "oltp_point_select",
            "--target",
            url,
            "--table-size",
            "1000",
            "--threads",
            "2",
            "--warmup",
            "300ms",
            "--duration",
            "1s",
            "--runs",
            "1",
            "--connect",
            "per-transaction",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "run: {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    (doc, out.stderr)
}

/// Operations the run asked the server for (warm-up and runs, errors included), and checks of
/// what the result says about them: every operation had its own connection, whose set-up is
/// measured and is part of the latency.
fn operations(doc: &Json, stderr: &str) -> u64 {
    assert_eq!(
        doc["config"]["connect"], "per-transaction",
        "{}",
        doc["config"]
    );
    let p = &doc["points"][0];
    let wu = &p["warmup"];
    let run = &p["runs"][0];
    let ops = run["ops"].as_u64().unwrap();
    let errors = run["errors_total"].as_u64().unwrap();
    assert!(ops > 20, "{run}");
    assert_eq!(errors, 0, "{run}");
    let c = &run["connect_per_transaction"];
    assert_eq!(c["connections"].as_u64(), Some(ops), "{c}");
    let setup_p50 = c["setup_us"]["p50_us"].as_u64().unwrap();
    let latency_p50 = run["latency_us"]["p50_us"].as_u64().unwrap();
    assert!(setup_p50 > 0 && setup_p50 <= latency_p50, "{c} {run}");
    let share = c["setup_share"].as_f64().unwrap();
    assert!(share > 0.0 && share < 1.0, "{c}");
    assert!(
        stderr.contains("per transaction:") && stderr.contains("set-up p50"),
        "{stderr}"
    );
    ops + errors + wu["ops"].as_u64().unwrap() + wu["errors"].as_u64().unwrap()
}

/// Every connection of the invocation says goodbye: the workers', and the harness's admin
/// connection (mysql_async's is disconnected, not dropped).
fn mariadb_check(url: &str) {
    let dir = tempdir();
    prepare(dir.path(), url);
    let conns0 = mariadb_status(url, "CONNECTIONS");
    let aborted0 = mariadb_status(url, "ABORTED_CLIENTS");
    let (doc, stderr) = point_select(dir.path(), url);
    let conns1 = mariadb_status(url, "CONNECTIONS");
    let aborted1 = mariadb_status(url, "ABORTED_CLIENTS");
    let ops = operations(&doc, &stderr);
    assert!(
        conns1 - conns0 >= ops,
        "Connections grew by {} for {ops} operations",
        conns1 - conns0
    );
    assert!(
        aborted1 == aborted0,
        "Aborted_clients grew by {} for {ops} connections: not every one said goodbye",
        aborted1 - aborted0
    );
}

#[test]
fn mariadb_opens_a_connection_per_transaction() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    mariadb_check(&fresh_db(&url, "eb_per_tx"));
}

#[test]
fn mariadb_per_transaction_on_mysql_async_closes_cleanly() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let db = fresh_db(&url, "eb_per_tx_async");
    let sep = if db.contains('?') { '&' } else { '?' };
    mariadb_check(&format!("{db}{sep}driver=mysql_async"));
}

#[test]
fn postgres_opens_a_connection_per_transaction() {
    let Some(url) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _g = server_lock();
    let db = fresh_db(&url, "eb_per_tx");
    let sessions = || {
        number(
            &db,
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()",
        )
    };
    let dir = tempdir();
    prepare(dir.path(), &db);
    let s0 = sessions();
    let (doc, stderr) = point_select(dir.path(), &db);
    let ops = operations(&doc, &stderr);
    // A backend reports its session when it exits, a moment after the client's goodbye.
    let t = Instant::now();
    let mut grown = sessions() - s0;
    while grown < ops && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(200));
        grown = sessions() - s0;
    }
    assert!(
        grown >= ops,
        "sessions grew by {grown} for {ops} operations"
    );
}
