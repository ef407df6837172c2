//! Private servers through the tool: `server start|stop|status`, `run --server`, `suite`, a
//! server killed mid-run, and Ctrl-C in the middle of a suite. Each test starts its own real
//! MariaDB / PostgreSQL (small profile, tiny data) and checks that no process is left behind.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::common::*;

/// Whether the server binaries are here; without them the test is skipped (CI installs them
/// through scripts/test.sh, which also sets EB_REQUIRE_SERVERS=1 so that a skip is a failure).
pub(crate) fn have(kind: &str) -> bool {
    let ok = match kind {
        "mariadb" => {
            Path::new("/usr/sbin/mariadbd").exists() || Path::new("/usr/bin/mariadbd").exists()
        }
        _ => std::fs::read_dir("/usr/lib/postgresql")
            .map(|d| d.flatten().any(|e| e.path().join("bin/postgres").exists()))
            .unwrap_or(false),
    };
    if !ok {
        if std::env::var("EB_REQUIRE_SERVERS").as_deref() == Ok("1") {
            panic!("{kind} server binaries missing but EB_REQUIRE_SERVERS=1");
        }
        eprintln!("skipped: {kind} server binaries not installed");
    }
    ok
}

pub(crate) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s.rsplit(')').next().unwrap_or("").split_whitespace().next();
            !matches!(state, Some("Z") | Some("X"))
        }
        Err(_) => false,
    }
}

/// Processes whose command line mentions `needle` (a folder of ours): must be none at the end.
pub(crate) fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(needle) && alive(pid) {
            out.push(pid);
        }
    }
    out
}

pub(crate) fn wait_gone(pid: u32, within: Duration) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    !alive(pid)
}

fn wait_exit(c: &mut Child, within: Duration) -> Option<i32> {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if let Some(st) = c.try_wait().unwrap() {
            return Some(st.code().unwrap_or(-1));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = c.kill();
    let _ = c.wait();
    None
}

/// "... server pid N ..." from the tool's stderr.
fn pid_in(text: &str) -> Option<u32> {
    let i = text.find("server pid ")? + "server pid ".len();
    text[i..].split_whitespace().next()?.parse().ok()
}

fn results_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let set_aside = p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("disturbed-") || n.starts_with("resumed-"));
            if p.is_dir() && !set_aside {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "result.json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn read_json(p: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn bad_server_flags_are_usage_errors() {
    let dir = tempdir();
    for args in [
        vec!["run", "micro-read", "--server", "oracle"],
        vec!["run", "micro-read", "--server", "mariadb:nope"],
        vec![
            "run",
            "micro-read",
            "--server",
            "mariadb",
            "--server-opt",
            "novalue",
        ],
        vec![
            "run",
            "micro-read",
            "--server",
            "mariadb",
            "--pin",
            "client=999",
        ],
        vec!["run", "micro-read", "--pin", "server=0"],
        vec![
            "run",
            "micro-read",
            "--server",
            "postgres",
            "--engine",
            "InnoDB",
        ],
        vec!["server", "stop", "mariadb"],
        vec!["suite", "/nonexistent/plan.toml"],
    ] {
        let out = eb(dir.path(), &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_eq!(
            out.stderr.trim().lines().count(),
            1,
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

fn start_stop(kind: &str) {
    if !have(kind) {
        return;
    }
    let dir = tempdir();
    let data = dir.path().join("srv");
    let data_s = data.to_str().unwrap();
    let out = eb(
        dir.path(),
        &[
            "server",
            "start",
            kind,
            "--profile",
            "small",
            "--datadir",
            data_s,
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let url = out.stdout.trim().to_string();
    assert!(
        url.starts_with(if kind == "mariadb" {
            "mysql://"
        } else {
            "postgres://"
        }),
        "{url}"
    );
    let state = read_json(&data.join("server.json"));
    let pid = state["pid"].as_u64().unwrap() as u32;
    assert!(alive(pid));
    let st = eb(dir.path(), &["server", "status", kind, "--datadir", data_s]);
    assert_eq!(st.code, 0, "{}", st.stderr);
    assert_eq!(st.stdout.trim(), url);
    // The server answers on the URL it printed, with the profile's connection limit.
    let limit = block(async {
        let mut c = enginebench::db::Conn::connect(&spec(&url)).await.unwrap();
        c.query_one(if kind == "mariadb" {
            "SELECT @@max_connections"
        } else {
            "SELECT current_setting('max_connections')"
        })
        .await
        .unwrap()
        .unwrap()
    });
    assert_eq!(limit, "300");
    let stop = eb(dir.path(), &["server", "stop", kind, "--datadir", data_s]);
    assert_eq!(stop.code, 0, "{}", stop.stderr);
    assert!(
        wait_gone(pid, Duration::from_secs(5)),
        "server {pid} still running"
    );
    let st = eb(dir.path(), &["server", "status", kind, "--datadir", data_s]);
    assert_eq!(st.code, 1, "{}", st.stderr);
    assert!(processes_mentioning(data_s).is_empty());
    // The data folder is kept (--datadir).
    assert!(data.join("data").is_dir());
}

#[test]
fn server_start_status_stop_mariadb() {
    start_stop("mariadb");
}

#[test]
fn server_start_status_stop_postgres() {
    start_stop("postgres");
}

fn run_managed(kind: &str) {
    if !have(kind) {
        return;
    }
    let dir = tempdir();
    let server = format!("{kind}:small");
    let out = eb(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--server",
            &server,
            "--server-opt",
            if kind == "mariadb" {
                "table_open_cache=999"
            } else {
                "work_mem=8MB"
            },
            "--table-size",
            "500",
            "--threads",
            "1,2",
            "--warmup",
            "0",
            "--duration",
            // Long enough that the server's CPU shows in /proc (10 ms ticks) on a busy machine.
            "1s",
            "--runs",
            "1",
            "--queries",
            "READ_PK_POINT",
            "--pin",
            "client=0,server=0",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pid = pid_in(&out.stderr).expect("server pid printed");
    assert!(
        wait_gone(pid, Duration::from_secs(5)),
        "throwaway server {pid} still running"
    );
    let doc = read_json(&result_file(&dir.path().join("enginebench-results")));
    assert_schema_valid(&doc);
    assert_eq!(doc["status"], "complete");
    let t = &doc["target"];
    assert_eq!(t["server"]["managed"], true);
    assert_eq!(t["server"]["found_by"], "managed");
    assert_eq!(t["server"]["profile"], server.as_str());
    assert_eq!(t["server"]["pinned_cpus"], serde_json::json!([0]));
    // The --server-opt is in the effective options and the server really has it.
    if kind == "mariadb" {
        assert!(t["server"]["options_file"]
            .as_str()
            .unwrap()
            .contains("table_open_cache = 999"));
        assert_eq!(t["settings"]["table_open_cache"], "999");
        assert!(t["settings_non_default"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "table_open_cache"));
    } else {
        assert_eq!(t["settings"]["work_mem"], "8192kB");
    }
    for p in doc["points"].as_array().unwrap() {
        assert!(!p["table_sizes"].as_array().unwrap().is_empty());
        // The data folder's allocated size, measured after the forced flush.
        let du = &p["disk_usage"];
        assert_eq!(du["flushed"], true, "{du}");
        assert!(du["allocated_bytes"].as_u64().unwrap() > 1_000_000, "{du}");
        for r in p["runs"].as_array().unwrap() {
            let sp = &r["server_process"];
            assert!(sp["cpu_us_per_op"].as_f64().unwrap() > 0.0, "{sp}");
            let share = r["client_cpu_share"].as_f64().unwrap();
            assert!(share > 0.0 && share < 1.0, "{share}");
            assert!(r["host_cpu"]["busy_s"].as_f64().unwrap() >= 0.0);
        }
    }
    if kind == "mariadb" {
        assert!(doc["points"][0]["engine_status"]
            .as_str()
            .unwrap()
            .contains("BUFFER POOL"));
    }
    // The throwaway folder is gone.
    let folder = out
        .stderr
        .split("folder ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_string();
    assert!(!Path::new(&folder).exists(), "{folder} left behind");
    assert!(processes_mentioning(&folder).is_empty());
}

#[test]
fn run_with_managed_mariadb_records_server_cpu() {
    run_managed("mariadb");
}

#[test]
fn run_with_managed_postgres_records_server_cpu() {
    run_managed("postgres");
}

const PLAN: &str = r#"
name = "it"
workload = "micro-read"
engines = ["InnoDB", "MyISAM"]
threads = [1, 2]
[[servers]]
server = "mariadb:small"
[run]
table_size = "500"
warmup = "0"
duration = "300ms"
runs = 2
queries = "READ_PK_POINT"
# These tests are about the suite's life cycle, not about noise: the other tests running beside
# them would flag runs disturbed and the suite would run them again in place.
disturbed_above = 100
"#;

#[test]
fn suite_two_engines_two_thread_counts_resumes() {
    if !have("mariadb") {
        return;
    }
    let dir = tempdir();
    std::fs::write(dir.path().join("plan.toml"), PLAN).unwrap();
    let out = eb(
        dir.path(),
        &["suite", "plan.toml", "--results-dir", "s", "--passes", "1"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = results_under(&dir.path().join("s"));
    assert_eq!(results.len(), 4, "{results:?}");
    let mut engines = Vec::new();
    for r in &results {
        let doc = read_json(r);
        assert_schema_valid(&doc);
        assert_eq!(doc["status"], "complete");
        assert_eq!(doc["target"]["server"]["profile"], "mariadb:small");
        engines.push(doc["target"]["engine"].as_str().unwrap().to_string());
    }
    engines.sort();
    engines.dedup();
    assert_eq!(engines, vec!["InnoDB", "MyISAM"]);
    let summary = std::fs::read_to_string(dir.path().join("s/summary.md")).unwrap();
    assert!(summary.contains("mariadb-small-myisam-t2"), "{summary}");
    assert!(summary.contains("max_connections = 300"), "{summary}");
    // The suite's report: one series per engine, each with both thread counts.
    let html = std::fs::read_to_string(dir.path().join("s/report.html")).unwrap();
    assert!(
        html.contains(">mariadb-small-innodb<") && html.contains(">mariadb-small-myisam<"),
        "series named after the cell groups"
    );
    let first_chart = html
        .split("<svg class=\"chart\"")
        .nth(1)
        .unwrap()
        .split("</svg>")
        .next()
        .unwrap();
    assert_eq!(
        first_chart.matches("class=\"pt\"").count(),
        4,
        "2 engines x 2 thread counts"
    );
    // Again: everything is complete, nothing runs.
    let again = eb(
        dir.path(),
        &["suite", "plan.toml", "--results-dir", "s", "--passes", "1"],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stderr.contains("4 already complete, 0 to run"),
        "{}",
        again.stderr
    );
    assert_eq!(results_under(&dir.path().join("s")), results);
}

#[test]
fn server_killed_mid_run_ends_promptly_naming_it() {
    if !have("mariadb") {
        return;
    }
    let dir = tempdir();
    let (mut child, err) = spawn(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--server",
            "mariadb:small",
            "--table-size",
            "500",
            "--threads",
            "1,2",
            "--warmup",
            "0",
            "--duration",
            "2s",
            "--runs",
            "2",
            "--queries",
            "READ_PK_POINT",
        ],
    );
    let res_dir = dir.path().join("enginebench-results");
    // Wait until the first point is on disk, then kill the server in the second point.
    wait_for("the first point", Duration::from_secs(40), || {
        results_under(&res_dir)
            .first()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<Json>(&t).ok())
            .is_some_and(|d| !d["points"].as_array().unwrap().is_empty())
    });
    std::thread::sleep(Duration::from_millis(500));
    let text = std::fs::read_to_string(&err).unwrap();
    let pid = pid_in(&text).expect("server pid printed");
    // SAFETY: a process this test's child started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let t0 = Instant::now();
    let code =
        wait_exit(&mut child, Duration::from_secs(30)).expect("run hung after the server died");
    let took = t0.elapsed();
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, 1, "{text}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let last = text.lines().last().unwrap();
    assert!(
        last.contains("MariaDB server (pid") && last.contains("ended during the run"),
        "{last}"
    );
    let doc = read_json(&results_under(&res_dir)[0]);
    assert_schema_valid(&doc);
    assert_eq!(doc["status"], "failed");
    // The first point, and the second one up to the crash with its lost connections counted.
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0]["runs"].as_array().unwrap().len(), 2);
    let cut = points[1]["runs"].as_array().unwrap().last().unwrap();
    assert_eq!(cut["workers_lost"], 2, "{cut}");
    assert_eq!(cut["errors"]["connection_lost"], 2, "{cut}");
    assert!(doc["error"].as_str().unwrap().contains("MariaDB server"));
    assert!(!alive(pid));
    // The dead server's folder is kept for its log; nothing runs in it.
    let folder = text
        .split("folder ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert!(processes_mentioning(&folder).is_empty());
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn sigint_in_suite_saves_stops_server_and_resumes() {
    if !have("mariadb") {
        return;
    }
    let dir = tempdir();
    let plan = PLAN.replace("duration = \"300ms\"", "duration = \"2s\"");
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let (mut child, err) = spawn(
        dir.path(),
        &["suite", "plan.toml", "--results-dir", "s", "--passes", "1"],
    );
    let s = dir.path().join("s");
    // Interrupt in the middle of the second cell's first run.
    wait_for("the second cell", Duration::from_secs(40), || {
        results_under(&s).len() >= 2
    });
    std::thread::sleep(Duration::from_millis(700));
    let text = std::fs::read_to_string(&err).unwrap();
    let docs: Vec<Json> = results_under(&s).iter().map(|p| read_json(p)).collect();
    let server_pid = docs[0]["target"]["server"]["pid"].as_u64().unwrap() as u32;
    // SAFETY: our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    // The client (the running cell) stops and writes its result within 3 s...
    let t0 = Instant::now();
    wait_for(
        "the interrupted cell's result",
        Duration::from_secs(3),
        || {
            results_under(&s)
                .iter()
                .any(|p| read_json(p)["status"] == "interrupted")
        },
    );
    let client_stop = t0.elapsed();
    // ...then the suite stops the server (a clean shutdown; slower on a loaded machine) and exits.
    let code = wait_exit(&mut child, Duration::from_secs(30)).expect("suite hung after SIGINT");
    let text2 = std::fs::read_to_string(&err).unwrap();
    assert_eq!(code, 130, "{text}{text2}");
    eprintln!(
        "client stopped {client_stop:?} after SIGINT; the suite exited {:?} after",
        t0.elapsed()
    );
    assert!(
        !alive(server_pid),
        "the suite's server {server_pid} still runs"
    );
    let statuses: Vec<String> = results_under(&s)
        .iter()
        .map(|p| read_json(p)["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses[0], "complete");
    assert!(statuses.iter().any(|x| x == "interrupted"), "{statuses:?}");
    // Resume: the server starts again, so the finished cell of the same section runs again
    // too (a fresh server's cells are not compared with a warm one's); its old result is set
    // aside.
    let out = eb(
        dir.path(),
        &["suite", "plan.toml", "--results-dir", "s", "--passes", "1"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("0 already complete, 4 to run")
            && out.stderr.contains("complete cell(s) run again too"),
        "{}",
        out.stderr
    );
    let results = results_under(&s);
    assert_eq!(results.len(), 4);
    for r in results {
        assert_eq!(read_json(&r)["status"], "complete");
    }
}
