//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use enginebench::db::{Conn, TargetSpec};

pub const BIN: &str = env!("CARGO_BIN_EXE_enginebench");

/// TPC-C's transaction kinds as results name them (`by_kind`).
pub const TPCC_KINDS: [&str; 5] = [
    "NewOrder",
    "Payment",
    "OrderStatus",
    "Delivery",
    "StockLevel",
];

/// Every binary this test process spawns records into no catalog unless a test says where:
/// the tests must never write into the real user's catalog. Set before `main` (and so before
/// any test thread), through the loader's init_array.
#[used]
#[link_section = ".init_array"]
static NO_USER_CATALOG: extern "C" fn() = no_user_catalog;

extern "C" fn no_user_catalog() {
    if std::env::var_os("ENGINEBENCH_CATALOG").is_none() {
        std::env::set_var("ENGINEBENCH_CATALOG", "off");
    }
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run the binary in `dir` with a clean environment for the variables it reads.
pub fn eb(dir: &Path, args: &[&str]) -> Out {
    eb_env(dir, args, &[])
}

/// The binary in `dir`, without the variables it reads for a password or a default target.
pub fn eb_command(dir: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(dir);
    for v in ["MYSQL_PWD", "PGPASSWORD", "ENGINEBENCH_TARGET"] {
        c.env_remove(v);
    }
    // As scripts/test.sh does: the runs take the ring by name where it starts, small loops too
    // (`--client-io auto` leaves loops of fewer than 8 connections on epoll).
    if std::env::var_os("EB_CLIENT_IO").is_none() && enginebench::db::ring::probe().is_ok() {
        c.env("EB_CLIENT_IO", "io_uring");
    }
    c
}

pub fn eb_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = eb_command(dir);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = output_within(c, args);
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// No invocation of a test runs longer than this (`EB_TEST_CHILD_TIMEOUT_S`, default 15 min):
/// a hung child fails its test, naming what each of its threads waits in, instead of holding
/// the whole suite until CI's own limit.
fn child_timeout() -> Duration {
    let s = std::env::var("EB_TEST_CHILD_TIMEOUT_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(900);
    Duration::from_secs(s)
}

/// `c.output()`, or a panic with the child's threads' kernel waits once `child_timeout` passed.
fn output_within(mut c: Command, args: &[&str]) -> std::process::Output {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().expect("run enginebench");
    let pid = child.id();
    let limit = child_timeout();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let timed_out = matches!(
            stop_rx.recv_timeout(limit),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        );
        timed_out.then(|| {
            let threads = thread_waits(pid);
            // SAFETY: signalling our own child, not yet reaped (we hold its Child).
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            threads
        })
    });
    let o = child.wait_with_output().expect("wait for enginebench");
    let _ = stop_tx.send(());
    if let Some(threads) = watchdog.join().unwrap() {
        panic!(
            "enginebench {} ran past {limit:?} and was killed; its threads waited in:\n{threads}\nstderr:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    o
}

/// Each thread of `pid`: its name, kernel wait channel and system call (from /proc).
fn thread_waits(pid: u32) -> String {
    let mut s = String::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return s;
    };
    for t in tasks.flatten() {
        let p = t.path();
        let read = |f: &str| {
            std::fs::read_to_string(p.join(f))
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let syscall = read("syscall");
        let nr = syscall.split_whitespace().next().unwrap_or("?");
        s.push_str(&format!(
            "  {} {}: wchan {}, syscall {nr}\n",
            t.file_name().to_string_lossy(),
            read("comm"),
            read("wchan")
        ));
    }
    s
}

/// A server URL from the environment; `None` (test skipped) unless servers are required.
pub fn server_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            if std::env::var("EB_REQUIRE_SERVERS").as_deref() == Ok("1") {
                panic!("{var} is not set but EB_REQUIRE_SERVERS=1: run the tests through scripts/test.sh");
            }
            eprintln!("skipped: {var} not set (run scripts/test.sh to start private servers)");
            None
        }
    }
}

/// Tests that read global server counters must not overlap with other tests on that server.
static SERVER: Mutex<()> = Mutex::new(());

pub fn server_lock() -> MutexGuard<'static, ()> {
    SERVER.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run `f` on a client loop with the I/O path of `EB_CLIENT_IO` (io_uring unless `epoll`,
/// where the kernel allows it), as the runner's loops do: the lean clients' tests run on both.
pub fn block<F: std::future::Future>(f: F) -> F::Output {
    enginebench::db::ring::block_on(f)
}

pub fn spec(url: &str) -> TargetSpec {
    TargetSpec::parse(url, |_| None).unwrap()
}

/// A fresh, empty database named `name` on the server of `base`; returns its URL.
pub fn fresh_db(base: &str, name: &str) -> String {
    block(async {
        let mut c = Conn::connect(&spec(base))
            .await
            .expect("connect to the test server");
        c.execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .await
            .unwrap();
        c.execute(&format!("CREATE DATABASE {name}")).await.unwrap();
    });
    let mut u = url::Url::parse(base).unwrap();
    u.set_path(&format!("/{name}"));
    u.to_string()
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("eb-it-").tempdir().unwrap()
}

/// The only result.json under `dir` (one invocation).
pub fn result_file(dir: &Path) -> PathBuf {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path().join("result.json");
        if p.exists() {
            found.push(p);
        }
    }
    assert_eq!(
        found.len(),
        1,
        "expected one result folder in {}",
        dir.display()
    );
    found.pop().unwrap()
}

/// Validate a result document against the JSON Schema in the repo.
pub fn assert_schema_valid(doc: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/result-v2.schema.json"))
            .expect("schema is JSON");
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match schema: {errors:#?}"
    );
}

/// A micro-read run with `flags` on a SQLite file in `dir` (2,000 rows), results in
/// `dir/name`; asserts it succeeded and returns its result file.
pub fn micro_read_sqlite(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let results = dir.join(name);
    let url = format!("sqlite://{}/bench.db", dir.display());
    let mut args = vec![
        "run",
        "micro-read",
        "--target",
        &url,
        "--table-size",
        "2000",
        "--results-dir",
        results.to_str().unwrap(),
    ];
    args.extend_from_slice(flags);
    let r = eb(dir, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    result_file(&results)
}

/// True while process `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s.rsplit(')').next().unwrap_or("").split_whitespace().next();
            !matches!(state, Some("Z") | Some("X"))
        }
        Err(_) => false,
    }
}

/// Wait up to `within` for process `pid` to end; true when it did.
pub fn wait_gone(pid: u32, within: std::time::Duration) -> bool {
    let end = std::time::Instant::now() + within;
    while std::time::Instant::now() < end {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// A private MariaDB of one test: `enginebench server start mariadb --profile small` in a
/// temporary folder (optionally `--bind ADDR` and `--server-opt`s), killed on drop. It can
/// be crashed and restarted in place (`crash_and_restart`).
pub struct OwnServer {
    dir: tempfile::TempDir,
    /// The URL `server start` printed (root over the server's socket).
    pub url: String,
    /// Its TCP port.
    pub port: u16,
    /// The server process (the restarted one after `crash_and_restart`).
    pub pid: u32,
    argv: Vec<String>,
    restarted: Option<std::process::Child>,
}

impl OwnServer {
    pub fn mariadb() -> OwnServer {
        OwnServer::start(None, &[])
    }

    pub fn start(bind: Option<&str>, server_opts: &[&str]) -> OwnServer {
        let dir = tempdir();
        let data = dir.path().join("srv");
        let mut args = vec![
            "server",
            "start",
            "mariadb",
            "--profile",
            "small",
            "--datadir",
            data.to_str().unwrap(),
        ];
        if let Some(b) = bind {
            args.extend(["--bind", b]);
        }
        for o in server_opts {
            args.extend(["--server-opt", o]);
        }
        let out = eb(dir.path(), &args);
        assert_eq!(out.code, 0, "server start: {}", out.stderr);
        let st: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(data.join("server.json")).unwrap())
                .unwrap();
        let pid = st["pid"].as_u64().unwrap() as u32;
        let port = out
            .stderr
            .split("port ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .and_then(|s| s.trim().parse().ok())
            .expect("the port in server start's line");
        let argv = std::fs::read(format!("/proc/{pid}/cmdline"))
            .unwrap()
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        OwnServer {
            dir,
            url: out.stdout.trim().to_string(),
            port,
            pid,
            argv,
            restarted: None,
        }
    }

    /// The server's Unix socket (the `socket=` of its URL).
    pub fn socket(&self) -> String {
        url::Url::parse(&self.url)
            .unwrap()
            .query_pairs()
            .find(|(k, _)| k == "socket")
            .map(|(_, v)| v.into_owned())
            .expect("a socket URL")
    }

    /// A crash and a restart on the same socket and port (InnoDB recovers its data).
    pub fn crash_and_restart(&mut self) {
        kill(self.pid, libc::SIGKILL);
        assert!(wait_gone(self.pid, std::time::Duration::from_secs(5)));
        let mut c = Command::new(&self.argv[0]);
        c.args(&self.argv[1..])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let child = c.spawn().unwrap();
        self.pid = child.id();
        self.restarted = Some(child);
    }
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill with the pid of a server this test started.
    unsafe { libc::kill(pid as i32, sig) };
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        // It may be stopped (SIGSTOP) by the test: continue it, then kill it; its folder goes.
        kill(self.pid, libc::SIGCONT);
        kill(self.pid, libc::SIGKILL);
        if let Some(c) = self.restarted.as_mut() {
            let _ = c.wait();
        }
        wait_gone(self.pid, std::time::Duration::from_secs(5));
        let _ = self.dir.path();
    }
}

/// Send `sig` to a process the test started (directly or through the tool).
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill with a pid this test started (directly or through the tool).
    unsafe { libc::kill(pid as i32, sig) };
}

/// Start the binary in `dir` (a clean environment for the variables it reads, as `eb`) with
/// its stderr in a file the test can watch: `stderr-<command>.txt`, returned beside the child.
pub fn spawn(dir: &Path, args: &[&str]) -> (Child, PathBuf) {
    let err = dir.join(format!("stderr-{}.txt", args[0]));
    let c = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("MYSQL_PWD")
        .env_remove("PGPASSWORD")
        .env_remove("ENGINEBENCH_TARGET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    (c, err)
}

/// Poll `f` every 20 ms until it is true; panics naming `what` after `within`.
pub fn wait_for(what: &str, within: Duration, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("timed out waiting for {what}");
}

/// Wait until the file `err` (a spawned run's stderr) contains `needle`.
pub fn wait_text(err: &Path, needle: &str, within: Duration) {
    wait_for(needle, within, || {
        std::fs::read_to_string(err).is_ok_and(|t| t.contains(needle))
    });
}
