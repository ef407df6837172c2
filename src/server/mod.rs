//! Private MariaDB / PostgreSQL servers: start one in its own folder (data, socket, log, option
//! file) on a free 127.0.0.1 port, wait until it answers, stop it cleanly — on success, on error,
//! on Ctrl-C and from Drop. No systemd, nothing system-wide is touched.
//!
//! Folder layout (the "datadir" of `--datadir`): `data/` (the server's data directory),
//! `tmp/`, `server.log`, `server.cnf` (MariaDB) or `data/enginebench.conf` (PostgreSQL), and
//! `server.json` (kind, pid, port, URL: what `server stop|status` read).
//! Sockets go to a short folder under /tmp: a Unix socket path must fit in 107 bytes.

pub mod capture;
pub mod cluster;
mod mariadb;
mod postgres;
pub mod profile;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::db::{Conn, TargetSpec};
use crate::error::{Error, Result};
use crate::measure::proc;

/// Bounded waits: start-up (InnoDB creates its files) and clean shutdown.
const START_WAIT: Duration = Duration::from_secs(60);
const STOP_WAIT: Duration = Duration::from_secs(60);
/// Retries after losing a race for a free port.
const PORT_TRIES: usize = 5;
/// The database created for benchmarks on a managed server.
pub const DATABASE: &str = "enginebench";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Mariadb,
    Postgres,
}

impl Kind {
    /// A target URL of this kind before the server runs (the real one is known after start).
    pub fn placeholder_url(self) -> &'static str {
        match self {
            Kind::Mariadb => "mysql://root@localhost/enginebench?socket=/pending",
            Kind::Postgres => "postgres://postgres@localhost/enginebench?host=/pending",
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::Mariadb => "mariadb",
            Kind::Postgres => "postgres",
        }
    }
    pub fn parse(s: &str) -> Result<Kind> {
        match s {
            "mariadb" | "mysql" => Ok(Kind::Mariadb),
            "postgres" | "postgresql" | "pg" => Ok(Kind::Postgres),
            _ => Err(Error::usage(format!(
                "unknown server '{s}': use mariadb, postgres, mariadb-galera:N, mariadb-spider:N or postgres-replicas:N"
            ))),
        }
    }
    fn title(self) -> &'static str {
        match self {
            Kind::Mariadb => "MariaDB",
            Kind::Postgres => "PostgreSQL",
        }
    }
}

/// What to start: validated from the command line, no I/O yet.
#[derive(Debug, Clone, Serialize)]
pub struct ServerSpec {
    pub kind: Kind,
    pub profile: String,
    /// `--server-opt key=value`, in order; each wins over the profile.
    pub opts: Vec<(String, String)>,
    /// Keep (or reuse) this folder instead of a temporary one.
    pub datadir: Option<PathBuf>,
    pub keep_datadir: bool,
    /// Stop the server if this process dies (throwaway servers); off for `server start`.
    #[serde(skip)]
    pub die_with_parent: bool,
    /// Benchmark connections the server must take at once (the largest --threads): its
    /// max_connections and back_log are raised to fit unless --server-opt sets them
    /// (`profile::fitted`). 0: leave the profile as it is.
    #[serde(skip)]
    pub fit_connections: usize,
    /// `server start --bind ADDR`: listen on ADDR (e.g. 0.0.0.0, or one interface's address)
    /// instead of 127.0.0.1, for clients on other machines (a fleet's shards).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind: Option<String>,
    /// One server, or a cluster of them (`cluster::Cluster` starts those).
    #[serde(skip_serializing_if = "Topology::is_single")]
    pub topology: Topology,
    /// This server's place in a cluster (set by `cluster::Cluster::start` for each node).
    #[serde(skip)]
    pub role: Role,
}

/// What `--server` starts: one server, or a cluster of servers of one kind on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(tag = "cluster", rename_all = "snake_case")]
pub enum Topology {
    #[default]
    Single,
    /// `mariadb-galera:N`: N MariaDB nodes in one Galera cluster (N >= 3).
    Galera { nodes: usize },
    /// `postgres-replicas:N`: a PostgreSQL primary and N streaming replicas (N >= 1).
    Replicas { replicas: usize },
    /// `mariadb-spider:N`: a MariaDB head with the Spider engine and N backends (N >= 1).
    Spider { backends: usize },
}

impl Topology {
    pub fn is_single(&self) -> bool {
        *self == Topology::Single
    }
    /// How many servers it runs.
    pub fn servers(&self) -> usize {
        match self {
            Topology::Single => 1,
            Topology::Galera { nodes } => *nodes,
            Topology::Replicas { replicas } => replicas + 1,
            Topology::Spider { backends } => backends + 1,
        }
    }
    /// The `--server` word that names it (`mariadb-galera:3`).
    pub fn name(&self, kind: Kind) -> String {
        match self {
            Topology::Single => kind.name().to_string(),
            Topology::Galera { nodes } => format!("mariadb-galera:{nodes}"),
            Topology::Replicas { replicas } => format!("postgres-replicas:{replicas}"),
            Topology::Spider { backends } => format!("mariadb-spider:{backends}"),
        }
    }
}

/// A node's place in a cluster: how `Server::start` sets it up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Role {
    #[default]
    Alone,
    /// A Galera node: its group-communication address, the cluster's, and whether it
    /// bootstraps the cluster (the first node) or joins it by state transfer.
    Galera {
        cluster_name: String,
        /// `host:port` of every node's group communication, comma-separated.
        peers: String,
        gcomm_port: u16,
        ist_port: u16,
        sst_port: u16,
        bootstrap: bool,
    },
    /// A streaming replica of the primary on 127.0.0.1:`primary_port` (a base backup, then
    /// `primary_conninfo` as `pg_basebackup -R` writes it).
    PgReplica { primary_port: u16 },
    /// The primary of streaming replicas.
    PgPrimary { replicas: usize },
    /// The head of a Spider cluster (loads the Spider engine; its backends are plain servers).
    SpiderHead { backends: usize },
}

/// Parse the N of `mariadb-galera:N`, at least `min`.
fn cluster_size(word: &str, n: &str, min: usize) -> Result<usize> {
    match n.parse::<usize>() {
        Ok(v) if (min..=9).contains(&v) => Ok(v),
        _ => Err(Error::usage(format!(
            "--server {word}:{n}: give the number of {} as {min} to 9, e.g. {word}:{min}",
            match word {
                "mariadb-galera" => "nodes",
                "mariadb-spider" => "backends",
                _ => "replicas",
            }
        ))),
    }
}

impl ServerSpec {
    /// Parse `mariadb[:PROFILE]` / `postgres[:PROFILE]`, `mariadb-galera:N[:PROFILE]` (N >= 3,
    /// profile `galera` by default), `postgres-replicas:N[:PROFILE]` (N >= 1) and
    /// `mariadb-spider:N[:PROFILE]` (N >= 1 backends).
    pub fn parse(s: &str, opts: &[String], datadir: Option<&str>, keep: bool) -> Result<Self> {
        let (k, rest) = s.split_once(':').unwrap_or((s, ""));
        let (kind, topology, p) = match k {
            "mariadb-galera" | "postgres-replicas" | "mariadb-spider" => {
                let (n, p) = rest.split_once(':').unwrap_or((rest, ""));
                if k == "mariadb-spider" {
                    let backends = cluster_size(k, n, 1)?;
                    let p = if p.is_empty() { "default" } else { p };
                    (Kind::Mariadb, Topology::Spider { backends }, p)
                } else if k == "mariadb-galera" {
                    let nodes = cluster_size(k, n, 3)?;
                    let p = if p.is_empty() { "galera" } else { p };
                    (Kind::Mariadb, Topology::Galera { nodes }, p)
                } else {
                    let replicas = cluster_size(k, n, 1)?;
                    let p = if p.is_empty() { "default" } else { p };
                    (Kind::Postgres, Topology::Replicas { replicas }, p)
                }
            }
            _ => {
                let kind = Kind::parse(k).map_err(|e| e.context("--server"))?;
                let p = if rest.is_empty() { "default" } else { rest };
                (kind, Topology::Single, p)
            }
        };
        profile::text(kind, p)?;
        if p == "galera" && topology.is_single() {
            return Err(Error::usage(
                "--server mariadb:galera: the galera profile is for the nodes of a cluster; use --server mariadb-galera:3",
            ));
        }
        Ok(ServerSpec {
            kind,
            profile: p.to_string(),
            opts: opts
                .iter()
                .map(|o| profile::parse_opt(o))
                .collect::<Result<_>>()?,
            datadir: datadir.map(PathBuf::from),
            keep_datadir: keep || datadir.is_some(),
            die_with_parent: true,
            fit_connections: 0,
            bind: None,
            topology,
            role: Role::Alone,
        })
    }
}

/// What `server.json` holds: enough for `server stop|status` in another invocation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    pub kind: Kind,
    pub pid: u32,
    pub port: u16,
    pub url: String,
    pub profile: String,
    pub socket_dir: PathBuf,
}

/// A running private server. Dropping it stops it (and removes its folder unless kept).
pub struct Server {
    pub kind: Kind,
    pub profile: String,
    pub pid: u32,
    pub port: u16,
    /// Target URL of the benchmark database (no password: root/trust over the local socket).
    pub url: String,
    pub root: PathBuf,
    socket_dir: PathBuf,
    keep: bool,
    child: Option<Child>,
    stopped: bool,
    /// The effective option file the server was started with (profile + --server-opt).
    pub options_text: String,
}

fn find_bin(names: &[&str], dirs: &[&str]) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    for n in names {
        for d in path.split(':').chain(dirs.iter().copied()) {
            let p = Path::new(d).join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn missing(kind: Kind, what: &str) -> Error {
    let pkgs = match kind {
        Kind::Mariadb => "mariadb-server mariadb-plugin-rocksdb",
        Kind::Postgres => "postgresql",
    };
    Error::usage(format!(
        "{} server binaries not found ({what}): install the Debian packages {pkgs} (apt-get install -y {pkgs})",
        kind.title()
    ))
}

fn pg_bindir() -> Option<PathBuf> {
    let base = Path::new("/usr/lib/postgresql");
    let fifteen = base.join("15/bin");
    if fifteen.join("postgres").is_file() {
        return Some(fifteen);
    }
    let mut v: Vec<(u32, PathBuf)> = std::fs::read_dir(base)
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, p): &(u32, PathBuf)| p.join("postgres").is_file())
        .collect();
    v.sort();
    v.pop().map(|x| x.1)
}

/// A free TCP port in 20000-32767 (below the ephemeral range, so outgoing connections do not
/// take it). The remaining race is handled by retrying the start on a bind error.
fn free_port(attempt: usize) -> u16 {
    // Random enough that concurrent runs rarely pick the same port: time, pid and attempt.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    let seed = nanos ^ ((std::process::id() as u64) << 20) ^ (attempt as u64 * 104_729);
    for i in 0..200u64 {
        let p = 20000 + (seed.wrapping_add(i * 7919) % 12768) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", p)).is_ok() {
            return p;
        }
    }
    0
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The postgres user's uid and gid.
fn postgres_ids() -> Option<(u32, u32)> {
    user_ids("postgres")
}

/// A system user's uid and gid.
fn user_ids(user: &str) -> Option<(u32, u32)> {
    let name = std::ffi::CString::new(user).ok()?;
    // SAFETY: getpwnam returns a pointer to static storage or null; read at once.
    unsafe {
        let pw = libc::getpwnam(name.as_ptr());
        if pw.is_null() {
            return None;
        }
        Some(((*pw).pw_uid, (*pw).pw_gid))
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn chown(p: &Path, ids: Option<(u32, u32)>) -> Result<()> {
    if let Some((u, g)) = ids {
        std::os::unix::fs::chown(p, Some(u), Some(g))
            .map_err(|e| Error::usage(format!("cannot chown {} to uid {u}: {e}", p.display())))?;
    }
    Ok(())
}

/// `chown -R`: a folder and everything in it.
fn chown_tree(p: &Path, ids: Option<(u32, u32)>) -> Result<()> {
    chown(p, ids)?;
    if ids.is_some() && p.is_dir() {
        for e in std::fs::read_dir(p)
            .map_err(|e| Error::usage(format!("{}: {e}", p.display())))?
            .flatten()
        {
            let path = e.path();
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                chown_tree(&path, ids)?;
            } else {
                chown(&path, ids)?;
            }
        }
    }
    Ok(())
}

/// The comment above the settings raised to fit the run's connections (kept in the options
/// file the result records).
fn fit_header(connections: usize, section: &str) -> String {
    format!(
        "\n{section}# raised by enginebench to take {connections} benchmark connections (--threads) plus {} spare; set with --server-opt to keep your own\n",
        profile::SPARE_CONNECTIONS
    )
}

/// The last lines of a log, folded into one line for an error message.
/// The error lines of a log (`ERROR` in them), else its last lines, as one line.
fn log_errors(p: &Path) -> String {
    let s = std::fs::read_to_string(p).unwrap_or_default();
    let errors: Vec<&str> = s.lines().filter(|l| l.contains("ERROR")).take(3).collect();
    if errors.is_empty() {
        return log_tail(p);
    }
    crate::error::one_line(&errors.join(" | "))
}

fn log_tail(p: &Path) -> String {
    let s = std::fs::read_to_string(p).unwrap_or_default();
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    crate::error::one_line(&tail)
}

/// Configure a child: own session (a Ctrl-C aimed at us does not hit the server: we stop it
/// cleanly), optionally another user, optionally a signal when we die.
fn child_setup(cmd: &mut Command, ids: Option<(u32, u32)>, die_sig: Option<i32>) {
    cmd.stdin(Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setsid();
            if let Some((u, g)) = ids {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(g) != 0
                    || libc::setuid(u) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // After setuid: changing credentials clears the parent-death signal.
            if let Some(sig) = die_sig {
                libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0);
            }
            Ok(())
        });
    }
}

impl Server {
    /// Start a private server as `spec` says and wait (bounded) until it answers.
    pub fn start(spec: &ServerSpec) -> Result<Server> {
        if !spec.topology.is_single() {
            return Err(Error::usage(format!(
                "--server {}: a cluster is started by `run` and `server start` (not here yet)",
                spec.topology.name(spec.kind)
            )));
        }
        let (root, keep) = match &spec.datadir {
            Some(d) => {
                std::fs::create_dir_all(d).map_err(|e| {
                    Error::usage(format!("--datadir: cannot create {}: {e}", d.display()))
                })?;
                (
                    d.canonicalize()
                        .map_err(|e| Error::usage(format!("--datadir: {e}")))?,
                    spec.keep_datadir,
                )
            }
            None => {
                let d = tempdir("eb-srv-")?;
                (d, spec.keep_datadir)
            }
        };
        if root.join("server.json").exists() {
            if let Ok(st) = read_state(&root) {
                if proc::alive(st.pid) && owns(&st, &root) {
                    return Err(Error::usage(format!(
                        "a {} server (pid {}) is already running in {}: stop it with `enginebench server stop {} --datadir {}`",
                        st.kind.name(), st.pid, root.display(), st.kind.name(), root.display()
                    )));
                }
            }
        }
        let socket_dir = tempdir("eb-sock-")?;
        let mut s = Server {
            kind: spec.kind,
            profile: spec.profile.clone(),
            pid: 0,
            port: 0,
            url: String::new(),
            root,
            socket_dir,
            keep,
            child: None,
            stopped: false,
            options_text: String::new(),
        };
        // On any error below, Drop stops what was started and removes the folders.
        match spec.kind {
            Kind::Mariadb => s.start_mariadb(spec)?,
            Kind::Postgres => s.start_postgres(spec)?,
        }
        s.write_state()?;
        Ok(s)
    }

    /// Poll until the server accepts a connection; fail (naming the log) when it exits or the
    /// bounded wait is over.
    fn wait_ready(&mut self, admin: &str, log: &Path, log_off: u64) -> Result<Ready> {
        let spec = spec_of(admin)?;
        let deadline = Instant::now() + START_WAIT;
        let rt = rt();
        loop {
            if crate::interrupt::signal().is_some() {
                return Err(Error {
                    failure: crate::error::Failure::Interrupted(
                        crate::interrupt::signal().unwrap_or(2),
                    ),
                    message: format!("interrupted while starting {}", self.kind.title()),
                });
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                self.child = None;
                self.stopped = true;
                let text = std::fs::read(log)
                    .map(|b| {
                        String::from_utf8_lossy(&b[(log_off as usize).min(b.len())..]).into_owned()
                    })
                    .unwrap_or_default();
                if text.contains("Address already in use") || text.contains("Bind on TCP/IP port") {
                    self.stopped = false;
                    return Ok(Ready::PortTaken);
                }
                return Err(Error::usage(format!(
                    "{} exited during start-up ({status}); log {}: {}",
                    self.kind.title(),
                    log.display(),
                    log_tail(log)
                )));
            }
            let ok = rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(2), Conn::connect(&spec))
                    .await
                    .map(|r| r.is_ok())
                    .unwrap_or(false)
            });
            if ok {
                return Ok(Ready::Yes);
            }
            if Instant::now() > deadline {
                return Err(Error::usage(format!(
                    "{} did not answer within {} s; log {}: {}",
                    self.kind.title(),
                    START_WAIT.as_secs(),
                    log.display(),
                    log_tail(log)
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn sql(&self, url: &str, stmts: &[&str]) -> Result<()> {
        let spec = spec_of(url)?;
        rt().block_on(async {
            let mut c = Conn::connect(&spec)
                .await
                .map_err(|e| Error::usage(format!("{}: {}", self.kind.title(), e.message)))?;
            for s in stmts {
                c.execute(s).await.map_err(|e| {
                    Error::usage(format!("{}: {s}: {}", self.kind.title(), e.message))
                })?;
            }
            Ok(())
        })
    }

    fn write_state(&self) -> Result<()> {
        let st = State {
            kind: self.kind,
            pid: self.pid,
            port: self.port,
            url: self.url.clone(),
            profile: self.profile.clone(),
            socket_dir: self.socket_dir.clone(),
        };
        let p = self.root.join("server.json");
        std::fs::write(
            &p,
            serde_json::to_string_pretty(&st).expect("state serializes"),
        )
        .map_err(|e| Error::usage(format!("{}: {e}", p.display())))
    }

    /// A one-line description for errors: which server, its pid and its log.
    pub fn describe(&self) -> String {
        format!(
            "{} server (pid {}, log {})",
            self.kind.title(),
            self.pid,
            self.root.join("server.log").display()
        )
    }

    /// True while the server process runs (a killed, unreaped server is a zombie: not alive).
    pub fn alive(&self) -> bool {
        !self.stopped && proc::alive(self.pid)
    }

    /// Keep the folder when the server stops (a server that died: its log says why).
    pub fn keep_folder(&mut self) {
        self.keep = true;
    }

    /// Leave the server running after this process exits (`server start`).
    pub fn detach(mut self) {
        self.stopped = true;
        self.keep = true;
        self.child = None;
    }

    /// Stop the server cleanly (bounded), then remove its folder unless kept.
    pub fn stop(&mut self) -> Result<()> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        let interrupted = crate::interrupt::signal();
        let r = if self.pid == 0 {
            Ok(())
        } else if let (Some(sig), false) = (interrupted, self.keep) {
            // Interrupted, and the folder goes away: no need to wait for a clean shutdown.
            eprintln!(
                "{}: stopping the throwaway {} at once",
                crate::interrupt::name(sig),
                self.describe()
            );
            stop_quick(self.kind, self.pid, self.child.as_mut())
        } else {
            if let Some(sig) = interrupted {
                eprintln!(
                    "{}: stopping the {} cleanly, its data folder {} is kept (Ctrl-C again kills it at once; its data then recovers at the next start)",
                    crate::interrupt::name(sig),
                    self.describe(),
                    self.root.display()
                );
            }
            stop_pid(self.kind, self.pid, self.child.as_mut())
        };
        crate::interrupt::unwatch_server(self.pid);
        self.child = None;
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.root);
        } else {
            let _ = std::fs::remove_file(self.root.join("server.json"));
        }
        let _ = std::fs::remove_dir_all(&self.socket_dir);
        r
    }
}

enum Ready {
    Yes,
    PortTaken,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("enginebench: {}", e.message);
        }
    }
}

fn spec_of(url: &str) -> Result<TargetSpec> {
    TargetSpec::parse(url, |_| None).map_err(Error::usage)
}

fn tempdir(prefix: &str) -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for i in 0..1000u32 {
        let p = base.join(format!("{prefix}{}-{i}", std::process::id()));
        match std::fs::create_dir(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::usage(format!("cannot create {}: {e}", p.display()))),
        }
    }
    Err(Error::usage("cannot create a temporary folder"))
}

/// Run a setup command with its output in `log`; true on success.
fn run_logged(c: &mut Command, log: &Path) -> Result<bool> {
    let f =
        std::fs::File::create(log).map_err(|e| Error::usage(format!("{}: {e}", log.display())))?;
    c.stdout(f.try_clone().map_err(|e| Error::usage(e.to_string()))?)
        .stderr(f);
    let st = c
        .status()
        .map_err(|e| Error::usage(format!("cannot run {:?}: {e}", c.get_program())))?;
    Ok(st.success())
}

/// The signal that ends a server at once: MariaDB SIGKILL; PostgreSQL SIGQUIT (immediate
/// shutdown: the postmaster ends its backends too, which a SIGKILL would leave behind).
fn quick_signal(kind: Kind) -> i32 {
    match kind {
        Kind::Mariadb => libc::SIGKILL,
        Kind::Postgres => libc::SIGQUIT,
    }
}

/// End a throwaway server at once (its folder is removed next); SIGKILL if it lingers.
fn stop_quick(kind: Kind, pid: u32, mut child: Option<&mut Child>) -> Result<()> {
    // SAFETY: kill with a pid we started and a valid signal.
    unsafe { libc::kill(pid as i32, quick_signal(kind)) };
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let gone = match child.as_mut() {
            Some(c) => !matches!(c.try_wait(), Ok(None)),
            None => !proc::alive(pid),
        };
        if gone {
            return Ok(());
        }
        if Instant::now() > deadline {
            // SAFETY: as above.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            if let Some(c) = child {
                let _ = c.wait();
            }
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Signal a server to shut down cleanly and wait (bounded); then kill it.
fn stop_pid(kind: Kind, pid: u32, child: Option<&mut Child>) -> Result<()> {
    // MariaDB: SIGTERM is a clean shutdown. PostgreSQL: SIGINT is "fast" (disconnect clients,
    // checkpoint, exit); SIGTERM ("smart") would wait for clients to leave.
    let sig = match kind {
        Kind::Mariadb => libc::SIGTERM,
        Kind::Postgres => libc::SIGINT,
    };
    // SAFETY: kill with a pid we started (or verified by its command line) and a valid signal.
    unsafe { libc::kill(pid as i32, sig) };
    let deadline = Instant::now() + STOP_WAIT;
    let mut child = child;
    loop {
        let gone = match child.as_mut() {
            Some(c) => !matches!(c.try_wait(), Ok(None)),
            None => !proc::alive(pid),
        };
        if gone {
            return Ok(());
        }
        if Instant::now() > deadline {
            // SAFETY: as above.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            if let Some(c) = child {
                let _ = c.wait();
            }
            return Err(Error::run(format!(
                "{} (pid {pid}) did not stop within {} s and was killed",
                kind.title(),
                STOP_WAIT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn read_state(root: &Path) -> Result<State> {
    let p = root.join("server.json");
    let s = std::fs::read_to_string(&p).map_err(|e| {
        Error::usage(format!(
            "no server started by enginebench in {} ({}: {e})",
            root.display(),
            p.display()
        ))
    })?;
    serde_json::from_str(&s).map_err(|e| Error::usage(format!("{}: {e}", p.display())))
}

/// True if `st.pid` is really our server of `root` (its command line names the folder), not a
/// process that reused the pid.
fn owns(st: &State, root: &Path) -> bool {
    let cmd = std::fs::read(format!("/proc/{}/cmdline", st.pid)).unwrap_or_default();
    let cmd = String::from_utf8_lossy(&cmd);
    cmd.contains(&root.join("data").display().to_string())
}

/// `server status`: the state of the server in `root`, if it runs.
pub fn status(root: &Path) -> Result<Option<State>> {
    let st = read_state(root)?;
    Ok((proc::alive(st.pid) && owns(&st, root)).then_some(st))
}

/// `server stop`: stop the server in `root` cleanly.
pub fn stop_in(root: &Path) -> Result<Option<State>> {
    let st = read_state(root)?;
    if !(proc::alive(st.pid) && owns(&st, root)) {
        let _ = std::fs::remove_file(root.join("server.json"));
        return Ok(None);
    }
    stop_pid(st.kind, st.pid, None)?;
    let _ = std::fs::remove_file(root.join("server.json"));
    let _ = std::fs::remove_dir_all(&st.socket_dir);
    Ok(Some(st))
}
