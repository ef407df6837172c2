//! `--metrics-addr`: an OpenMetrics text endpoint (Prometheus scrapes it) served while a run
//! runs. The state here is written by the interval collector once per report interval (and by
//! the loader's progress tick); a scrape only renders it, so scraping never touches the
//! workers. Metric names and labels: docs/live.md.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::db::ErrorClass;
use crate::error::{Error, Result};
use crate::measure::{ErrorCounts, LatencyHist};

/// The latency histogram's bucket bounds in µs: the E6 series (1, 1.5, 2.2, 3.3, 4.7, 6.8
/// per decade, each about 1.47x the last) from 1 µs to 10 s. Fixed and the same in every
/// process, so that Prometheus can add the buckets of many clients (a fleet's shards).
pub const BOUNDS_US: [u64; 42] = [
    1, 2, 3, 5, 7, // below 10 µs the series rounds to whole µs (HDR's resolution)
    10, 15, 22, 33, 47, 68, //
    100, 150, 220, 330, 470, 680, //
    1_000, 1_500, 2_200, 3_300, 4_700, 6_800, //
    10_000, 15_000, 22_000, 33_000, 47_000, 68_000, //
    100_000, 150_000, 220_000, 330_000, 470_000, 680_000, //
    1_000_000, 1_500_000, 2_200_000, 3_300_000, 4_700_000, 6_800_000, //
    10_000_000,
];

/// The OpenMetrics content type (Prometheus asks for it first and parses it).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Counters of one (operation, thread count, phase, load step).
#[derive(Debug, Clone)]
struct Series {
    ops: u64,
    errors: ErrorCounts,
    /// Per bucket of `BOUNDS_US` (not cumulative), plus the overflow bucket.
    buckets: [u64; BOUNDS_US.len() + 1],
    /// Sum of the latencies in µs (each interval's mean x its count: HDR keeps no exact sum).
    sum_us: f64,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            ops: 0,
            errors: ErrorCounts::default(),
            buckets: [0; BOUNDS_US.len() + 1],
            sum_us: 0.0,
        }
    }
}

/// The labels of the phase running now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Current {
    pub phase: &'static str,
    pub operation: String,
    pub threads: usize,
    pub run: u32,
    /// The load step (from 1) of a run with steps; 0 without.
    pub step: u32,
}

/// Which series an interval adds to: operation, thread count, phase and load step (0: none).
type Key = (String, usize, &'static str, u32);

/// What the endpoint shows; written once per report interval.
#[derive(Debug, Default)]
pub struct State {
    /// `enginebench_run_info` labels (no URL: a URL may hold a password).
    pub info: Vec<(&'static str, String)>,
    pub current: Current,
    series: BTreeMap<Key, Series>,
    pub client_cpu_s: f64,
    /// Rows loaded and planned, per table.
    load: BTreeMap<String, (u64, u64)>,
    /// Growth of the server's counters over the measured runs so far, by counter name.
    server: BTreeMap<String, f64>,
    /// Bumped at every update; the linger at the end waits for a scrape of the last one.
    generation: u64,
}

impl State {
    /// One finished interval of `current`'s kind of phase (of its load step, if any).
    pub fn interval(
        &mut self,
        key: (&str, usize, &'static str, u32),
        ops: u64,
        errors: &ErrorCounts,
        hist: &LatencyHist,
    ) {
        let s = self
            .series
            .entry((key.0.to_string(), key.1, key.2, key.3))
            .or_default();
        s.ops += ops;
        s.errors.merge(errors);
        hist.add_to_buckets(&BOUNDS_US, &mut s.buckets);
        s.sum_us += hist.mean_us() * hist.count() as f64;
        self.generation += 1;
    }

    pub fn load(&mut self, table: &str, rows: u64, planned: u64) {
        self.load.insert(table.to_string(), (rows, planned));
        self.generation += 1;
    }

    /// Add one measured run's server counter deltas.
    pub fn server_counters(&mut self, delta: &BTreeMap<String, f64>) {
        for (k, v) in delta {
            *self.server.entry(k.clone()).or_default() += v;
        }
        self.generation += 1;
    }

    pub fn touch(&mut self) {
        self.generation += 1;
    }

    /// The OpenMetrics text of the state (ends with `# EOF`).
    pub fn render(&self) -> String {
        let mut o = String::with_capacity(4096);
        self.render_phase(&mut o);
        self.render_series(&mut o);
        self.render_rest(&mut o);
        o.push_str("# EOF\n");
        o
    }

    /// What runs, and the phase running now.
    fn render_phase(&self, o: &mut String) {
        family(
            o,
            "enginebench_run",
            "info",
            "What runs: workload, DBMS, tool version.",
        );
        let _ = writeln!(o, "enginebench_run_info{} 1", labels(&self.info));
        family(
            o,
            "enginebench_phase",
            "info",
            "The phase running now (load, warmup, run, idle), its operation, thread count and run number (and load step, in a run with steps).",
        );
        let c = &self.current;
        let mut l = vec![
            ("phase", c.phase.to_string()),
            ("operation", c.operation.clone()),
            ("threads", c.threads.to_string()),
            ("run", c.run.to_string()),
        ];
        if c.step > 0 {
            l.push(("step", c.step.to_string()));
        }
        let _ = writeln!(o, "enginebench_phase_info{} 1", labels(&l));
        family(
            o,
            "enginebench_threads",
            "gauge",
            "Connections of the phase running now (working in the current load step).",
        );
        let _ = writeln!(o, "enginebench_threads {}", c.threads);
        family(
            o,
            "enginebench_client_cpu_seconds",
            "counter",
            "CPU time of the whole client process (user + system), at the last report interval.",
        );
        let _ = writeln!(
            o,
            "enginebench_client_cpu_seconds_total {}",
            num(self.client_cpu_s)
        );
    }

    /// Operations, errors and latencies per operation, thread count, phase (and step).
    fn render_series(&self, o: &mut String) {
        family(
            o,
            "enginebench_operations",
            "counter",
            "Operations that succeeded, per operation, thread count and phase (and load step).",
        );
        for (k, s) in &self.series {
            let _ = writeln!(
                o,
                "enginebench_operations_total{} {}",
                labels(&key_labels(k)),
                s.ops
            );
        }
        family(
            o,
            "enginebench_errors",
            "counter",
            "Operations that failed, per operation, thread count, phase (and load step) and error class.",
        );
        for (k, s) in &self.series {
            for class in ErrorClass::ALL {
                let n = s.errors.0[class.index()];
                if n > 0 {
                    let mut l = key_labels(k);
                    l.push(("class", class.name().to_string()));
                    let _ = writeln!(o, "enginebench_errors_total{} {n}", labels(&l));
                }
            }
        }
        family(
            o,
            "enginebench_latency_seconds",
            "histogram",
            "Latency of successful operations (service time), in fixed buckets.",
        );
        for (k, s) in &self.series {
            let base = key_labels(k);
            let mut cum = 0;
            for (i, n) in s.buckets.iter().enumerate() {
                cum += n;
                let le = match BOUNDS_US.get(i) {
                    Some(&us) => num(us as f64 / 1e6),
                    None => "+Inf".to_string(),
                };
                let mut l = base.clone();
                l.push(("le", le));
                let _ = writeln!(o, "enginebench_latency_seconds_bucket{} {cum}", labels(&l));
            }
            let l = labels(&base);
            let _ = writeln!(o, "enginebench_latency_seconds_count{l} {cum}");
            let _ = writeln!(
                o,
                "enginebench_latency_seconds_sum{l} {}",
                num(s.sum_us / 1e6)
            );
        }
    }

    /// The load's rows and the server's counters.
    fn render_rest(&self, o: &mut String) {
        family(
            o,
            "enginebench_load_rows",
            "counter",
            "Rows loaded so far, per table.",
        );
        for (t, (rows, _)) in &self.load {
            let _ = writeln!(
                o,
                "enginebench_load_rows_total{} {rows}",
                labels(&[("table", t.clone())])
            );
        }
        family(
            o,
            "enginebench_load_rows_planned",
            "gauge",
            "Rows the load of each table will insert.",
        );
        for (t, (_, planned)) in &self.load {
            let _ = writeln!(
                o,
                "enginebench_load_rows_planned{} {planned}",
                labels(&[("table", t.clone())])
            );
        }
        family(
            o,
            "enginebench_server_counter",
            "gauge",
            "Growth of the server's status counters over the measured runs so far (read between runs).",
        );
        for (name, v) in &self.server {
            let _ = writeln!(
                o,
                "enginebench_server_counter{} {}",
                labels(&[("name", name.clone())]),
                num(*v)
            );
        }
    }
}

/// A series' labels: operation, threads, phase, and the load step in a run with steps.
fn key_labels((op, threads, phase, step): &Key) -> Vec<(&'static str, String)> {
    let mut l = vec![
        ("operation", op.clone()),
        ("threads", threads.to_string()),
        ("phase", phase.to_string()),
    ];
    if *step > 0 {
        l.push(("step", step.to_string()));
    }
    l
}

fn family(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# TYPE {name} {kind}");
    let _ = writeln!(o, "# HELP {name} {help}");
}

/// `{a="x",b="y"}` with OpenMetrics escaping (backslash, quote, newline).
fn labels<K: AsRef<str>>(l: &[(K, String)]) -> String {
    let mut o = String::from("{");
    for (i, (k, v)) in l.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        o.push_str(k.as_ref());
        o.push_str("=\"");
        for ch in v.chars() {
            match ch {
                '\\' => o.push_str("\\\\"),
                '"' => o.push_str("\\\""),
                '\n' => o.push_str("\\n"),
                c => o.push(c),
            }
        }
        o.push('"');
    }
    o.push('}');
    o
}

/// A number as OpenMetrics writes it (Rust's shortest round-trip form; no NaN here).
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "0".to_string()
    }
}

/// The shared state and what the endpoint knows of its scrapers.
#[derive(Default)]
pub struct Shared {
    state: Mutex<State>,
    scrapes: Mutex<Scrapes>,
    scraped: Condvar,
}

#[derive(Default)]
struct Scrapes {
    /// The state's generation at the last scrape, and the times of the last two scrapes.
    generation: Option<u64>,
    last: Option<Instant>,
    before_last: Option<Instant>,
}

impl Shared {
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn serve(&self) -> String {
        let (text, generation) = {
            let s = self.state();
            (s.render(), s.generation)
        };
        let mut sc = self.scrapes.lock().unwrap_or_else(|p| p.into_inner());
        sc.generation = Some(generation);
        sc.before_last = sc.last.replace(Instant::now());
        self.scraped.notify_all();
        text
    }
}

/// The endpoint: a listener on its own thread, answering GET /metrics.
pub struct Endpoint {
    pub addr: SocketAddr,
    pub shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Check `--metrics-addr` without I/O: HOST:PORT.
pub fn check_addr(addr: &str) -> Result<()> {
    let bad = || {
        Error::usage(format!(
            "--metrics-addr: '{addr}' is not HOST:PORT (e.g. 127.0.0.1:9464, or port 0 for any free port)"
        ))
    };
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(bad());
    }
    Ok(())
}

impl Endpoint {
    /// Listen on `addr` (HOST:PORT); a port in use or a host that does not resolve is a usage
    /// error (exit 2).
    pub fn start(addr: &str, shared: Arc<Shared>) -> Result<Endpoint> {
        check_addr(addr)?;
        let addrs: Vec<SocketAddr> = addr
            .to_socket_addrs()
            .map_err(|e| Error::usage(format!("--metrics-addr {addr}: {e}")))?
            .collect();
        let listener = TcpListener::bind(&addrs[..])
            .map_err(|e| Error::usage(format!("--metrics-addr {addr}: cannot listen: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| Error::usage(format!("--metrics-addr {addr}: {e}")))?;
        let stop = Arc::new(AtomicBool::new(false));
        let (sh, st) = (shared.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("eb-metrics".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if st.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(c) = conn {
                        // One scraper at a time is plenty; a slow one cannot stall the run
                        // (this thread is not the collector's).
                        let _ = answer(c, &sh);
                    }
                }
            })
            .map_err(|e| Error::run(format!("cannot start the metrics thread: {e}")))?;
        Ok(Endpoint {
            addr: local,
            shared,
            stop,
            thread: Some(thread),
        })
    }

    /// Keep serving until a scraper has read the final state: for at most two of its scrape
    /// intervals (the gap between its last two scrapes, capped at 30 s), and not at all when
    /// nothing scraped during the run. Returns how long it waited.
    pub fn linger(&self) -> Duration {
        let t0 = Instant::now();
        let generation = self.shared.state().generation;
        let mut sc = self
            .shared
            .scrapes
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let gap = match (sc.before_last, sc.last) {
            (Some(a), Some(b)) => b.duration_since(a),
            (None, Some(_)) => Duration::from_secs(15),
            _ => return Duration::ZERO,
        };
        let deadline = t0 + (gap * 2).min(Duration::from_secs(30));
        while sc.generation < Some(generation) {
            let now = Instant::now();
            if now >= deadline || crate::interrupt::signal().is_some() {
                break;
            }
            let wait = (deadline - now).min(Duration::from_millis(100));
            sc = self
                .shared
                .scraped
                .wait_timeout(sc, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        t0.elapsed()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept with a connection of our own.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        if TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Answer one HTTP/1.x request: GET /metrics (or /), anything else 404; one request per
/// connection.
fn answer(mut c: TcpStream, shared: &Shared) -> std::io::Result<()> {
    c.set_read_timeout(Some(Duration::from_secs(2)))?;
    c.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut req = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 * 1024 {
        let n = c.read(&mut buf)?;
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&req);
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, ctype, body) = match (method, path) {
        ("GET", "/metrics" | "/") => ("200 OK", CONTENT_TYPE, shared.serve()),
        ("GET", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "enginebench serves /metrics only\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "GET /metrics\n".to_string(),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes())?;
    c.write_all(body.as_bytes())?;
    c.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<(String, f64)> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (name, v) = l.rsplit_once(' ').unwrap();
                (name.to_string(), v.parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn buckets_are_cumulative_and_inf_is_the_count() {
        let mut st = State {
            info: vec![("workload", "oltp_point_select".into())],
            ..State::default()
        };
        st.current = Current {
            phase: "run",
            operation: "op\"x".into(),
            threads: 4,
            run: 1,
            step: 0,
        };
        let mut h = LatencyHist::new();
        for us in [1, 7, 8, 10, 11, 150, 151, 20_000_000] {
            h.record_us(us);
        }
        let mut errors = ErrorCounts::default();
        errors.add(ErrorClass::Deadlock);
        st.interval(("op\"x", 4, "run", 0), 8, &errors, &h);
        st.interval(("op\"x", 4, "run", 0), 8, &errors, &h);
        let text = st.render();
        assert!(text.ends_with("# EOF\n"), "{text}");
        // Label values are escaped.
        assert!(text.contains(r#"operation="op\"x""#), "{text}");
        let samples = parse(&text);
        let buckets: Vec<(String, f64)> = samples
            .iter()
            .filter(|(n, _)| n.starts_with("enginebench_latency_seconds_bucket"))
            .cloned()
            .collect();
        assert_eq!(buckets.len(), BOUNDS_US.len() + 1);
        for w in buckets.windows(2) {
            assert!(w[0].1 <= w[1].1, "not cumulative: {w:?}");
        }
        let get = |prefix: &str| {
            samples
                .iter()
                .find(|(n, _)| n.starts_with(prefix))
                .unwrap_or_else(|| panic!("{prefix} missing in {text}"))
                .1
        };
        assert_eq!(get("enginebench_latency_seconds_bucket{operation=\"op\\\"x\",threads=\"4\",phase=\"run\",le=\"+Inf\"}"), 16.0);
        assert_eq!(get("enginebench_latency_seconds_count"), 16.0);
        // At or below a bound: 1 µs, 7 µs; 8 and 10 µs at 10 µs; 150 µs at 150 µs.
        assert_eq!(get("enginebench_latency_seconds_bucket{operation=\"op\\\"x\",threads=\"4\",phase=\"run\",le=\"0.000007\"}"), 4.0);
        assert_eq!(get("enginebench_latency_seconds_bucket{operation=\"op\\\"x\",threads=\"4\",phase=\"run\",le=\"0.00001\"}"), 8.0);
        assert_eq!(get("enginebench_latency_seconds_bucket{operation=\"op\\\"x\",threads=\"4\",phase=\"run\",le=\"0.00015\"}"), 12.0);
        // 20 s is above the last bound (10 s): only +Inf has it.
        assert_eq!(get("enginebench_latency_seconds_bucket{operation=\"op\\\"x\",threads=\"4\",phase=\"run\",le=\"10\"}"), 14.0);
        assert_eq!(get("enginebench_operations_total"), 16.0);
        assert_eq!(get("enginebench_errors_total"), 2.0);
        assert!(text.contains("class=\"deadlock\""));
        let sum = get("enginebench_latency_seconds_sum");
        assert!((sum - 2.0 * 20_000_338.0 / 1e6).abs() < 0.1 * sum, "{sum}");
    }

    #[test]
    fn a_run_with_steps_has_a_series_per_step() {
        let mut st = State {
            current: Current {
                phase: "run",
                operation: "q".into(),
                threads: 8,
                run: 1,
                step: 2,
            },
            ..State::default()
        };
        let mut h = LatencyHist::new();
        h.record_us(100);
        st.interval(("q", 8, "run", 1), 5, &ErrorCounts::default(), &h);
        st.interval(("q", 8, "run", 2), 7, &ErrorCounts::default(), &h);
        let text = st.render();
        assert!(
            text.contains(
                r#"enginebench_operations_total{operation="q",threads="8",phase="run",step="1"} 5"#
            ),
            "{text}"
        );
        assert!(text.contains(r#"phase="run",step="2"} 7"#), "{text}");
        assert!(text.contains(r#"run="1",step="2"} 1"#), "{text}");
    }

    #[test]
    fn addresses_are_checked() {
        assert!(check_addr("127.0.0.1:9464").is_ok());
        assert!(check_addr("localhost:0").is_ok());
        assert!(check_addr("[::1]:9464").is_ok());
        for bad in ["9464", ":9464", "host:", "host:99999", "host:x"] {
            let e = check_addr(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
        }
    }

    #[test]
    fn the_endpoint_serves_the_state_and_a_port_in_use_is_a_usage_error() {
        let shared = Arc::new(Shared::default());
        shared.state().current.phase = "idle";
        let ep = Endpoint::start("127.0.0.1:0", shared.clone()).unwrap();
        let mut c = TcpStream::connect(ep.addr).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        c.read_to_string(&mut text).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains(CONTENT_TYPE));
        assert!(text.ends_with("# EOF\n"));
        let e = Endpoint::start(&ep.addr.to_string(), shared).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message.contains("cannot listen"), "{}", e.message);
    }
}
