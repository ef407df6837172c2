//! Connection storms (issue 25): many connections open reliably, paced and retried, on
//! managed MariaDB and PostgreSQL servers; a limit that stops them is named in one line.
//! Each test starts its own small server: the shared test servers' limits stay untouched.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use enginebench::db::Conn;
use serde_json::Value as Json;

use crate::common::*;
use crate::servers::have;

fn result(dir: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(result_file(dir)).unwrap()).unwrap()
}

/// A short point-select run's arguments (tiny table, no warm-up, one run of `secs`).
fn point_select<'a>(threads: &'a str, secs: &'a str, results: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "oltp_point_select",
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--threads",
        threads,
        "--warmup",
        "0s",
        "--runs",
        "1",
        "--duration",
        secs,
        "--format",
        "json",
        "--results-dir",
        results,
    ]
}

/// The error line of a failed run: exactly one line says what stopped it.
fn error_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("enginebench: "))
        .collect()
}

#[test]
fn a_thousand_connections_to_a_managed_mariadb() {
    if !have("mariadb") {
        return;
    }
    let dir = tempdir();
    let res = dir.path().join("r");
    let mut args = point_select("1024", "3s", res.to_str().unwrap());
    // Only max_connections, as a user would: back_log (50 + 1100 / 5 = 270) is raised to fit.
    args.extend([
        "--server",
        "mariadb:small",
        "--server-opt",
        "max_connections=1100",
    ]);
    let out = eb(dir.path(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stderr.contains("is the server running"),
        "{}",
        out.stderr
    );
    let doc = result(&res);
    let p = &doc["points"][0];
    assert_eq!(p["connect"]["connections"], 1024, "{p}");
    let run = &p["runs"][0];
    assert_eq!(run["errors_total"], 0, "{run}");
    assert!(run["ops"].as_u64().unwrap() > 0);
    let options = doc["target"]["server"]["options_file"].as_str().unwrap();
    assert!(options.contains("back_log = 1024"), "{options}");
    assert!(options.contains("max_connections = 1100"), "{options}");
    assert!(!options.contains("max_connections = 1044"), "{options}");
    assert_eq!(doc["target"]["settings"]["back_log"], "1024");
    eprintln!(
        "1,024 connections opened in {} s, {} retries",
        p["connect"]["elapsed_s"], p["connect"]["retries"]
    );
}

/// Open `n` connections one after the other (no storm: the server's back_log is 16).
fn hold(url: &str, n: usize) -> Vec<Conn> {
    block(async {
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(Conn::connect(&spec(url)).await.expect("hold a connection"));
        }
        v
    })
}

#[test]
fn short_listen_queue_and_taken_slots_on_mariadb() {
    if !have("mariadb") {
        return;
    }
    let dir = tempdir();
    let srv = OwnServer::start(None, &["back_log=16"]);
    let url = srv.url.clone();

    // 1. back_log 16, 256 connections: they open, paced (16 connecting at a time). Whether
    // the kernel's queue ever overflowed depends on how fast the server accepts, so the
    // retries are recorded, not asserted; the warning names back_log.
    let res = dir.path().join("r1");
    let mut args = point_select("256", "2s", res.to_str().unwrap());
    args.extend(["--target", &url]);
    let out = eb(dir.path(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("warning: the server's listen queue holds 16 connects (back_log 16"),
        "{}",
        out.stderr
    );
    let doc = result(&res);
    let p = &doc["points"][0];
    assert_eq!(p["connect"]["connections"], 256, "{p}");
    assert_eq!(p["runs"][0]["errors_total"], 0, "{p}");
    assert!(p["connect"]["retries"].is_u64(), "{p}");
    eprintln!("back_log 16, 256 connections: {}", p["connect"]);

    // 2. Retries for certain: other clients hold all but a few of the 300 slots
    // (max_connections 300, +1 for SUPER) while the run opens its 60 connections, and let
    // them go a second after the run says it starts; the refused connects (1040) are retried
    // and counted, and the run measures without errors.
    let held = hold(&url, 285);
    let res = dir.path().join("r2");
    let mut args = point_select("60", "2s", res.to_str().unwrap());
    args.extend(["--target", &url]);
    let mut child = Command::new(BIN)
        .args(&args)
        .current_dir(dir.path())
        .env_remove("MYSQL_PWD")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut text = String::new();
    let mut held = Some(held);
    for line in stderr.lines() {
        let line = line.unwrap();
        if line.contains("results in") {
            std::thread::sleep(Duration::from_millis(1000));
            held = None;
        }
        text.push_str(&line);
        text.push('\n');
    }
    drop(held);
    let status = child.wait().unwrap();
    assert!(status.success(), "{text}");
    let doc = result(&res);
    let p = &doc["points"][0];
    assert_eq!(p["connect"]["connections"], 60, "{p}");
    assert!(p["connect"]["retries"].as_u64().unwrap() > 0, "{p}\n{text}");
    assert!(p["connect"]["elapsed_s"].as_f64().unwrap() >= 0.5, "{p}");
    assert_eq!(p["runs"][0]["errors_total"], 0, "{p}");
    assert!(text.contains("refused attempt(s) retried"), "{text}");

    // 3. Slots held for good: the retries give up at --connect-timeout, exit 2, one line
    // naming max_connections.
    let held = hold(&url, 285);
    let res = dir.path().join("r3");
    let mut args = point_select("60", "2s", res.to_str().unwrap());
    args.extend(["--target", &url, "--connect-timeout", "1s"]);
    let out = eb(dir.path(), &args);
    drop(held);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let errs = error_lines(&out.stderr);
    assert_eq!(errs.len(), 1, "{}", out.stderr);
    assert!(errs[0].contains("max_connections"), "{}", errs[0]);
    assert!(errs[0].contains("retried"), "{}", errs[0]);
    assert!(
        !out.stderr.contains("is the server running"),
        "{}",
        out.stderr
    );

    // 4. max_connections 50 and --threads 100: refused before connecting, one line. The
    // server first closes the slots held above (it does so after the client has gone): until
    // then the tool's own first connection could find no slot below 50.
    block(async {
        let mut c = Conn::connect(&spec(&url)).await.unwrap();
        let sql = "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED'";
        for _ in 0..100 {
            let n: u64 = c.query_one(sql).await.unwrap().unwrap().parse().unwrap();
            if n < 10 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        c.execute("SET GLOBAL max_connections = 50").await.unwrap();
    });
    let res = dir.path().join("r4");
    let mut args = point_select("100", "2s", res.to_str().unwrap());
    args.extend(["--target", &url]);
    let out = eb(dir.path(), &args);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let errs = error_lines(&out.stderr);
    assert_eq!(errs.len(), 1, "{}", out.stderr);
    assert!(errs[0].contains("max_connections"), "{}", errs[0]);
}

#[test]
fn five_hundred_connections_to_a_managed_postgres() {
    if !have("postgres") {
        return;
    }
    let dir = tempdir();
    let res = dir.path().join("r");
    let mut args = point_select("512", "2s", res.to_str().unwrap());
    // The small profile's max_connections (300) is raised to fit.
    args.extend(["--server", "postgres:small"]);
    let out = eb(dir.path(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = result(&res);
    let p = &doc["points"][0];
    assert_eq!(p["connect"]["connections"], 512, "{p}");
    assert_eq!(p["runs"][0]["errors_total"], 0, "{p}");
    let options = doc["target"]["server"]["options_file"].as_str().unwrap();
    assert!(options.contains("max_connections = '532'"), "{options}");
    eprintln!("postgres, 512 connections: {}", p["connect"]);
}
