//! Stop conditions and hostile conditions: `--events`, `--percentile`, SIGINT/SIGTERM in every
//! phase (load, warm-up, measurement) with managed servers stopped after, a server restarted
//! mid-run (`--reconnect`), a server that stops answering (SIGSTOP, `--query-timeout`) and a
//! results folder on a full disk. Destructive tests use servers of their own (`server start
//! --datadir` or `run --server`), never the shared EB_TEST_* servers.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::common::*;

fn have_mariadb() -> bool {
    let ok = Path::new("/usr/sbin/mariadbd").exists() || Path::new("/usr/bin/mariadbd").exists();
    if !ok {
        if std::env::var("EB_REQUIRE_SERVERS").as_deref() == Ok("1") {
            panic!("mariadbd missing but EB_REQUIRE_SERVERS=1");
        }
        eprintln!("skipped: mariadbd not installed");
    }
    ok
}

fn have_postgres() -> bool {
    let ok = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().any(|e| e.path().join("bin/postgres").exists()))
        .unwrap_or(false);
    if !ok {
        if std::env::var("EB_REQUIRE_SERVERS").as_deref() == Ok("1") {
            panic!("postgres missing but EB_REQUIRE_SERVERS=1");
        }
        eprintln!("skipped: postgres not installed");
    }
    ok
}

/// Exit status within `within`: Ok(code) or Err(signal); panics (after killing) if it hangs.
pub(crate) fn wait_exit(c: &mut Child, within: Duration) -> Result<i32, i32> {
    use std::os::unix::process::ExitStatusExt;
    let end = Instant::now() + within;
    while Instant::now() < end {
        if let Some(st) = c.try_wait().unwrap() {
            return st.code().ok_or(st.signal().unwrap_or(-1));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = c.kill();
    let _ = c.wait();
    panic!("the client did not exit within {within:?}");
}

pub(crate) fn results_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path().join("result.json");
        if p.exists() {
            out.push(p);
        }
    }
    out
}

pub(crate) fn read_json(p: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

pub(crate) fn has_note(doc: &Json, needle: &str) -> bool {
    doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains(needle))
}

/// The timing tests of this module run one at a time: on a 2-CPU machine several servers
/// starting at once would stretch the few seconds each one allows.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn sqlite(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("t.db").display())
}

// ---------------------------------------------------------------- --events and --percentile

#[test]
fn events_end_each_run_and_percentile_is_reported() {
    let dir = tempdir();
    let target = sqlite(dir.path());
    let out = eb(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &target,
            "--table-size",
            "1000",
            "--threads",
            "3",
            "--warmup",
            "0",
            "--time",
            "0",
            "--events",
            "1001",
            "--runs",
            "2",
            "--percentile",
            "97.5",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("p97.5"), "{}", out.stderr);
    let doc = read_json(&result_file(&dir.path().join("enginebench-results")));
    assert_schema_valid(&doc);
    assert_eq!(doc["config"]["events"], 1001);
    assert_eq!(
        doc["config"]["extra_percentiles"],
        serde_json::json!([97.5])
    );
    let p = &doc["points"][0];
    for r in p["runs"].as_array().unwrap() {
        // Exactly N events over the three connections, then the run ended (no time limit).
        assert_eq!(r["ops"], 1001, "{r}");
        let p975 = r["percentiles_us"]["p97_5"].as_u64().unwrap();
        let l = &r["latency_us"];
        assert!(p975 >= l["p95_us"].as_u64().unwrap() && p975 <= l["p99_us"].as_u64().unwrap());
    }
    assert!(p["aggregate"]["percentiles_us"]["p97_5"].as_u64().is_some());

    // With a time limit too, whichever comes first: here the time.
    let out = eb(
        dir.path(),
        &[
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
            "--duration",
            "200ms",
            "--events",
            "1000000000",
            "--runs",
            "1",
            "--results-dir",
            "r2",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = read_json(&result_file(&dir.path().join("r2")));
    let r = &doc["points"][0]["runs"][0];
    assert!(r["elapsed_s"].as_f64().unwrap() < 1.0, "{r}");
    assert!(r["ops"].as_u64().unwrap() < 1_000_000_000);

    for (args, msg) in [
        (vec!["--time", "0"], "needs --events"),
        (vec!["--percentile", "0"], "--percentile"),
        (vec!["--percentile", "101"], "--percentile"),
        (vec!["--query-timeout", "1ms"], "--query-timeout"),
        (vec!["--query-timeout", "soon"], "--query-timeout"),
    ] {
        let mut a = vec!["run", "oltp_point_select", "--target", &target];
        a.extend(args);
        let out = eb(dir.path(), &a);
        assert_eq!(out.code, 2, "{a:?}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains(msg), "{}", out.stderr);
    }
}

#[test]
fn events_match_the_servers_statement_count_mariadb() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_events");
    let dir = tempdir();
    let out = eb(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &url,
            "--table-size",
            "1000",
            "--threads",
            "4",
            "--warmup",
            "0",
            "--time",
            "30",
            "--events",
            "2500",
            "--runs",
            "1",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = read_json(&result_file(&dir.path().join("enginebench-results")));
    assert_schema_valid(&doc);
    let r = &doc["points"][0]["runs"][0];
    assert_eq!(r["ops"], 2500);
    // The server executed exactly as many statements as the client counted.
    assert_eq!(r["server_counters"]["Com_stmt_execute"], 2500.0, "{r}");
}

// ---------------------------------------------------------------- signals

fn sqlite_run_args<'a>(target: &'a str, warmup: &'a str, duration: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "micro-read",
        "--target",
        target,
        "--table-size",
        "2000",
        "--threads",
        "2",
        "--warmup",
        warmup,
        "--duration",
        duration,
        "--runs",
        "2",
        "--queries",
        "READ_PK_POINT,READ_KEY_POINT",
    ]
}

#[test]
fn sigterm_in_measurement_exits_143_with_results_and_note() {
    let _s = serial();
    let dir = tempdir();
    let target = sqlite(dir.path());
    let (mut child, err) = spawn(dir.path(), &sqlite_run_args(&target, "0", "1s"));
    let res = dir.path().join("enginebench-results");
    // The first point (2 runs of 1 s) is on disk; interrupt the second one.
    wait_for("the first point", Duration::from_secs(30), || {
        results_under(&res)
            .first()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<Json>(&t).ok())
            .is_some_and(|d| d["points"].as_array().is_some_and(|a| !a.is_empty()))
    });
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    signal(child.id(), libc::SIGTERM);
    let code = wait_exit(&mut child, Duration::from_secs(10));
    let took = t0.elapsed();
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(143), "{text}");
    assert!(took < Duration::from_secs(3), "stopped after {took:?}");
    let doc = read_json(&results_under(&res)[0]);
    assert_schema_valid(&doc);
    assert_eq!(doc["status"], "interrupted");
    assert!(
        has_note(&doc, "interrupted by SIGTERM (exit code 143)"),
        "{}",
        doc["notes"]
    );
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points[0]["runs"].as_array().unwrap().len(), 2);
    assert_eq!(points[0]["runs"][1]["interrupted"], false);
    // The point that was cut short is kept with its run flagged.
    if let Some(p) = points.get(1) {
        let last = p["runs"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["interrupted"], true, "{last}");
    }
    assert!(dir
        .path()
        .join("enginebench-results")
        .read_dir()
        .unwrap()
        .all(|e| { !e.unwrap().path().to_string_lossy().ends_with(".tmp") }));
}

#[test]
fn sigint_in_warmup_exits_130_with_a_valid_result() {
    let _s = serial();
    let dir = tempdir();
    let target = sqlite(dir.path());
    let (mut child, err) = spawn(dir.path(), &sqlite_run_args(&target, "30s", "1s"));
    wait_text(&err, "results in", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    signal(child.id(), libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(10));
    let took = t0.elapsed();
    assert_eq!(code, Ok(130), "{}", std::fs::read_to_string(&err).unwrap());
    assert!(took < Duration::from_secs(3), "stopped after {took:?}");
    let doc = read_json(&results_under(&dir.path().join("enginebench-results"))[0]);
    assert_schema_valid(&doc);
    assert_eq!(doc["status"], "interrupted");
    assert!(doc["points"].as_array().unwrap().is_empty());
    assert!(has_note(&doc, "interrupted by SIGINT"));
}

#[test]
fn sigint_while_loading_exits_130_promptly() {
    let _s = serial();
    let dir = tempdir();
    let target = sqlite(dir.path());
    let (mut child, err) = spawn(
        dir.path(),
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &target,
            "--table-size",
            "1000000",
        ],
    );
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    signal(child.id(), libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(10));
    let took = t0.elapsed();
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(130), "{text}");
    assert!(took < Duration::from_secs(3), "stopped after {took:?}");
    assert!(text.contains("interrupted"), "{text}");
    assert!(!text.contains("panicked"), "{text}");
    // The half-loaded table is not taken for a prepared one: a later run loads it again.
    let out = eb(
        dir.path(),
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &target,
            "--table-size",
            "1000",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("loaded 1000 rows"), "{}", out.stderr);
}

/// Interrupt `run oltp_point_select` on `target` while its table loads (once `loading` says
/// rows are in), then check: exit 128 + sig within 3 s, and a result file with the load so far
/// (the table cut short flagged), no points and the load note.
fn interrupt_a_load(target: &str, rows: u64, extra: &[&str], sig: i32, loading: impl Fn() -> bool) {
    let dir = tempdir();
    let size = rows.to_string();
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--target",
        target,
        "--table-size",
        &size,
        "--threads",
        "1",
        "--warmup",
        "0",
        "--duration",
        "1s",
    ];
    args.extend(extra);
    let (mut child, err) = spawn(dir.path(), &args);
    wait_for("rows in the table", Duration::from_secs(60), &loading);
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    signal(child.id(), sig);
    let code = wait_exit(&mut child, Duration::from_secs(20));
    let took = t0.elapsed();
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(128 + sig), "{text}");
    assert!(
        took < Duration::from_secs(3),
        "stopped after {took:?}: {text}"
    );
    assert!(
        text.contains("interrupted while loading table sbtest1"),
        "{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
    let found = results_under(&dir.path().join("enginebench-results"));
    assert_eq!(found.len(), 1, "{text}");
    let doc = read_json(&found[0]);
    assert_schema_valid(&doc);
    assert_eq!(doc["status"], "interrupted");
    assert!(doc["points"].as_array().unwrap().is_empty());
    let name = if sig == libc::SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    assert!(
        has_note(
            &doc,
            &format!(
                "interrupted by {name} (exit code {}) while loading",
                128 + sig
            )
        ),
        "{}",
        doc["notes"]
    );
    let load = doc["load"].as_array().unwrap();
    assert_eq!(load.len(), 1, "{load:?}");
    assert_eq!(load[0]["table"], "sbtest1");
    assert_eq!(load[0]["interrupted"], true);
    let loaded = load[0]["rows"].as_u64().unwrap();
    assert!(loaded > 0 && loaded < rows, "{loaded} rows of {rows}");
    assert!(load[0]["elapsed_s"].as_f64().unwrap() > 0.0);
    assert!(doc["finished_at"].is_string());
}

/// Rows in sbtest1 of `url` (0 while the table does not exist yet). PostgreSQL only (MVCC:
/// the count does not wait for the load).
fn rows_in_sbtest1(url: &str) -> u64 {
    block(async {
        let Ok(mut c) = enginebench::db::Conn::connect(&spec(url)).await else {
            return 0;
        };
        match c.query_one("SELECT COUNT(*) FROM sbtest1").await {
            Ok(Some(v)) => v.parse().unwrap_or(0),
            _ => 0,
        }
    })
}

#[test]
fn sigint_while_loading_a_run_writes_the_load_so_far_sqlite() {
    let _s = serial();
    let dir = tempdir();
    let target = sqlite(dir.path());
    let db = dir.path().join("t.db");
    // SQLite commits a batch of 10,000 rows at a time: the file grows past 1 MB with the first.
    interrupt_a_load(&target, 2_000_000, &[], libc::SIGINT, || {
        std::fs::metadata(&db).is_ok_and(|m| m.len() > 1 << 20)
    });
}

#[test]
fn sigterm_while_loading_a_run_writes_the_load_so_far_mariadb() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _l = server_lock();
    let _s = serial();
    let url = fresh_db(&base, "eb_load_interrupt");
    // Rows written by the server: a COUNT(*) on the table while it is bulk-loaded can hang
    // MariaDB 10.11 (seen here: the LOAD DATA and the COUNT both stuck, unkillable).
    let written = || -> u64 {
        block(async {
            let mut c = enginebench::db::Conn::connect(&spec(&base)).await.ok()?;
            let rows = c
                .query("SHOW GLOBAL STATUS LIKE 'Handler_write'")
                .await
                .ok()?;
            rows.first()?.get(1)?.as_ref()?.parse().ok()
        })
        .unwrap_or(0)
    };
    let before = written();
    // LOAD DATA LOCAL INFILE of 10,000 rows per statement (or INSERTs if the server refuses).
    interrupt_a_load(
        &url,
        3_000_000,
        &["--load-method", "stream"],
        libc::SIGTERM,
        || written() > before + 10_000,
    );
}

#[test]
fn sigint_while_loading_a_run_writes_the_load_so_far_postgres() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _l = server_lock();
    let _s = serial();
    let url = fresh_db(&base, "eb_load_interrupt");
    // COPY FROM STDIN of 10,000 rows per statement.
    interrupt_a_load(
        &url,
        3_000_000,
        &["--load-method", "stream"],
        libc::SIGINT,
        || rows_in_sbtest1(&url) > 0,
    );
}

/// "... server pid N ..." and "folder F" from the tool's stderr.
fn server_of(text: &str) -> (u32, PathBuf) {
    let i = text.find("server pid ").expect("server pid printed") + "server pid ".len();
    let pid = text[i..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let folder = text
        .split("folder ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap();
    (pid, PathBuf::from(folder))
}

fn managed_run(dir: &Path, server: &str, extra: &[&str]) -> (Child, PathBuf) {
    let mut args = vec![
        "run",
        "micro-read",
        "--server",
        server,
        "--table-size",
        "500",
        "--threads",
        "2",
        "--warmup",
        "0",
        "--duration",
        "20s",
        "--runs",
        "1",
        "--queries",
        "READ_PK_POINT",
    ];
    args.extend(extra);
    spawn(dir, &args)
}

#[test]
fn sigint_stops_a_throwaway_postgres_at_once() {
    let _s = serial();
    if !have_postgres() {
        return;
    }
    let dir = tempdir();
    let (mut child, err) = managed_run(dir.path(), "postgres:small", &[]);
    wait_text(&err, "results in", Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(500));
    let (pid, folder) = server_of(&std::fs::read_to_string(&err).unwrap());
    let t0 = Instant::now();
    signal(child.id(), libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(20));
    let took = t0.elapsed();
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(130), "{text}");
    assert!(text.contains("stopping the throwaway PostgreSQL"), "{text}");
    assert!(
        took < Duration::from_secs(5),
        "client and server stopped after {took:?}"
    );
    assert!(!alive(pid), "server {pid} still runs");
    assert!(!folder.exists(), "{} left behind", folder.display());
    let doc = read_json(&results_under(&dir.path().join("enginebench-results"))[0]);
    assert_schema_valid(&doc);
    assert_eq!(doc["status"], "interrupted");
    let run = &doc["points"][0]["runs"][0];
    assert_eq!(run["interrupted"], true);
    assert!(run["ops"].as_u64().unwrap() > 0);
}

#[test]
fn sigint_stops_a_kept_mariadb_cleanly_and_a_second_one_kills_it() {
    let _s = serial();
    if !have_mariadb() {
        return;
    }
    // One SIGINT: the server with a kept data folder is stopped cleanly, with a message.
    let dir = tempdir();
    let data = dir.path().join("kept");
    let data_s = data.to_str().unwrap();
    let (mut child, err) = managed_run(dir.path(), "mariadb:small", &["--datadir", data_s]);
    wait_text(&err, "results in", Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(300));
    let (pid, _) = server_of(&std::fs::read_to_string(&err).unwrap());
    signal(child.id(), libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(60));
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(130), "{text}");
    assert!(text.contains("stopping the MariaDB server"), "{text}");
    assert!(text.contains("cleanly"), "{text}");
    assert!(!alive(pid));
    let log = std::fs::read_to_string(data.join("server.log")).unwrap();
    assert!(
        log.contains("Shutdown complete"),
        "not a clean shutdown: {log}"
    );

    // Two SIGINTs: the client ends at once and takes the server with it.
    let dir2 = tempdir();
    let (mut child, err) = managed_run(dir2.path(), "mariadb:small", &[]);
    wait_text(&err, "results in", Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(300));
    let (pid, folder) = server_of(&std::fs::read_to_string(&err).unwrap());
    signal(child.id(), libc::SIGINT);
    // Apart, or the kernel merges them into one pending signal; but close together, or on a
    // quiet machine the first stop (a throwaway server is killed at once) is over already.
    std::thread::sleep(Duration::from_millis(5));
    let t0 = Instant::now();
    signal(child.id(), libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(code, Err(libc::SIGINT));
    assert!(
        wait_gone(pid, Duration::from_secs(2)),
        "server {pid} survived"
    );
    eprintln!(
        "second SIGINT: client and server gone in {:?}",
        t0.elapsed()
    );
    let _ = std::fs::remove_dir_all(folder);
}

// ---------------------------------------------------------------- faults

fn fault_run(dir: &Path, url: &str, duration: &str, extra: &[&str]) -> (Child, PathBuf) {
    let mut args = vec![
        "run",
        "micro-read",
        "--target",
        url,
        "--table-size",
        "500",
        "--threads",
        "2",
        "--warmup",
        "0",
        "--duration",
        duration,
        "--runs",
        "1",
        "--queries",
        "READ_PK_POINT",
        "--report-interval",
        "500ms",
    ];
    args.extend(extra);
    spawn(dir, &args)
}

fn the_run(dir: &Path) -> (Json, Json) {
    let doc = read_json(&results_under(&dir.join("enginebench-results"))[0]);
    assert_schema_valid(&doc);
    let run = doc["points"][0]["runs"][0].clone();
    (doc, run)
}

#[test]
fn server_restart_mid_run_with_reconnect_goes_on() {
    let _s = serial();
    if !have_mariadb() {
        return;
    }
    let mut srv = OwnServer::mariadb();
    let dir = tempdir();
    let (mut child, err) = fault_run(dir.path(), &srv.url, "60s", &["--reconnect"]);
    wait_text(&err, "[    1.0s ]", Duration::from_secs(60));
    srv.crash_and_restart();
    // A crash recovery takes seconds on a busy machine; once both connections are back and
    // working, end the run (SIGINT keeps what was measured).
    wait_for("both connections back", Duration::from_secs(60), || {
        std::fs::read_to_string(&err).is_ok_and(|t| t.matches("re-established after").count() == 2)
    });
    std::thread::sleep(Duration::from_millis(700));
    signal(child.id(), libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(30));
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(130), "{text}");
    // Logged once per connection and state change: lost, then back.
    assert_eq!(
        text.matches("re-connecting with back-off").count(),
        2,
        "{text}"
    );
    assert_eq!(text.matches("re-established after").count(), 2, "{text}");
    let (doc, run) = the_run(dir.path());
    assert_eq!(doc["status"], "interrupted");
    assert_eq!(run["reconnects"], 2, "{run}");
    assert!(
        run["errors"]["connection_lost"].as_u64().unwrap() >= 2,
        "{run}"
    );
    // Operations went on after the restart: the last intervals did work.
    let iv = run["intervals"].as_array().unwrap();
    assert!(iv.last().unwrap()["ops"].as_u64().unwrap() > 0, "{iv:?}");
    // Counters that a restart resets give no delta.
    assert!(run.get("server_counters").is_none(), "{run}");
}

#[test]
fn server_restart_mid_run_without_reconnect_ends_cleanly() {
    let _s = serial();
    if !have_mariadb() {
        return;
    }
    let mut srv = OwnServer::mariadb();
    let dir = tempdir();
    let (mut child, err) = fault_run(dir.path(), &srv.url, "6s", &[]);
    wait_text(&err, "[    1.0s ]", Duration::from_secs(60));
    srv.crash_and_restart();
    let code = wait_exit(&mut child, Duration::from_secs(30));
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(1), "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("every connection to the target was lost"),
        "{text}"
    );
    // What was measured until then is kept, errors by class.
    let (doc, run) = the_run(dir.path());
    assert_eq!(doc["status"], "failed");
    assert_eq!(run["workers_lost"], 2);
    assert_eq!(run["errors"]["connection_lost"], 2, "{run}");
    assert!(run["ops"].as_u64().unwrap() > 0);
}

#[test]
fn stopped_server_hits_the_query_timeout_and_nothing_hangs() {
    let _s = serial();
    if !have_mariadb() {
        return;
    }
    let srv = OwnServer::mariadb();
    // Without --reconnect: every connection times out, the run ends and says why.
    let dir = tempdir();
    let (mut child, err) = fault_run(dir.path(), &srv.url, "20s", &["--query-timeout", "300ms"]);
    wait_text(&err, "[    1.0s ]", Duration::from_secs(60));
    signal(srv.pid, libc::SIGSTOP);
    let t0 = Instant::now();
    let code = wait_exit(&mut child, Duration::from_secs(15));
    let took = t0.elapsed();
    signal(srv.pid, libc::SIGCONT);
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(1), "{text}");
    assert!(
        took < Duration::from_secs(5),
        "ended {took:?} after SIGSTOP"
    );
    assert!(text.contains("--query-timeout"), "{text}");
    let (doc, run) = the_run(dir.path());
    assert_eq!(doc["status"], "failed");
    assert_eq!(run["errors"]["query_timeout"], 2, "{run}");
    assert!(run["error_samples"][0]
        .as_str()
        .unwrap()
        .starts_with("query_timeout: no answer from the server within 300ms"));

    // With --reconnect: the server answers again after SIGCONT and the run completes.
    let dir = tempdir();
    let (mut child, err) = fault_run(
        dir.path(),
        &srv.url,
        "4s",
        &["--query-timeout", "300ms", "--reconnect"],
    );
    wait_text(&err, "[    1.0s ]", Duration::from_secs(60));
    signal(srv.pid, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(1200));
    signal(srv.pid, libc::SIGCONT);
    let code = wait_exit(&mut child, Duration::from_secs(30));
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(0), "{text}");
    let (doc, run) = the_run(dir.path());
    assert_eq!(doc["status"], "complete");
    assert!(
        run["errors"]["query_timeout"].as_u64().unwrap() >= 2,
        "{run}"
    );
    assert!(run["reconnects"].as_u64().unwrap() >= 2, "{run}");
    let iv = run["intervals"].as_array().unwrap();
    assert!(iv.last().unwrap()["ops"].as_u64().unwrap() > 0, "{iv:?}");
}

/// A workload file of large statements: each a 4 MB parameter, so that when the server stops
/// reading, sends are still out (on the io_uring path: ring sends part-way through).
const LARGE_STATEMENTS: &str = r#"
name = "large-statements"
[tables.t]
rows = 1
primary_key = ["id"]
[tables.t.columns]
id = { type = "int", kind = "sequence" }
[transactions.big]
statements = [{ sql = "SELECT LENGTH(:b)" }]
[transactions.big.params]
b = { kind = "string", len = 4000000 }
"#;

/// A server stopped (SIGSTOP) under large statements and `--query-timeout 500ms`: the run ends
/// within the timeout plus a bound, on the lean client's io_uring path where the kernel offers
/// it (required when EB_REQUIRE_IO_URING=1), with what it measured written and every
/// connection's timeout counted.
#[test]
fn stopped_server_under_large_statements_ends_within_the_timeout() {
    let _s = serial();
    if !have_mariadb() {
        return;
    }
    let srv = OwnServer::mariadb();
    let dir = tempdir();
    let file = dir.path().join("large.toml");
    std::fs::write(&file, LARGE_STATEMENTS).unwrap();
    let (mut child, err) = spawn(
        dir.path(),
        &[
            "run",
            "--workload-file",
            file.to_str().unwrap(),
            "--target",
            &srv.url,
            "--threads",
            "4",
            "--warmup",
            "0",
            "--duration",
            "30s",
            "--runs",
            "1",
            "--report-interval",
            "500ms",
            "--query-timeout",
            "500ms",
        ],
    );
    wait_text(&err, "[    1.0s ]", Duration::from_secs(60));
    signal(srv.pid, libc::SIGSTOP);
    let t0 = Instant::now();
    let code = wait_exit(&mut child, Duration::from_secs(20));
    let took = t0.elapsed();
    signal(srv.pid, libc::SIGCONT);
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, Ok(1), "{text}");
    // The timeout, plus the result's writing on a busy host.
    assert!(
        took < Duration::from_millis(500) + Duration::from_secs(5),
        "ended {took:?} after SIGSTOP: {text}"
    );
    let (doc, run) = the_run(dir.path());
    assert_eq!(doc["status"], "failed");
    assert!(run["ops"].as_u64().unwrap() > 0, "{run}");
    assert_eq!(run["errors"]["query_timeout"], 4, "{run}");
    let io = doc["client"]["io"].as_str().unwrap_or_default();
    if std::env::var("EB_REQUIRE_IO_URING").as_deref() == Ok("1")
        && std::env::var("EB_CLIENT_IO").as_deref() != Ok("epoll")
    {
        assert_eq!(io, "io_uring", "{}", doc["client"]);
    } else {
        eprintln!("large statements, SIGSTOP: client path {io}");
    }
}

/// Mount a tmpfs of `size` on `dir`; false (with a message) where mounting is not allowed.
fn mount_tmpfs(dir: &Path, size: &str) -> bool {
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(dir)
        .output();
    match out {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            eprintln!(
                "skipped: cannot mount a tmpfs here: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            false
        }
        Err(e) => {
            eprintln!("skipped: cannot run mount: {e}");
            false
        }
    }
}

struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn full_results_disk_is_a_clear_error_and_leaves_no_half_file() {
    let dir = tempdir();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    if !mount_tmpfs(&mnt, "64k") {
        return;
    }
    let _u = Unmount(mnt.clone());
    // Leave about 20 KiB: the first result file fits, the growing one does not.
    std::fs::write(mnt.join("filler"), vec![0u8; 44 * 1024]).unwrap();
    let target = sqlite(dir.path());
    let res = mnt.join("res");
    let out = eb(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--target",
            &target,
            "--table-size",
            "500",
            "--threads",
            "1",
            "--warmup",
            "0",
            "--duration",
            "100ms",
            "--runs",
            "3",
            "--report-interval",
            "100ms",
            "--results-dir",
            res.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let last = out.stderr.trim().lines().last().unwrap();
    assert!(
        last.starts_with("enginebench: cannot write the result file ")
            && last.contains(res.to_str().unwrap())
            && last.contains("No space left on device"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"));
    // No temporary or half-written file: the result is its last complete version.
    let folder = std::fs::read_dir(&res)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut names = Vec::new();
    for e in std::fs::read_dir(&folder).unwrap() {
        names.push(e.unwrap().file_name().to_string_lossy().into_owned());
    }
    assert_eq!(names, vec!["result.json"], "{names:?}");
    let mut text = String::new();
    std::fs::File::open(folder.join("result.json"))
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let doc: Json = serde_json::from_str(&text).expect("a complete JSON document");
    assert_schema_valid(&doc);
}
