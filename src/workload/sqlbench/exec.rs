//! The sequential executor: one work connection, one operation at a time, each timed by a
//! meter that can pause around untimed setup. Also the result records of the sqlbench section.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Spec;
use crate::db::{Conn, DbError, DbResult, Dbms, ErrorClass, StmtId, TargetSpec, Value};
use crate::measure::profile::{self, Profiler, ServerProfile};
use crate::measure::{disturbed, host_cpu, HostSample};
use crate::measure::{CpuTimes, ErrorCounts};

/// What happened to one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpStatus {
    Ok,
    /// The engine cannot do it (rollback without transactions): not run, not a failure.
    NotSupported,
    /// It ran but did not do what it should (unexpected errors, a rollback that did not undo).
    Failed,
    /// Not reached: the run was interrupted or the connection was lost before it.
    NotRun,
}

impl OpStatus {
    pub fn label(self) -> &'static str {
        match self {
            OpStatus::Ok => "ok",
            OpStatus::NotSupported => "not supported by this engine",
            OpStatus::Failed => "failed",
            OpStatus::NotRun => "not run",
        }
    }
}

/// One operation's measurement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpResult {
    pub name: String,
    pub group: String,
    /// Tests done (planned tests when it ran; 0 when it did not).
    pub tests: u64,
    pub status: OpStatus,
    pub wall_s: f64,
    /// Client CPU (this process, getrusage) over the operation's timed part.
    pub usr_s: f64,
    pub sys_s: f64,
    /// Server process tree CPU (user + system) over the timed part, when the server is local.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_s: Option<f64>,
    /// Statements that failed, by class (insert_duplicates expects duplicate_key on each).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_samples: Vec<String>,
    /// Why it is not supported, failed or not run; or what a check found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Server status counters that moved over the whole operation (timed and untimed parts).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_counters: BTreeMap<String, f64>,
    /// CPUs other processes used on this host over the timed part (1.0: one whole CPU);
    /// absent when it did not run, and in results made before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpus: Option<f64>,
    /// Other processes used enough CPU over the timed part to have slowed it
    /// (`harness::disturbed`: more than 0.1 CPU and more than the sampler's rounding).
    #[serde(default)]
    pub disturbed: bool,
    /// `--profile-server`: where the server's CPU went over the timed part, per test
    /// (docs/profile.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_profile: Option<ServerProfile>,
}

/// Sums over the operations that ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Totals {
    pub wall_s: f64,
    pub usr_s: f64,
    pub sys_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_s: Option<f64>,
    pub tests: u64,
    pub ops_ok: usize,
    pub ops_not_supported: usize,
    pub ops_failed: usize,
    pub ops_not_run: usize,
    /// CPUs other processes used over the timed parts of the operations that ran (their
    /// seconds over `wall_s`: what `wall_s` was measured beside).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpus: Option<f64>,
    /// `others_cpus` disturbed the total (the same rule as an operation's).
    #[serde(default)]
    pub disturbed: bool,
}

impl Totals {
    pub fn of(ops: &[OpResult]) -> Totals {
        let mut t = Totals::default();
        // Others' seconds and the wall seconds of the operations where they were measured.
        let (mut others_s, mut measured_s) = (0.0, 0.0);
        for o in ops {
            if let Some(c) = o.others_cpus {
                others_s += c * o.wall_s;
                measured_s += o.wall_s;
            }
            match o.status {
                OpStatus::Ok => t.ops_ok += 1,
                OpStatus::NotSupported => t.ops_not_supported += 1,
                OpStatus::Failed => t.ops_failed += 1,
                OpStatus::NotRun => t.ops_not_run += 1,
            }
            t.wall_s += o.wall_s;
            t.usr_s += o.usr_s;
            t.sys_s += o.sys_s;
            if let Some(s) = o.server_cpu_s {
                *t.server_cpu_s.get_or_insert(0.0) += s;
            }
            t.tests += o.tests;
        }
        if ops.iter().any(|o| o.others_cpus.is_some()) {
            let c = others_s / f64::max(measured_s, 1e-9);
            t.others_cpus = Some(c);
            t.disturbed = disturbed(c, measured_s);
        }
        t
    }
}

/// The suite on one engine (one column of the report's table).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineRun {
    /// The storage engine as the server names it (PostgreSQL: heap; SQLite: sqlite-btree).
    pub engine: String,
    pub dbms: String,
    /// Whether the engine has transactions (decides the rollback operations).
    pub transactions: bool,
    pub ops: Vec<OpResult>,
    pub totals: Totals,
}

/// The `sqlbench` section of a result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Section {
    pub scale: f64,
    pub engines: Vec<EngineRun>,
}

/// Wall time and CPU of the timed parts of one operation, and the host's busy CPU over them
/// (what other processes used is the rest).
struct Meter {
    wall_s: f64,
    cpu: CpuTimes,
    server_s: Option<f64>,
    busy_s: f64,
    started: Option<HostSample>,
}

impl Meter {
    fn new(server_pid: Option<u32>) -> Meter {
        Meter {
            wall_s: 0.0,
            cpu: CpuTimes::default(),
            server_s: server_pid.map(|_| 0.0),
            busy_s: 0.0,
            started: None,
        }
    }
}

/// Runs operations on one work connection and records them.
pub struct Runner<'a> {
    pub conn: Conn,
    pub spec: &'a Spec,
    pub target: &'a TargetSpec,
    pub dbms: Dbms,
    /// `ENGINE=X` on MySQL when an engine was chosen, else empty.
    pub engine_clause: String,
    pub transactional: bool,
    server_pid: Option<u32>,
    /// `--profile-server`'s rate, and the current operation's profiler.
    profile_hz: Option<u32>,
    profiler: Option<Profiler>,
    admin: Option<Conn>,
    meter: Meter,
    errors: ErrorCounts,
    samples: Vec<String>,
    /// Set by an operation to explain its status.
    pub note: Option<String>,
    /// Set by an operation whose check failed.
    pub failed: bool,
    pub results: Vec<OpResult>,
    current: Option<(usize, BTreeMap<String, f64>)>,
}

/// Unexpected errors after which an operation stops (it keeps going on fewer: errors are data).
const MAX_ERRORS: u64 = 100;

impl<'a> Runner<'a> {
    pub fn new(
        conn: Conn,
        admin: Option<Conn>,
        spec: &'a Spec,
        target: &'a TargetSpec,
        engine_clause: String,
        transactional: bool,
        server_pid: Option<u32>,
    ) -> Self {
        let dbms = conn.dbms();
        Runner {
            conn,
            spec,
            target,
            dbms,
            engine_clause,
            transactional,
            server_pid,
            profile_hz: None,
            profiler: None,
            admin,
            meter: Meter::new(None),
            errors: ErrorCounts::default(),
            samples: Vec::new(),
            note: None,
            failed: false,
            results: Vec::new(),
            current: None,
        }
    }

    /// `--profile-server`: profile each operation's timed parts at `hz` samples per second.
    pub fn profiled(mut self, hz: Option<u32>) -> Self {
        self.profile_hz = hz;
        self
    }

    /// The planned tests of `name` if it is selected.
    pub fn want(&self, name: &str) -> Option<u64> {
        self.spec
            .selected
            .iter()
            .any(|&i| super::OPS[i].0 == name)
            .then(|| self.spec.tests(name))
    }

    /// Whether any of `names` is selected.
    pub fn any(&self, names: &[&str]) -> bool {
        names.iter().any(|n| self.want(n).is_some())
    }

    /// Start operation `name`: counters are read, the meter starts.
    pub async fn begin(&mut self, name: &str) {
        let idx = super::OPS
            .iter()
            .position(|o| o.0 == name)
            .expect("known op");
        let before = match &mut self.admin {
            Some(a) => crate::server::capture::counters(a).await,
            None => BTreeMap::new(),
        };
        self.current = Some((idx, before));
        self.meter = Meter::new(self.server_pid);
        self.errors = ErrorCounts::default();
        self.samples.clear();
        self.note = None;
        self.failed = false;
        // Started paused: perf takes a moment to attach, outside the timed part.
        self.profiler = profile::start_paused(self.profile_hz, self.server_pid);
        self.resume();
    }

    /// Stop timing (untimed setup follows).
    pub fn pause(&mut self) {
        if let Some(a) = self.meter.started.take() {
            let b = HostSample::now(self.server_pid);
            if let Some(p) = &mut self.profiler {
                p.pause();
            }
            let c = b.client.since(a.client);
            self.meter.wall_s += b.at.duration_since(a.at).as_secs_f64();
            self.meter.cpu.add(c);
            self.meter.busy_s += (b.busy_s - a.busy_s).max(0.0);
            if let (Some(acc), Some(s0), Some(s1)) =
                (self.meter.server_s.as_mut(), a.server, b.server)
            {
                *acc += (s1.cpu_s() - s0.cpu_s()).max(0.0);
            }
        }
    }

    /// Start timing again.
    pub fn resume(&mut self) {
        if self.meter.started.is_none() {
            if let Some(p) = &mut self.profiler {
                p.resume();
            }
            self.meter.started = Some(HostSample::now(self.server_pid));
        }
    }

    /// End the current operation: record it with `tests` done.
    pub async fn end(&mut self, tests: u64) {
        self.pause();
        let expected = self.expected();
        let Some((idx, before)) = self.current.take() else {
            return;
        };
        let after = match &mut self.admin {
            Some(a) => crate::server::capture::counters(a).await,
            None => BTreeMap::new(),
        };
        let counters = after
            .iter()
            .filter_map(|(k, a)| {
                let d = a - before.get(k).copied().unwrap_or(0.0);
                (d != 0.0).then(|| (k.clone(), d))
            })
            .collect();
        let unexpected = self.errors.total() - expected;
        if super::OPS[idx].0 == "insert_duplicates" && expected != tests {
            self.failed = true;
            self.note = Some(format!(
                "{} of {tests} duplicate rows were not refused",
                tests - expected.min(tests)
            ));
        }
        let status = if self.failed || unexpected > 0 {
            OpStatus::Failed
        } else {
            OpStatus::Ok
        };
        let (name, group, _) = super::OPS[idx];
        let per_test = |s: f64| (tests > 0).then(|| s * 1e6 / tests as f64);
        let server_profile = profile::with_coverage(
            profile::stop_for_run(self.profiler.take(), tests),
            self.meter.server_s.and_then(per_test),
        );
        let m = &self.meter;
        let others = host_cpu(m.busy_s, m.cpu.total_s(), m.server_s, m.wall_s).others_cpus;
        let disturbed = disturbed(others, m.wall_s);
        eprintln!(
            "{:<34} {:>9} tests {:>9.3} s  usr {:.2} sys {:.2}{}{}{}",
            name,
            tests,
            self.meter.wall_s,
            self.meter.cpu.user_s,
            self.meter.cpu.sys_s,
            self.meter
                .server_s
                .map(|s| format!("  server {s:.2}"))
                .unwrap_or_default(),
            if disturbed {
                format!("  DISTURBED (others {others:.2} CPU)")
            } else {
                String::new()
            },
            if status == OpStatus::Ok {
                String::new()
            } else {
                format!(
                    "  FAILED ({} errors){}",
                    self.errors.total(),
                    self.note
                        .as_ref()
                        .map(|n| format!(": {n}"))
                        .unwrap_or_default()
                )
            }
        );
        if let Some(p) = &server_profile {
            eprintln!("{:<34} {}", "", profile::line(p));
        }
        self.results.push(OpResult {
            name: name.into(),
            group: group.into(),
            tests,
            status,
            wall_s: self.meter.wall_s,
            usr_s: self.meter.cpu.user_s,
            sys_s: self.meter.cpu.sys_s,
            server_cpu_s: self.meter.server_s,
            errors: self
                .errors
                .to_map()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            error_samples: std::mem::take(&mut self.samples),
            note: self.note.take(),
            server_counters: counters,
            others_cpus: Some(others),
            disturbed,
            server_profile,
        });
    }

    /// Record an operation that was not run, with why.
    pub fn skip(&mut self, name: &str, status: OpStatus, why: &str) {
        let (n, group, _) = super::OPS
            .iter()
            .find(|o| o.0 == name)
            .copied()
            .expect("known op");
        eprintln!("{n:<34} {}: {why}", status.label());
        self.results.push(OpResult {
            name: n.into(),
            group: group.into(),
            tests: 0,
            status,
            wall_s: 0.0,
            usr_s: 0.0,
            sys_s: 0.0,
            server_cpu_s: None,
            errors: BTreeMap::new(),
            error_samples: Vec::new(),
            note: Some(why.into()),
            server_counters: BTreeMap::new(),
            others_cpus: None,
            disturbed: false,
            server_profile: None,
        });
    }

    /// Count a failed statement; a lost connection ends the engine's run.
    fn count(&mut self, e: DbError) -> DbResult<()> {
        if e.class == ErrorClass::ConnectionLost {
            return Err(e);
        }
        self.errors.add(e.class);
        if self.samples.len() < 3 {
            self.samples.push(self.target.scrub(&e.message));
        }
        Ok(())
    }

    /// Errors this operation expects on every test (insert_duplicates: duplicate_key).
    fn expected(&self) -> u64 {
        match &self.current {
            Some((idx, _)) if super::OPS[*idx].0 == "insert_duplicates" => {
                self.errors.0[ErrorClass::DuplicateKey.index()]
            }
            _ => 0,
        }
    }

    /// Unexpected errors so far in this operation (to stop a hopeless one early).
    pub fn too_many_errors(&self) -> bool {
        self.errors.total() - self.expected() >= MAX_ERRORS
    }

    /// Run a statement whose result is not read (DDL, DML); a failure is counted.
    pub async fn exec(&mut self, sql: &str) -> DbResult<bool> {
        match self.conn.execute(sql).await {
            Ok(()) => Ok(true),
            Err(e) => self.count(e).map(|_| false),
        }
    }

    /// Run a query and read all its rows; returns the row count (0 on a counted failure).
    pub async fn rows(&mut self, sql: &str) -> DbResult<u64> {
        match self.conn.query(sql).await {
            Ok(r) => Ok(r.len() as u64),
            Err(e) => self.count(e).map(|_| 0),
        }
    }

    /// Execute a prepared statement, reading all rows.
    pub async fn exec_prepared(&mut self, id: StmtId, params: &[Value]) -> DbResult<u64> {
        match self.conn.exec_rows(id, params).await {
            Ok(n) => Ok(n),
            Err(e) => self.count(e).map(|_| 0),
        }
    }

    /// A statement that must work (setup): any error ends the engine's run.
    pub async fn must(&mut self, sql: &str) -> DbResult<()> {
        self.conn.execute(sql).await.map_err(|e| DbError {
            message: format!("setup statement failed ({}): {}", short(sql), e.message),
            ..e
        })
    }

    /// An integer from a query that must work (checks).
    pub async fn int(&mut self, sql: &str) -> DbResult<i64> {
        let v = self.conn.query_one(sql).await?;
        Ok(v.and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0) as i64)
    }

    /// Drop a table if it exists (untimed housekeeping).
    pub async fn drop_table(&mut self, table: &str) -> DbResult<()> {
        self.must(&format!("DROP TABLE IF EXISTS {table}")).await
    }

    /// Create a table with the engine clause on MySQL.
    pub fn create_sql(&self, table: &str, body: &str) -> String {
        format!("CREATE TABLE {table} ({body}) {}", self.engine_clause)
    }

    /// Load rows untimed, in multi-row INSERTs of 1000 (one transaction each on SQLite).
    pub async fn load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: impl Iterator<Item = Vec<Value>>,
    ) -> DbResult<()> {
        let mut batch = Vec::with_capacity(1000);
        for r in rows {
            batch.push(r);
            if batch.len() == 1000 {
                self.conn.insert_rows(table, columns, &batch).await?;
                batch.clear();
            }
        }
        if !batch.is_empty() {
            self.conn.insert_rows(table, columns, &batch).await?;
        }
        Ok(())
    }

    /// `DROP INDEX` in the target's dialect.
    pub fn drop_index_sql(&self, table: &str, index: &str) -> String {
        match self.dbms {
            Dbms::Mysql => format!("DROP INDEX {index} ON {table}"),
            _ => format!("DROP INDEX {index}"),
        }
    }

    /// Open a new connection to the target (the connect operations).
    pub async fn connect(&mut self) -> DbResult<Option<Conn>> {
        match Conn::connect(self.target).await {
            Ok(c) => Ok(Some(c)),
            Err(e) => {
                // A refused connection is counted like any other failed statement.
                self.errors.add(e.class);
                if self.samples.len() < 3 {
                    self.samples.push(e.message);
                }
                Ok(None)
            }
        }
    }

    /// The common operation: if `name` is selected, run its tests one statement each, the
    /// statement of test j being `sql(j)`; `read`: read every row of the result.
    pub async fn simple(
        &mut self,
        name: &str,
        read: bool,
        mut sql: impl FnMut(u64) -> String,
    ) -> DbResult<()> {
        let Some(n) = self.want(name) else {
            return Ok(());
        };
        self.begin(name).await;
        let mut done = 0;
        for j in 0..n {
            let q = sql(j);
            if read {
                self.rows(&q).await?;
            } else {
                self.exec(&q).await?;
            }
            done += 1;
            if crate::interrupt::signal().is_some() {
                self.note = Some(format!("interrupted after {done} of {n} tests"));
                break;
            }
            if self.too_many_errors() {
                self.note = Some(format!("stopped after {MAX_ERRORS} errors"));
                break;
            }
        }
        self.end(done).await;
        Ok(())
    }

    /// Count an error of a connection other than the work connection.
    pub fn count_other(&mut self, e: DbError) {
        self.errors.add(e.class);
        if self.samples.len() < 3 {
            self.samples.push(self.target.scrub(&e.message));
        }
    }
}

fn short(sql: &str) -> String {
    let s: String = sql.chars().take(80).collect();
    if s.len() < sql.len() {
        format!("{s}...")
    } else {
        s
    }
}

/// A permutation of 0..n from a fixed seed (the "random order" of the scripts; a different
/// generator than theirs, the same idea: every value once, in a scrambled order).
pub fn permutation(n: u64, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..v.len()).rev() {
        // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        v.swap(i, (r % (i as u64 + 1)) as usize);
    }
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn permutation_is_one() {
        let mut p = super::permutation(1000, 7);
        assert_ne!(p[..10], (0..10).collect::<Vec<_>>()[..]);
        p.sort();
        assert_eq!(p, (0..1000).collect::<Vec<_>>());
    }
}
