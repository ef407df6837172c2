//! `--statements prepared|text|extended` against the real servers, through every client (the
//! lean ones and the general drivers) and both I/O paths of the lean ones (the binary's runs
//! with `--client-io auto` and `epoll`; the library's under the suite's `EB_CLIENT_IO`):
//! - MariaDB: a text point-select run prepares nothing (`Com_stmt_prepare` and
//!   `Com_stmt_execute` do not move) and sends every operation as a text query (`Com_select`
//!   grows by at least the run's operations); a prepared run, the control, does prepare.
//! - PostgreSQL: the server logs every statement of the test's own database
//!   (`ALTER DATABASE ... SET log_statement = 'all'`, read from the postmaster's log): a text run
//!   logs each point select as a simple-protocol `statement:` and no `execute` at all (no named
//!   or unnamed statement ran), an extended run logs `execute <unnamed>` and no named one, and
//!   the prepared control logs `execute s0`.
//! - `extended` on MariaDB is refused: one line, exit 2.
//! - A text parameter with quotes and backslashes (an injection attempt among them) comes back
//!   exactly in every mode, also under MySQL's NO_BACKSLASH_ESCAPES and PostgreSQL's
//!   standard_conforming_strings = off; integers read back as integers; the pipelined paths
//!   (BEGIN with the first statement, statements sent ahead of COMMIT, batched reads) run in
//!   every mode and return a failed statement's error at COMMIT.
//! - Whole workloads whose transactions use those paths (oltp_read_write on MariaDB, tpcb on
//!   PostgreSQL) run without errors in text mode (and extended on PostgreSQL).

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::{Conn, StatementMode, Value};

/// The client I/O paths a binary run is made on: io_uring where this machine allows it (by
/// name: `auto` leaves these small loops on epoll), and epoll.
fn io_paths() -> [&'static str; 2] {
    match enginebench::db::ring::probe() {
        Ok(()) => ["io_uring", "epoll"],
        Err(_) => ["auto", "epoll"],
    }
}

fn with_opt(url: &str, opt: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{opt}")
}

/// `enginebench ARGS` in `dir`, asserted to succeed; its JSON result.
fn run_json(dir: &std::path::Path, args: &[&str], io: &str) -> Json {
    let out = eb_env(dir, args, &[("EB_CLIENT_IO", io)]);
    assert_eq!(out.code, 0, "{args:?} ({io}): {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    // The lean clients ran on the path asked for (io_uring where the suite requires it).
    if doc["client"]["driver"] == "wire" {
        let want = match io {
            "epoll" => Some("epoll"),
            _ if std::env::var("EB_REQUIRE_IO_URING").as_deref() == Ok("1") => Some("io_uring"),
            _ => None,
        };
        if let Some(w) = want {
            assert_eq!(doc["client"]["io"], w, "{args:?}");
        }
    }
    doc
}

/// A short point-select run on `url` with `--statements mode`.
fn point_select(dir: &std::path::Path, url: &str, mode: &str, io: &str) -> Json {
    let results = dir.join("results");
    run_json(
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
            "0",
            "--duration",
            "1s",
            "--runs",
            "1",
            "--statements",
            mode,
            "--format",
            "json",
            "--results-dir",
            results.to_str().unwrap(),
        ],
        io,
    )
}

fn ops_and_errors(doc: &Json) -> (u64, u64) {
    let r = &doc["points"][0]["runs"][0];
    (
        r["ops"].as_u64().unwrap(),
        r["errors_total"].as_u64().unwrap(),
    )
}

fn prepare_point_select(dir: &std::path::Path, url: &str) {
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
    assert_eq!(out.code, 0, "{}", out.stderr);
}

fn mysql_status(url: &str, names: &[&str]) -> Vec<u64> {
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        let mut out = Vec::new();
        for n in names {
            let rows = c
                .query(&format!("SHOW GLOBAL STATUS LIKE '{n}'"))
                .await
                .unwrap();
            out.push(rows[0][1].as_deref().unwrap().parse().unwrap());
        }
        out
    })
}

#[test]
fn mariadb_text_point_select_prepares_nothing() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    // Global counters: no other test may run statements meanwhile.
    let _g = server_lock();
    let url = fresh_db(&base, "eb_stmt_my");
    let dir = tempdir();
    prepare_point_select(dir.path(), &url);
    let names = ["Com_stmt_prepare", "Com_stmt_execute", "Com_select"];
    let async_url = with_opt(&url, "driver=mysql_async");
    let runs: Vec<(&str, &str)> = io_paths()
        .iter()
        .map(|io| (url.as_str(), *io))
        .chain([(async_url.as_str(), "auto")])
        .collect();
    for (target, io) in runs {
        // The counters are the server's: a test that does not take the server lock may
        // prepare meanwhile. A run that prepares does so every time; noise does not repeat.
        let mut moved = Vec::new();
        for _ in 0..3 {
            let before = mysql_status(&url, &names);
            let doc = point_select(dir.path(), target, "text", io);
            let after = mysql_status(&url, &names);
            let (ops, errors) = ops_and_errors(&doc);
            assert_eq!(errors, 0, "{target} {io}");
            assert!(ops > 100, "{target} {io}: {ops} operations");
            assert_eq!(doc["config"]["statements"], "text", "named in the result");
            assert!(
                after[2] - before[2] >= ops,
                "{target} {io}: Com_select grew by {} for {ops} operations",
                after[2] - before[2]
            );
            moved = vec![after[0] - before[0], after[1] - before[1]];
            if moved == [0, 0] {
                break;
            }
        }
        assert_eq!(
            moved,
            [0, 0],
            "{target} {io}: Com_stmt_prepare and Com_stmt_execute moved in every try"
        );
    }
    // The control: the default prepares on the server (once per connection) and executes.
    let before = mysql_status(&url, &names);
    let doc = point_select(dir.path(), &url, "prepared", io_paths()[0]);
    let after = mysql_status(&url, &names);
    let (ops, _) = ops_and_errors(&doc);
    assert!(after[0] - before[0] >= 2, "a prepared run prepares");
    assert!(after[1] - before[1] >= ops, "and executes");
    assert!(
        doc["config"].get("statements").is_none(),
        "prepared: as before"
    );
}

#[test]
fn mariadb_refuses_extended_in_one_line() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let dir = tempdir();
    for cmd in ["run", "prepare"] {
        let out = eb(
            dir.path(),
            &[
                cmd,
                "oltp_point_select",
                "--target",
                &url,
                "--statements",
                "extended",
            ],
        );
        assert_eq!(out.code, 2, "{}", out.stderr);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", out.stderr);
        assert!(
            lines[0].contains("--statements extended is PostgreSQL's")
                && lines[0].contains("MariaDB/MySQL takes prepared or text"),
            "{}",
            lines[0]
        );
    }
}

/// The postmaster's log (its standard error, where `db-servers.sh` points `pg_ctl -l`).
fn pg_log() -> Option<std::path::PathBuf> {
    let pid = std::env::var("EB_TEST_PG_PID").ok()?;
    std::fs::read_link(format!("/proc/{pid}/fd/2"))
        .ok()
        .filter(|p| p.is_file())
}

/// What the server logged from `from` bytes on.
fn log_since(path: &std::path::Path, from: u64) -> String {
    use std::io::{Read, Seek};
    let mut f = std::fs::File::open(path).unwrap();
    f.seek(std::io::SeekFrom::Start(from)).unwrap();
    let mut s = String::new();
    f.read_to_string(&mut s).unwrap();
    s
}

#[test]
fn postgres_text_and_extended_runs_prepare_no_statement() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let Some(log) = pg_log() else {
        panic!("the test server's log (the postmaster's stderr) must be readable: EB_TEST_PG_PID");
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_stmt_pg");
    let dir = tempdir();
    prepare_point_select(dir.path(), &url);
    // Only this database's sessions log their statements.
    block(async {
        let mut c = Conn::connect(&spec(&base)).await.unwrap();
        c.execute("ALTER DATABASE eb_stmt_pg SET log_statement = 'all'")
            .await
            .unwrap();
    });
    let tokio_url = with_opt(&url, "driver=tokio_postgres");
    let mut runs: Vec<(&str, &str, &str)> = Vec::new();
    for mode in ["text", "extended"] {
        for io in io_paths() {
            runs.push((url.as_str(), mode, io));
        }
        runs.push((tokio_url.as_str(), mode, "auto"));
    }
    runs.push((url.as_str(), "prepared", io_paths()[0]));
    let select = "SELECT c FROM sbtest1 WHERE id=";
    for (target, mode, io) in runs {
        let from = std::fs::metadata(&log).unwrap().len();
        let doc = point_select(dir.path(), target, mode, io);
        let logged = log_since(&log, from);
        let (ops, errors) = ops_and_errors(&doc);
        let what = format!("{target} {mode} {io}");
        assert_eq!(errors, 0, "{what}");
        assert!(ops > 100, "{what}: {ops} operations");
        let count = |needle: &str| logged.lines().filter(|l| l.contains(needle)).count() as u64;
        let simple = count(&format!("statement: {select}"));
        let unnamed = count(&format!("execute <unnamed>: {select}"));
        // The lean client names its statements s0, s1, ...
        let named = logged
            .lines()
            .filter(|l| {
                l.split("execute s")
                    .nth(1)
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            })
            .count() as u64;
        match mode {
            "text" => {
                assert_eq!(doc["config"]["statements"], "text");
                assert!(
                    simple >= ops,
                    "{what}: {simple} simple queries for {ops} operations"
                );
                assert_eq!(unnamed + named, 0, "{what}: a statement was executed");
            }
            "extended" => {
                assert_eq!(doc["config"]["statements"], "extended");
                assert!(
                    unnamed >= ops,
                    "{what}: {unnamed} unnamed for {ops} operations"
                );
                assert_eq!(named, 0, "{what}: a named statement was executed");
                assert_eq!(simple, 0, "{what}: a point select went as a simple query");
            }
            _ => {
                assert!(
                    named >= ops,
                    "{what}: the control executes named statements"
                );
                assert_eq!(simple + unnamed, 0, "{what}");
            }
        }
    }
    block(async {
        let mut c = Conn::connect(&spec(&base)).await.unwrap();
        c.execute("ALTER DATABASE eb_stmt_pg RESET log_statement")
            .await
            .unwrap();
    });
}

/// Quotes, backslashes (alone, before a quote, at the end), an attempt to end the literal and
/// run a statement of its own, a comment opener, LIKE's wildcards and multi-byte characters.
const NASTY: &[&str] = &[
    "O'Brien",
    r"back\slash",
    r"\'; DROP TABLE q; -- ",
    "'); DROP TABLE q; --",
    r"ends with \",
    r"\\'\\",
    "%_ 日本語 ✓ 🚀 \"double\" `tick` $$dollar$$ ?",
    "",
];

/// Round trips through `conn` in its mode: inserts with text parameters, reads them back by
/// value (text and integer results), then the pipelined paths.
async fn round_trip(c: &mut Conn, what: &str) {
    c.execute("DROP TABLE IF EXISTS q").await.unwrap();
    let charset = match c.dbms() {
        enginebench::db::Dbms::Mysql => " CHARACTER SET utf8mb4",
        _ => "",
    };
    c.execute(&format!(
        "CREATE TABLE q (id INT PRIMARY KEY, s VARCHAR(100){charset}, n INT)"
    ))
    .await
    .unwrap();
    let ins = c
        .prepare("INSERT INTO q (id, s, n) VALUES (?, ?, ?)")
        .await
        .unwrap();
    let by_s = c.prepare("SELECT s FROM q WHERE s = ?").await.unwrap();
    let ints = c
        .prepare("SELECT id, n FROM q WHERE s = ? AND id = ?")
        .await
        .unwrap();
    for (i, s) in NASTY.iter().enumerate() {
        let id = i as i64 + 1;
        let n = Value::Int(-(id * 1000));
        let p = [Value::Int(id), Value::Text(s.to_string()), n];
        assert_eq!(c.exec_rows(ins, &p).await.unwrap(), 0, "{what}: {s}");
        let mut out = Vec::new();
        let rows = c
            .exec_text(by_s, &[Value::Text(s.to_string())], &mut out)
            .await
            .unwrap();
        assert_eq!((rows, out), (1, vec![Some(s.to_string())]), "{what}: {s}");
        let mut out = Vec::new();
        let p = [Value::Text(s.to_string()), Value::Int(id)];
        assert_eq!(c.exec_ints(ints, &p, &mut out).await.unwrap(), 1);
        assert_eq!(out, vec![Some(id), Some(-(id * 1000))], "{what}: {s}");
    }
    // Stored exactly: read back by the admin path (text query, no parameters).
    let stored = c.query("SELECT s FROM q ORDER BY id").await.unwrap();
    let want: Vec<Vec<Option<String>>> = NASTY.iter().map(|s| vec![Some(s.to_string())]).collect();
    assert_eq!(stored, want, "{what}");
    // NULL and a parameter count that does not fit.
    let mut out = Vec::new();
    assert_eq!(
        c.exec_text(by_s, &[Value::Null], &mut out).await.unwrap(),
        0
    );
    assert!(c.exec_rows(by_s, &[]).await.is_err(), "{what}");
    pipelined(c, ins, ints, what).await;
}

/// A transaction through the pipelined paths (BEGIN with the first statement, statements
/// sent ahead of COMMIT, batched integer reads), then one whose second insert fails: its error
/// comes back by COMMIT at the latest and nothing of it stays.
async fn pipelined(
    c: &mut Conn,
    ins: enginebench::db::StmtId,
    ints: enginebench::db::StmtId,
    what: &str,
) {
    if c.dbms() == enginebench::db::Dbms::Mysql {
        // MySQL sends statements ahead only with autocommit off (as tpcc runs).
        c.execute("SET autocommit = 0").await.unwrap();
    }
    c.begin_pipelined("BEGIN").await.unwrap();
    let p = |id: i64| {
        [
            Value::Int(id),
            Value::Text(format!("p'{id}\\")),
            Value::Int(id),
        ]
    };
    c.exec_pipelined(ins, &p(101)).await.unwrap();
    c.exec_pipelined(ins, &p(102)).await.unwrap();
    let (mut out, mut counts) = (Vec::new(), Vec::new());
    let a = [Value::Text("p'101\\".into()), Value::Int(101)];
    let b = [Value::Text("p'102\\".into()), Value::Int(102)];
    c.exec_ints_batch(&[(ints, &a), (ints, &b)], &mut out, &mut counts)
        .await
        .unwrap();
    assert_eq!(
        out,
        vec![Some(101), Some(101), Some(102), Some(102)],
        "{what}"
    );
    assert_eq!(counts, vec![1, 1], "{what}");
    c.commit_pipelined().await.unwrap();
    c.take_pipelined_rows();
    // A duplicate key in the middle.
    c.begin_pipelined("BEGIN").await.unwrap();
    let mut r = c.exec_pipelined(ins, &p(103)).await.map(|_| ());
    if r.is_ok() {
        r = c.exec_pipelined(ins, &p(101)).await.map(|_| ());
    }
    if r.is_ok() {
        r = c.commit_pipelined().await;
    }
    let e = r.expect_err("a duplicate key fails the transaction");
    assert_eq!(
        e.class,
        enginebench::db::ErrorClass::DuplicateKey,
        "{what}: {e}"
    );
    c.execute("ROLLBACK").await.unwrap();
    c.take_pipelined_rows();
    let n = c
        .query_one("SELECT count(*) FROM q WHERE id > 100")
        .await
        .unwrap();
    assert_eq!(
        n.as_deref(),
        Some("2"),
        "{what}: the failed transaction left nothing"
    );
    if c.dbms() == enginebench::db::Dbms::Mysql {
        c.execute("SET autocommit = 1").await.unwrap();
    }
}

/// A connection in `mode` (inside the loop that uses it: a connection belongs to its loop).
async fn connect(url: &str, mode: StatementMode) -> Conn {
    let mut s = spec(url);
    s.statements = mode;
    Conn::connect(&s).await.unwrap()
}

#[test]
fn mariadb_text_parameters_round_trip_exactly() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    // It prepares (the prepared mode's half): not while another test counts prepares.
    let _g = server_lock();
    let url = fresh_db(&base, "eb_stmt_my_quote");
    // mysql_async closed its connection on a parameter count that did not fit (the check
    // below): enginebench refuses that count before the driver sees it.
    for driver in ["wire", "mysql_async"] {
        let url = with_opt(&url, &format!("driver={driver}"));
        for mode in [StatementMode::Prepared, StatementMode::Text] {
            let what = format!("{driver} {}", mode.name());
            // A session whose string literals take no backslash escapes, after one that does.
            block(async {
                let mut c = connect(&url, mode).await;
                round_trip(&mut c, &what).await;
                c.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
                    .await
                    .unwrap();
                round_trip(&mut c, &format!("{what} NO_BACKSLASH_ESCAPES")).await;
            });
        }
    }
}

#[test]
fn postgres_text_parameters_round_trip_exactly() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_stmt_pg_quote");
    for driver in ["wire", "tokio_postgres"] {
        let url = with_opt(&url, &format!("driver={driver}"));
        for mode in [
            StatementMode::Prepared,
            StatementMode::Text,
            StatementMode::Extended,
        ] {
            let what = format!("{driver} {}", mode.name());
            // Backslashes are escapes in plain literals of the second session.
            block(async {
                let mut c = connect(&url, mode).await;
                round_trip(&mut c, &what).await;
                c.execute("SET standard_conforming_strings = off")
                    .await
                    .unwrap();
                round_trip(&mut c, &format!("{what} standard_conforming_strings=off")).await;
            });
            // pgbench -M simple would refuse nothing here; a NUL cannot be PostgreSQL text.
            if mode == StatementMode::Text {
                block(async {
                    let mut c = connect(&url, mode).await;
                    let id = c.prepare("SELECT ?").await.unwrap();
                    let e = c
                        .exec_rows(id, &[Value::Text("a\0b".into())])
                        .await
                        .unwrap_err();
                    assert!(e.message.contains("NUL"), "{what}: {e}");
                    // The connection is still in step.
                    assert_eq!(c.query_one("SELECT 1").await.unwrap().as_deref(), Some("1"));
                });
            }
        }
    }
}

/// Workloads whose transactions go through the pipelined paths run clean without prepared
/// statements: oltp_read_write on MariaDB (BEGIN with the first statement, batched reads),
/// tpcb on PostgreSQL (its whole transaction in one pipeline).
#[test]
fn transactions_run_in_text_mode() {
    let dir = tempdir();
    let results = dir.path().join("results");
    let results = results.to_str().unwrap();
    let common = [
        "--threads",
        "2",
        "--warmup",
        "0",
        "--duration",
        "1s",
        "--runs",
        "1",
        "--format",
        "json",
        "--results-dir",
        results,
    ];
    if let Some(base) = server_url("EB_TEST_MYSQL_URL") {
        let url = fresh_db(&base, "eb_stmt_my_rw");
        for io in io_paths() {
            let mut args = vec![
                "run",
                "oltp_read_write",
                "--target",
                &url,
                "--table-size",
                "1000",
                "--statements",
                "text",
            ];
            args.extend(common);
            let doc = run_json(dir.path(), &args, io);
            let r = &doc["points"][0]["runs"][0];
            assert!(r["ops"].as_u64().unwrap() > 0, "oltp_read_write text {io}");
            // Deadlocks between the two connections are retried; nothing else may fail.
            let errors = r["errors"].as_object().unwrap();
            assert!(
                errors
                    .keys()
                    .all(|k| k == "deadlock" || k == "lock_wait_timeout"),
                "oltp_read_write text {io}: {}",
                r["error_samples"]
            );
        }
        // TPC-C: autocommit off, statements sent ahead of COMMIT, batched reads; its
        // consistency conditions hold afterwards.
        let url = fresh_db(&base, "eb_stmt_my_tpcc");
        for io in io_paths() {
            let mut args = vec![
                "run",
                "tpcc",
                "--target",
                &url,
                "--warehouses",
                "1",
                "--statements",
                "text",
            ];
            args.extend(common);
            let doc = run_json(dir.path(), &args, io);
            let r = &doc["points"][0]["runs"][0];
            let ops = r["ops"].as_u64().unwrap();
            assert!(ops > 0, "tpcc text {io}: {doc}");
            // Deadlocks may be retried; nothing else may fail.
            let errors = r["errors"].as_object().unwrap();
            assert!(
                errors
                    .keys()
                    .all(|k| k == "deadlock" || k == "lock_wait_timeout"),
                "tpcc text {io}: {}",
                r["error_samples"]
            );
        }
        let out = eb(dir.path(), &["check", "tpcc", "--target", &url]);
        assert_eq!(
            out.code, 0,
            "check after text runs: {}{}",
            out.stdout, out.stderr
        );
    }
    if let Some(base) = server_url("EB_TEST_PG_URL") {
        let url = fresh_db(&base, "eb_stmt_pg_tpcb");
        for mode in ["text", "extended"] {
            for io in io_paths() {
                let mut args = vec!["run", "tpcb", "--target", &url, "--statements", mode];
                args.extend(common);
                let doc = run_json(dir.path(), &args, io);
                let (ops, errors) = ops_and_errors(&doc);
                let r = &doc["points"][0]["runs"][0];
                assert!(
                    ops > 0 && errors == 0,
                    "tpcb {mode} {io}: {}",
                    r["error_samples"]
                );
                assert_eq!(
                    r["rows"].as_u64(),
                    Some(ops),
                    "one abalance per transaction"
                );
            }
        }
    }
}

#[test]
fn sqlite_runs_text_statements_and_refuses_extended() {
    let dir = tempdir();
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    let results = dir.path().join("results");
    let doc = run_json(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &url,
            "--table-size",
            "1000",
            "--threads",
            "1",
            "--warmup",
            "0",
            "--duration",
            "500ms",
            "--runs",
            "1",
            "--statements",
            "text",
            "--format",
            "json",
            "--results-dir",
            results.to_str().unwrap(),
        ],
        "auto",
    );
    let (ops, errors) = ops_and_errors(&doc);
    assert!(ops > 0 && errors == 0);
    assert_eq!(doc["config"]["statements"], "text");
    let out = eb(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &url,
            "--statements",
            "extended",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    block(async {
        let mut c = connect(&url, StatementMode::Text).await;
        round_trip(&mut c, "sqlite text").await;
    });
}
