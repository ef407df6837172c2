//! Open loop (`--rate`): a sustainable rate is kept, an impossible one ends on time with its
//! backlog reported, response time ≫ service time, and bounded client memory.

use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::common::*;

fn run_rate(url: &str, dir: &std::path::Path, extra: &[&str]) -> (Json, Duration, u64) {
    let results = dir.join("results");
    let mut args = vec![
        "run",
        "micro-read",
        "--target",
        url,
        "--table-size",
        "2000",
        "--queries",
        "READ_PK_POINT",
        "--runs",
        "1",
        "--format",
        "json",
        "--results-dir",
        results.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    // Run the binary ourselves to sample its memory while it runs.
    let child = std::process::Command::new(BIN)
        .args(&args)
        .current_dir(dir)
        .env_remove("ENGINEBENCH_TARGET")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    let sampler = std::thread::spawn(move || {
        let mut max_kb = 0u64;
        loop {
            let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
                return max_kb;
            };
            if s.contains("State:\tZ") {
                return max_kb;
            }
            if let Some(l) = s.lines().find(|l| l.starts_with("VmRSS:")) {
                let kb: u64 = l
                    .split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                max_kb = max_kb.max(kb);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let out = child.wait_with_output().unwrap();
    let wall = t0.elapsed();
    let max_rss_kb = sampler.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "run failed: {stderr}");
    let doc: Json = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_schema_valid(&doc);
    (doc, wall, max_rss_kb)
}

fn check_sustained(url: &str) {
    let dir = tempdir();
    let (doc, _, _) = run_rate(
        url,
        dir.path(),
        &[
            "--threads",
            "4",
            "--rate",
            "400",
            "--duration",
            "3s",
            "--warmup",
            "300ms",
        ],
    );
    let cfg = &doc["config"]["pacing"];
    assert_eq!(cfg["mode"], "fixed_rate");
    assert_eq!(cfg["arrivals"], "poisson");
    let run = &doc["points"][0]["runs"][0];
    let ops_per_s = run["ops_per_s"].as_f64().unwrap();
    // Poisson: 1200 arrivals expected, standard deviation ≈ 35 (3 %).
    assert!(
        (400.0 * 0.9..=400.0 * 1.1).contains(&ops_per_s),
        "ops/s {ops_per_s} at --rate 400"
    );
    let ol = &run["open_loop"];
    // A loaded machine may wake the last starts late; nothing more.
    assert!(ol["backlog_ops"].as_u64().unwrap() <= 12, "{ol}");
    assert!(run["elapsed_s"].as_f64().unwrap() < 3.1, "{run}");
    assert_eq!(
        ol["intended_ops"].as_u64().unwrap(),
        run["ops"].as_u64().unwrap() + ol["backlog_ops"].as_u64().unwrap()
    );
    let resp = run["response_us"]["p50_us"].as_u64().unwrap();
    let serv = run["latency_us"]["p50_us"].as_u64().unwrap();
    assert!(resp >= serv, "response {resp} < service {serv}");
    assert!(
        doc["points"][0]["aggregate"]["response_us"]["p99_us"].as_u64() > Some(0),
        "aggregate response time"
    );
}

#[test]
fn sqlite_sustained_rate_is_kept() {
    let dir = tempdir();
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    check_sustained(&url);
}

#[test]
fn mysql_sustained_rate_is_kept() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    check_sustained(&fresh_db(&url, "eb_open_loop"));
}

#[test]
fn uniform_arrivals_are_exact() {
    let dir = tempdir();
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    let (doc, _, _) = run_rate(
        &url,
        dir.path(),
        &[
            "--threads",
            "2",
            "--rate",
            "500",
            "--arrivals",
            "uniform",
            "--duration",
            "2s",
            "--warmup",
            "0",
        ],
    );
    let run = &doc["points"][0]["runs"][0];
    let ol = &run["open_loop"];
    // The schedule is exact: 1000 intended starts in 2 s, whatever the host's load. A loaded
    // host may start the last few late (backlog), never drop or invent one.
    let intended = ol["intended_ops"].as_u64().unwrap();
    assert!(
        (999..=1001).contains(&intended),
        "{intended} intended starts in 2 s at 500/s uniform"
    );
    let ops = run["ops"].as_u64().unwrap();
    let backlog = ol["backlog_ops"].as_u64().unwrap();
    assert_eq!(intended, ops + backlog, "{ol}");
    assert!(backlog <= 12, "{ol}");
    assert_eq!(ol["arrivals"], "uniform");
}

/// Far beyond what SQLite on this machine can do: the run ends on time, reports its backlog and
/// lag, response time dwarfs service time, and memory stays small (no queue of events).
#[test]
fn impossible_rate_ends_on_time_with_backlog() {
    let dir = tempdir();
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    // Load first, so that the timed run measures only the run.
    let p = eb(
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
    assert_eq!(p.code, 0, "{}", p.stderr);
    let (doc, wall, max_rss_kb) = run_rate(
        &url,
        dir.path(),
        &[
            "--threads",
            "2",
            "--rate",
            "5M",
            "--duration",
            "3s",
            "--warmup",
            "0",
        ],
    );
    assert!(
        wall < Duration::from_secs(10),
        "a 3 s overloaded run took {wall:?}"
    );
    let run = &doc["points"][0]["runs"][0];
    assert!(run["elapsed_s"].as_f64().unwrap() < 3.5, "{run}");
    let ol = &run["open_loop"];
    let intended = ol["intended_ops"].as_u64().unwrap();
    let backlog = ol["backlog_ops"].as_u64().unwrap();
    let ops = run["ops"].as_u64().unwrap();
    assert!(
        (14_000_000..=16_000_000).contains(&intended),
        "5M/s for 3 s: {intended} intended"
    );
    assert_eq!(intended, ops + backlog);
    assert!(backlog > ops, "backlog {backlog}, ops {ops}");
    assert!(ol["max_lag_us"].as_u64().unwrap() > 1_000_000, "{ol}");
    assert!(ol["late_ops"].as_u64().unwrap() > ops / 2, "{ol}");
    let resp = run["response_us"]["p50_us"].as_u64().unwrap();
    let serv = run["latency_us"]["p50_us"].as_u64().unwrap();
    assert!(
        resp > 100 * serv.max(1),
        "response p50 {resp} us, service p50 {serv} us"
    );
    assert!(
        max_rss_kb < 200 * 1024,
        "client RSS reached {max_rss_kb} kB during an overloaded run"
    );
}

#[test]
fn rate_flags_are_checked() {
    for (args, msg) in [
        (vec!["--rate", "0"], "--rate"),
        (vec!["--rate", "fast"], "--rate"),
    ] {
        let dir = tempdir();
        let mut a = vec!["run", "micro-read"];
        a.extend(args);
        let out = eb(dir.path(), &a);
        assert_eq!(out.code, 2, "{a:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains(msg), "{}", out.stderr);
    }
    // --arrivals needs --rate (clap's usage error, also exit 2).
    let dir = tempdir();
    let out = eb(dir.path(), &["run", "micro-read", "--arrivals", "uniform"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"));
}
