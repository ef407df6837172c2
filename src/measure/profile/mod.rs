//! `--profile-server`: the server's CPU sampled with `perf record` (software event cpu-clock,
//! call graphs by frame pointer) over exactly one measured run, then read back with
//! `perf script` (the server's processes only) into where the time went: top functions (self and inclusive), system calls by
//! time, and the shares in the kernel, in locks, in I/O, on the network, in the engine's own
//! code and in code perf could not name; plus the folded stacks a flame graph is drawn from.
//!
//! perf and not the perf_event interface directly: perf resolves symbols from the binaries
//! (mariadbd exports its functions for plugins), the kernel's and the libraries' ones, which a
//! hand-written reader would have to redo. Without perf or without permission the run goes
//! on: `start` says why in one line.
//!
//! perf samples every CPU (`-a`) and the server's samples are picked out afterwards, rather
//! than following the server's threads (`-p`): events that follow threads are switched in and
//! out with the thread at every context switch, and a server whose threads sleep once per
//! query then paid 1.16x its CPU per query (point select, 16 connections, BENCHMARKS.md).
//! Per-CPU events cost only their samples. Where system-wide sampling is refused
//! (perf_event_paranoid above 0 without CAP_PERFMON), perf follows the threads instead.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod samples;

// perf's samples read back into a profile, and profiles compared and averaged.
pub use samples::{differing_functions, mean, parse_script, summarize, Frame, Sample};

/// The sampling rate when `--profile-server` gives none: about 200 samples per second of
/// server CPU, enough for a run's top functions, for 0.99–1.01x the server's CPU per query
/// on a quiet host (docs/profile.md, "What it costs").
pub const DEFAULT_HZ: u32 = 199;

/// The perf binary: `ENGINEBENCH_PERF` when set (a path, or a name looked up on PATH), else
/// `perf`. Pointing it at a missing file is how the tests check a run without perf.
pub fn perf_binary() -> String {
    std::env::var("ENGINEBENCH_PERF")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "perf".to_string())
}

/// How many functions, system calls and stacks a run keeps (the rest is summed up).
const TOP_FUNCTIONS: usize = 40;
const TOP_STACKS: usize = 400;

/// Where the server's CPU went over one measured run, per operation.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerProfile {
    /// Sampling rate (samples per second of the server's CPU time).
    pub hz: u32,
    pub samples: u64,
    /// CPU time the samples stand for (each sample counts its period).
    pub cpu_s: f64,
    /// `cpu_s` per operation of the run: to hold against `server_process.cpu_us_per_op`.
    pub cpu_us_per_op: f64,
    /// `cpu_us_per_op` ÷ `server_process.cpu_us_per_op` of the same run: how much of the
    /// server's CPU (/proc) the samples stand for. Below 1 the per-operation times are low by
    /// that much; the shares are not (docs/profile.md). Absent where /proc was not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// Shares of the samples (0..1): leaf in the kernel; anywhere under a lock or futex wait;
    /// under a file I/O system call or file system; under a socket call; leaf in the storage
    /// engine's own code; leaf perf could not name.
    pub kernel_share: f64,
    pub lock_share: f64,
    pub io_share: f64,
    pub network_share: f64,
    pub engine_share: f64,
    pub unresolved_share: f64,
    /// The functions with the most self or inclusive time, most self time first.
    pub functions: Vec<ProfileFunction>,
    /// System calls by the CPU time spent under them (perf samples CPU time: calls that wait
    /// off the CPU do not show, and counts would need a tracer that costs far more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub syscalls: Vec<ProfileSyscall>,
    /// Folded stacks (root first, `;` between frames) with their sample counts, the most
    /// frequent `TOP_STACKS`; the rest as one `[other stacks]` line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<FoldedStack>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProfileFunction {
    pub name: String,
    /// The binary or library it is in (file name), `[kernel]` for the kernel.
    pub module: String,
    pub self_us_per_op: f64,
    pub inclusive_us_per_op: f64,
    pub self_share: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProfileSyscall {
    pub name: String,
    pub us_per_op: f64,
    pub share: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FoldedStack {
    pub stack: String,
    pub samples: u64,
}

/// A `perf record` sampling the server for one measured run.
pub struct Profiler {
    child: Child,
    file: PathBuf,
    hz: u32,
    /// The server's process; its samples (and its children's) are the profile.
    pid: u32,
    /// perf's control FIFO (`enable`, `disable`) and the FIFO it answers `ack` on.
    control: Control,
}

/// perf's control FIFOs (`perf record --control=fifo:CTL,ACK`), opened read-write here so
/// neither side blocks opening them, and removed when dropped.
struct Control {
    ctl: std::fs::File,
    ack: std::fs::File,
    paths: [PathBuf; 2],
}

impl Control {
    fn new(base: &std::path::Path) -> Result<Control, String> {
        let paths = [base.with_extension("ctl"), base.with_extension("ack")];
        for p in &paths {
            let _ = std::fs::remove_file(p);
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes())
                .map_err(|_| format!("bad temporary path {}", p.display()))?;
            // SAFETY: a valid NUL-terminated path.
            if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
                let e = std::io::Error::last_os_error();
                return Err(format!("cannot make a FIFO {}: {e}", p.display()));
            }
        }
        let open = |p: &PathBuf| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(p)
                .map_err(|e| format!("cannot open {}: {e}", p.display()))
        };
        match (open(&paths[0]), open(&paths[1])) {
            (Ok(ctl), Ok(ack)) => Ok(Control { ctl, ack, paths }),
            (Err(e), _) | (_, Err(e)) => {
                for p in &paths {
                    let _ = std::fs::remove_file(p);
                }
                Err(e)
            }
        }
    }

    /// The `--control` argument naming both FIFOs.
    fn arg(&self) -> String {
        format!(
            "--control=fifo:{},{}",
            self.paths[0].display(),
            self.paths[1].display()
        )
    }

    /// Send `command` and wait for perf's `ack`; Err if perf exits first or takes longer
    /// than `limit`.
    fn send(&mut self, command: &str, child: &mut Child, limit: Duration) -> Result<(), String> {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        self.ctl
            .write_all(format!("{command}\n").as_bytes())
            .map_err(|e| format!("perf control: {e}"))?;
        let until = std::time::Instant::now() + limit;
        let mut got = Vec::new();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(exit_line(status, child));
            }
            let mut fds = libc::pollfd {
                fd: self.ack.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let ready = unsafe { libc::poll(&mut fds, 1, 10) };
            if ready > 0 {
                let mut buf = [0u8; 64];
                let n = self
                    .ack
                    .read(&mut buf)
                    .map_err(|e| format!("perf control: {e}"))?;
                got.extend_from_slice(&buf[..n]);
                if got.windows(3).any(|w| w == b"ack") {
                    return Ok(());
                }
            }
            if std::time::Instant::now() >= until {
                return Err(format!(
                    "perf did not answer `{command}` within {} s",
                    limit.as_secs()
                ));
            }
        }
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// perf exited early: its status and the first line it printed.
fn exit_line(status: std::process::ExitStatus, child: &mut Child) -> String {
    let err = stderr_of(child);
    let line = first_line(&err).unwrap_or("no message");
    format!("{} record exited ({status}): {line}", perf_binary())
}

/// What perf printed on its standard error (read once; empty after).
fn stderr_of(child: &mut Child) -> String {
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    err
}

/// The first line of `text` that says something.
fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

/// The server's processes: `pid` and its direct children (PostgreSQL: the postmaster and its
/// backends, which exist before the measured run since its connections are open).
fn server_pids(pid: u32) -> String {
    let mut pids = vec![pid];
    pids.extend(super::proc::children(pid));
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    list.join(",")
}

/// Start `perf record` on every CPU for the server `pid`; where that is refused, on the
/// server's threads. Err is the one-line reason profiling is off.
/// `on`: sampling from the return on; else it waits for [`Profiler::resume`].
pub fn start(pid: u32, hz: u32, on: bool) -> Result<Profiler, String> {
    match record(pid, hz, &["-a"], on) {
        Ok(p) => Ok(p),
        // No perf to run: nothing else to try.
        Err(none) if none.starts_with("cannot run") => Err(none),
        Err(wide) => record(pid, hz, &["-p", &server_pids(pid)], on)
            .map_err(|e| format!("{e} (and on every CPU: {wide})")),
    }
}

/// `perf record` with `scope` (`-a`, or `-p PIDS`), started with its events off and, with
/// `on`, switched on through its control FIFO: the call returns once perf answers, however
/// long perf took to set up (a fixed wait was too short on a loaded host, and the start of a
/// short run went unsampled).
fn record(pid: u32, hz: u32, scope: &[&str], on: bool) -> Result<Profiler, String> {
    let perf = perf_binary();
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file =
        std::env::temp_dir().join(format!("enginebench-perf-{}-{n}.data", std::process::id()));
    let mut control = Control::new(&file)?;
    let mut child = Command::new(&perf)
        .args(["record", "-q", "-e", "cpu-clock", "-g", "-D", "-1", "-F"])
        .arg(hz.to_string())
        .arg(control.arg())
        .args(scope)
        .arg("-o")
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!("cannot run {perf}: {e} (install linux-perf, or set ENGINEBENCH_PERF)")
        })?;
    // perf refuses (no permission, perf_event_paranoid) within a moment, or answers once it
    // has attached everywhere (and switched the events on).
    let first = if on { "enable" } else { "disable" };
    if let Err(why) = control.send(first, &mut child, START_LIMIT) {
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_file(&file);
        return Err(why);
    }
    Ok(Profiler {
        child,
        file,
        hz,
        pid,
        control,
    })
}

/// How long perf may take to start sampling (it reads every process of the host with `-a`).
const START_LIMIT: Duration = Duration::from_secs(20);
/// How long a running perf may take to answer `enable` or `disable`.
const TOGGLE_LIMIT: Duration = Duration::from_secs(2);

/// `--profile-server` around one measured run: a started profiler, or None (off, or it
/// cannot start: the reason is printed once per process, the run goes on without it).
pub fn start_for_run(hz: Option<u32>, pid: Option<u32>) -> Option<Profiler> {
    start_or_say(hz, pid, true)
}

/// `--profile-server` over the timed parts of one operation (sql-bench): a profiler that
/// samples between its [`Profiler::resume`] and [`Profiler::pause`] calls only.
pub fn start_paused(hz: Option<u32>, pid: Option<u32>) -> Option<Profiler> {
    start_or_say(hz, pid, false)
}

fn start_or_say(hz: Option<u32>, pid: Option<u32>, on: bool) -> Option<Profiler> {
    let hz = hz?;
    let why = match pid {
        None => "no server pid known (use --server, or --server-pid for a server on this host)"
            .to_string(),
        Some(pid) => match start(pid, hz, on) {
            Ok(p) => return Some(p),
            Err(why) => why,
        },
    };
    say_once(&why);
    None
}

/// Stop a run's profiler: its profile, or None with the reason printed once.
pub fn stop_for_run(p: Option<Profiler>, ops: u64) -> Option<ServerProfile> {
    match p?.stop(ops) {
        Ok(p) => Some(p),
        Err(why) => {
            say_once(&why);
            None
        }
    }
}

fn say_once(why: &str) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!("--profile-server: not profiling, {why}");
    }
}

/// A run's profile with its `coverage` against the server CPU /proc measured over the run.
pub fn with_coverage(
    p: Option<ServerProfile>,
    proc_us_per_op: Option<f64>,
) -> Option<ServerProfile> {
    let mut p = p?;
    p.coverage = proc_us_per_op
        .filter(|&m| m > 0.0)
        .map(|m| p.cpu_us_per_op / m);
    Some(p)
}

/// `coverage` in percent for a table or a line, `-` where /proc was not read.
pub fn coverage_text(p: &ServerProfile) -> String {
    p.coverage
        .map_or_else(|| "-".to_string(), |c| format!("{:.0} %", 100.0 * c))
}

/// Below this coverage the terminal line says the per-operation times are low.
const LOW_COVERAGE: f64 = 0.9;

/// One line for the terminal after a profiled run: the CPU perf saw per operation, the
/// shares, and the functions with the most self time.
pub fn line(p: &ServerProfile) -> String {
    if p.samples == 0 {
        return format!(
            "profile: no sample of the server (less of its CPU than one period at {} Hz?)",
            p.hz
        );
    }
    let top: Vec<String> = p
        .functions
        .iter()
        .filter(|f| f.name != "[unknown]")
        .take(4)
        .map(|f| format!("{} {:.1}", f.name, f.self_us_per_op))
        .collect();
    format!(
        "profile: {:.1} us/op in {} samples{}; kernel {:.0}%, locks {:.0}%, I/O {:.0}%, network {:.0}%, engine {:.0}%, unresolved {:.0}%; top self us/op: {}",
        p.cpu_us_per_op,
        p.samples,
        match p.coverage {
            Some(c) if c < LOW_COVERAGE => format!(
                " (covers {} of the server's CPU in /proc: us/op low by {:.0} %, shares unaffected)",
                coverage_text(p),
                100.0 * (1.0 - c)
            ),
            Some(_) => format!(" (covers {} of the server's CPU in /proc)", coverage_text(p)),
            None => String::new(),
        },
        100.0 * p.kernel_share,
        100.0 * p.lock_share,
        100.0 * p.io_share,
        100.0 * p.network_share,
        100.0 * p.engine_share,
        100.0 * p.unresolved_share,
        top.join(", ")
    )
}

impl Profiler {
    /// Sample from now on (the run's timed part resumes). A perf that no longer answers is
    /// said once; what it sampled is still read at the stop.
    pub fn resume(&mut self) {
        if let Err(why) = self.control.send("enable", &mut self.child, TOGGLE_LIMIT) {
            say_once(&why);
        }
    }

    /// Stop sampling until [`Profiler::resume`] (untimed setup follows).
    pub fn pause(&mut self) {
        if let Err(why) = self.control.send("disable", &mut self.child, TOGGLE_LIMIT) {
            say_once(&why);
        }
    }

    /// Stop sampling and read the profile; `ops` are the run's operations.
    pub fn stop(mut self, ops: u64) -> Result<ServerProfile, String> {
        // Sampling ends now, not when perf has handled its signal: the server's CPU after
        // the run (background flushing, purge) is not the run's. An old perf that does not
        // answer still stops at the signal.
        let _ = self.control.send("disable", &mut self.child, TOGGLE_LIMIT);
        // SIGINT: perf writes its file out and exits.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let status = self.child.wait().map_err(|e| format!("perf record: {e}"))?;
        let err = stderr_of(&mut self.child);
        let out = Command::new(perf_binary())
            .args([
                "script",
                "--no-inline",
                "-F",
                "comm,pid,tid,period,ip,sym,dso",
                "-i",
            ])
            .arg(&self.file)
            .arg(format!("--pid={}", server_pids(self.pid)))
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        let _ = std::fs::remove_file(&self.file);
        let out = out.map_err(|e| format!("perf script: {e}"))?;
        // No sample of the server is a profile of nothing (a timed part shorter than a
        // period, or a server that did not run): `samples` 0, and `coverage` says the rest.
        if !out.status.success() {
            let first = first_line(&err);
            return Err(format!(
                "perf recorded nothing ({status}{})",
                first.map(|l| format!(": {l}")).unwrap_or_default()
            ));
        }
        let samples = parse_script(&String::from_utf8_lossy(&out.stdout));
        Ok(summarize(&samples, self.hz, ops))
    }
}

impl Drop for Profiler {
    fn drop(&mut self) {
        // A run that failed between start and stop: no perf left behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_file(&self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "mariadbd 100/101    2000000 \n\
\t    55d0 MYSQLparse(THD*, void*) (/usr/sbin/mariadbd)\n\
\t    55e0 dispatch_command+0x10 (/usr/sbin/mariadbd)\n\
\t    55f0 do_command (/usr/sbin/mariadbd)\n\
\n\
mariadbd 100/102    2000000 \n\
\tffffffff81 copy_page ([kernel.kallsyms])\n\
\tffffffff82 filemap_read ([kernel.kallsyms])\n\
\tffffffff83 __x64_sys_pread64 ([kernel.kallsyms])\n\
\t    7f00 __libc_pread64 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
\t    5600 mi_read_datadict (/usr/sbin/mariadbd)\n\
\t    55f0 do_command (/usr/sbin/mariadbd)\n\
\n\
mariadbd 100/102    2000000 \n\
\tffffffff84 futex_wait ([kernel.kallsyms])\n\
\tffffffff85 __x64_sys_futex ([kernel.kallsyms])\n\
\n\
mariadbd 100/103    2000000 \n\
\t    9999 [unknown] (/usr/sbin/mariadbd)\n\
\n";

    #[test]
    fn parses_perf_script_and_shares() {
        let s = parse_script(SCRIPT);
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].frames[0].sym, "MYSQLparse");
        assert_eq!(s[0].frames[1].sym, "dispatch_command");
        assert_eq!(s[1].frames[0].module, "[kernel]");
        let p = summarize(&s, 499, 4);
        assert_eq!(p.samples, 4);
        assert!((p.cpu_s - 0.008).abs() < 1e-12);
        assert!((p.cpu_us_per_op - 2000.0).abs() < 1e-9);
        assert!((p.kernel_share - 0.5).abs() < 1e-12);
        assert!((p.io_share - 0.25).abs() < 1e-12);
        assert!((p.lock_share - 0.25).abs() < 1e-12);
        assert!((p.unresolved_share - 0.25).abs() < 1e-12);
        let dc = p.functions.iter().find(|f| f.name == "do_command").unwrap();
        assert_eq!(dc.self_us_per_op, 0.0);
        assert!((dc.inclusive_us_per_op - 1000.0).abs() < 1e-9);
        assert_eq!(p.syscalls[0].name, "futex");
        assert!(p
            .folded
            .iter()
            .any(|f| f.stack == "do_command;dispatch_command;MYSQLparse" && f.samples == 1));
    }

    #[test]
    fn differing_functions_largest_first() {
        let f = |name: &str, us: f64| ProfileFunction {
            name: name.into(),
            self_us_per_op: us,
            ..Default::default()
        };
        let a = ServerProfile {
            functions: vec![f("x", 1.0), f("y", 5.0)],
            ..Default::default()
        };
        let b = ServerProfile {
            functions: vec![f("x", 4.0), f("z", 0.5)],
            ..Default::default()
        };
        let d = differing_functions(&a, &b, 2);
        assert_eq!(d[0].0, "y");
        assert_eq!(d[1], ("x".to_string(), 1.0, 4.0));
    }

    #[test]
    fn coverage_is_held_against_proc_and_said_when_low() {
        let p = ServerProfile {
            hz: 199,
            samples: 10,
            cpu_us_per_op: 8.0,
            ..Default::default()
        };
        assert_eq!(with_coverage(Some(p.clone()), None).unwrap().coverage, None);
        assert_eq!(
            with_coverage(Some(p.clone()), Some(0.0)).unwrap().coverage,
            None
        );
        let low = with_coverage(Some(p.clone()), Some(10.0)).unwrap();
        assert_eq!(low.coverage, Some(0.8));
        assert!(line(&low).contains("covers 80 % of the server's CPU in /proc: us/op low by 20 %"));
        let full = with_coverage(Some(p.clone()), Some(8.2)).unwrap();
        assert!(line(&full).contains("(covers 98 % of the server's CPU in /proc)"));
        assert!(!line(&full).contains("low by"));
        let empty = ServerProfile {
            samples: 0,
            ..p.clone()
        };
        assert!(line(&empty).starts_with("profile: no sample of the server"));
        // A mean keeps the mean of the runs that have one.
        let none = ServerProfile::default();
        let m = mean(&[&low, &full, &none]).unwrap();
        assert!((m.coverage.unwrap() - (0.8 + 8.0 / 8.2) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn missing_perf_says_why() {
        std::env::set_var("ENGINEBENCH_PERF", "/nonexistent/perf");
        let e = start(std::process::id(), 99, true).err().unwrap();
        std::env::remove_var("ENGINEBENCH_PERF");
        assert!(e.contains("cannot run /nonexistent/perf"), "{e}");
        assert!(!e.contains('\n'));
    }
}
