//! Live output of a run: `--format jsonl` lines and the `--metrics-addr` endpoint, scraped by a
//! real Prometheus (Debian's package, which scripts/test.sh installs).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{self, eb, fresh_db, result_file, server_url, tempdir};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on 127.0.0.1:port; (status code, body).
fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut c = TcpStream::connect(("127.0.0.1", port))?;
    c.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        c,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    c.read_to_string(&mut text)?;
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |p| p.1).to_string();
    Ok((status, body))
}

fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A private Prometheus, killed when dropped (also when the test fails).
struct Prometheus {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Prometheus scraping 127.0.0.1:`target` every second; None (skipped) when it is not
    /// installed, unless EB_REQUIRE_SERVERS=1 (then the test fails).
    fn start(dir: &Path, target: u16) -> Option<Prometheus> {
        let bin = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
            .into_iter()
            .find(|p| Path::new(p).exists());
        let Some(bin) = bin else {
            if std::env::var("EB_REQUIRE_SERVERS").as_deref() == Ok("1") {
                panic!("prometheus is not installed but EB_REQUIRE_SERVERS=1: scripts/test.sh installs Debian's package");
            }
            eprintln!("skipped: prometheus is not installed (run scripts/test.sh)");
            return None;
        };
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: enginebench\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let log = dir.join("prometheus.log");
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start prometheus");
        let p = Prometheus { child, port, log };
        let t0 = Instant::now();
        while !matches!(http_get(port, "/-/ready"), Ok((200, _))) {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "prometheus not ready after 60 s: {}",
                std::fs::read_to_string(&p.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(p)
    }

    /// The value of an instant query that returns one sample.
    fn query(&self, q: &str) -> f64 {
        let (status, body) = http_get(self.port, &format!("/api/v1/query?query={}", encode(q)))
            .expect("query prometheus");
        assert_eq!(status, 200, "{q}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let result = v["data"]["result"].as_array().expect("a vector");
        assert_eq!(result.len(), 1, "{q}: {body}");
        result[0]["value"][1].as_str().unwrap().parse().unwrap()
    }
}

/// A 20 s point select against MariaDB with --metrics-addr, scraped every second by a real
/// Prometheus: its last scrape has the run's exact op count (the endpoint stays up until a
/// scraper has read the final numbers), and the p99 that Prometheus computes from the fixed
/// buckets lies in the bucket of the result's p99.
#[test]
fn prometheus_scrapes_the_metrics_of_a_run() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let dir = tempdir();
    let port = free_port();
    let Some(prom) = Prometheus::start(dir.path(), port) else {
        return;
    };
    // 20 s of point selects move the server's global counters that other tests compare.
    let _lock = common::server_lock();
    let url = fresh_db(&base, "eb_live_metrics");
    let addr = format!("127.0.0.1:{port}");
    let o = eb(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "-t",
            &url,
            "--table-size",
            "10000",
            "--threads",
            "2",
            "--warmup",
            "0",
            "--duration",
            "20s",
            "--runs",
            "1",
            "--metrics-addr",
            &addr,
            "--results-dir",
            "res",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o
        .stderr
        .contains(&format!("metrics: http://{addr}/metrics")));
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(result_file(&dir.path().join("res"))).unwrap(),
    )
    .unwrap();
    common::assert_schema_valid(&doc);
    let run = &doc["points"][0]["runs"][0];
    let ops = run["ops"].as_u64().unwrap() as f64;
    // One report interval (1 s) of operations.
    let per_interval = run["ops_per_s"].as_f64().unwrap();
    assert!(ops > 0.0);

    // The process has ended, so its series are stale now: read their last values.
    let scraped =
        prom.query(r#"sum(max_over_time(enginebench_operations_total{phase="run"}[10m]))"#);
    assert!(
        (scraped - ops).abs() <= per_interval + 1.0,
        "Prometheus has {scraped} operations, the result {ops} (one interval: {per_interval:.0})"
    );
    let phases = prom.query(r#"count(max_over_time(enginebench_phase_info{phase="run",operation="oltp_point_select",threads="2"}[10m]))"#);
    assert_eq!(phases, 1.0);
    let cpu = prom.query("max_over_time(enginebench_client_cpu_seconds_total[10m])");
    assert!(cpu > 0.0, "client CPU {cpu}");

    let p99_us = run["latency_us"]["p99_us"].as_u64().unwrap();
    let q99_us = 1e6
        * prom.query(
            r#"histogram_quantile(0.99, sum by (le) (max_over_time(enginebench_latency_seconds_bucket{phase="run"}[10m])))"#,
        );
    let bounds = enginebench::live::metrics::BOUNDS_US;
    let hi = bounds
        .iter()
        .copied()
        .find(|&b| b >= p99_us)
        .unwrap_or(u64::MAX);
    let lo = bounds
        .iter()
        .copied()
        .rev()
        .find(|&b| b < p99_us)
        .unwrap_or(0);
    // HDR's p99 is its bucket's highest value, the fixed buckets place values by their
    // lowest: allow HDR's 0.1 % either side.
    assert!(
        q99_us >= lo as f64 * 0.999 && q99_us <= hi as f64 * 1.001,
        "Prometheus's p99 {q99_us:.1} us is outside the bucket ({lo}, {hi}] of the result's p99 {p99_us} us"
    );
}

/// Every stdout line of `--format jsonl` is JSON of the line schema; a run's interval lines add
/// up to the run's ops in the result file; the load reports progress; the last line names the
/// result file.
#[test]
fn jsonl_lines_add_up_to_the_result() {
    let dir = tempdir();
    let target = format!("sqlite://{}/live.db", dir.path().display());
    let o = eb(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "-t",
            &target,
            "--table-size",
            "5000",
            "--threads",
            "2",
            "--warmup",
            "1s",
            "--duration",
            "2s",
            "--runs",
            "2",
            "--report-interval",
            "500ms",
            "--format",
            "jsonl",
            "--results-dir",
            "res",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let schema: Value =
        serde_json::from_str(include_str!("../../schema/live-line-v1.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let lines: Vec<Value> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    for l in &lines {
        let errors: Vec<String> = v.iter_errors(l).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{l}: {errors:?}");
    }
    // --report-interval also prints the interval lines on stderr (--live-report).
    assert!(o.stderr.contains("ops/s: "), "{}", o.stderr);
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["status"], "complete");
    assert_eq!(last["exit_code"], 0);
    let path = dir.path().join(last["path"].as_str().unwrap());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let progress: Vec<&Value> = lines.iter().filter(|l| l["type"] == "progress").collect();
    assert!(
        progress
            .iter()
            .any(|p| p["done"] == true && p["table"] == "sbtest1" && p["rows"] == 5000),
        "{progress:?}"
    );
    assert!(lines
        .iter()
        .any(|l| l["type"] == "interval" && l["phase"] == "warmup" && l["run"] == 0));
    let runs = doc["points"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        let n = r["run"].as_u64().unwrap();
        let summed: u64 = lines
            .iter()
            .filter(|l| l["type"] == "interval" && l["phase"] == "run" && l["run"] == n)
            .map(|l| l["ops"].as_u64().unwrap())
            .sum();
        assert_eq!(summed, r["ops"].as_u64().unwrap(), "run {n}");
        assert!(summed > 0);
    }
    // Not a terminal: no progress bars on stderr.
    assert!(!o.stderr.contains("ETA"), "{}", o.stderr);
}

/// A bad --metrics-addr and a port in use: one line, exit 2, before anything is loaded.
#[test]
fn bad_metrics_addresses_are_usage_errors() {
    let dir = tempdir();
    let target = format!("sqlite://{}/live.db", dir.path().display());
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let in_use = taken.local_addr().unwrap().to_string();
    for (addr, says) in [
        ("9464", "is not HOST:PORT"),
        (in_use.as_str(), "cannot listen"),
    ] {
        let o = eb(
            dir.path(),
            &[
                "run",
                "oltp_point_select",
                "-t",
                &target,
                "--metrics-addr",
                addr,
                "--results-dir",
                "res",
            ],
        );
        assert_eq!(o.code, 2, "{addr}: {}", o.stderr);
        assert!(o.stderr.contains(says), "{addr}: {}", o.stderr);
        assert_eq!(o.stderr.trim().lines().count(), 1, "{}", o.stderr);
        assert!(!o.stderr.contains("panicked"));
        assert!(!dir.path().join("res").exists(), "nothing ran");
    }
}
