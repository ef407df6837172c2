//! A fleet: several enginebench processes (on other machines, pods or network namespaces) run
//! one benchmark as shards of it. Each shard runs its share of the workload (the workload says
//! how it splits: `Workload::partition`), the shards meet before measuring so that their
//! measured runs and report intervals line up on the wall clock, and `enginebench merge` adds
//! their results into one (report/merge.rs). docs/fleet.md.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::db::{Conn, TargetSpec};
use crate::error::{Context, Error, Result};
use crate::interrupt;

/// The table the shards check in to, keyed by run id and point.
pub const TABLE: &str = "enginebench_fleet";

/// The variable a Kubernetes Indexed Job sets in each pod: its completion index.
pub const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// How far ahead of the last check-in the start is set: time for every shard to see it.
const LEAD: Duration = Duration::from_millis(1500);

/// How often a waiting shard looks at the table.
const POLL: Duration = Duration::from_millis(100);

/// Shard `index` of `count` (0-based, like a Kubernetes completion index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `I/N`, or `/N` with I from `index_env` (JOB_COMPLETION_INDEX).
    pub fn parse(s: &str, index_env: Option<&str>) -> Result<Shard> {
        let bad = |why: &str| Error::usage(format!("--shard {s}: {why}"));
        let (i, n) = s.split_once('/').ok_or_else(|| {
            bad("give INDEX/COUNT (e.g. 0/4), or /COUNT in a Kubernetes Indexed Job")
        })?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| bad("COUNT must be a whole number"))?;
        if count == 0 {
            return Err(bad("COUNT must be at least 1"));
        }
        let index: u32 = match (i.trim(), index_env) {
            ("", Some(v)) => v.trim().parse().map_err(|_| {
                bad(&format!("{INDEX_ENV}={v} is not a whole number"))
            })?,
            ("", None) => {
                return Err(bad(&format!(
                    "no INDEX given and {INDEX_ENV} is not set (it is set in the pods of a Kubernetes Indexed Job)"
                )))
            }
            (i, _) => i.parse().map_err(|_| bad("INDEX must be a whole number"))?,
        };
        if index >= count {
            return Err(bad(&format!(
                "INDEX must be below COUNT (shards are numbered 0 to {})",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    /// This shard's block of the ids 1..=n (contiguous, sizes differing by at most one),
    /// inclusive; an error when some shard would get none.
    pub fn block(&self, n: u64, what: &str) -> Result<(u64, u64)> {
        if n < self.count as u64 {
            return Err(Error::usage(format!(
                "{what} {n} cannot be split over {} shards: each shard needs at least one",
                self.count
            )));
        }
        let (i, c) = (self.index as u64, self.count as u64);
        Ok((n * i / c + 1, n * (i + 1) / c))
    }

    /// Worker `w` of `threads` as a worker of the whole fleet: (its global index, the fleet's
    /// worker count), so that per-worker keys and random streams differ between shards.
    pub fn worker(&self, w: usize, threads: usize) -> (usize, usize) {
        (
            self.index as usize * threads + w,
            threads * self.count as usize,
        )
    }

    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }

    /// This shard's ids of a table of `n` rows numbered 1..=n whose rows come in groups of
    /// `group` (TPC-C: one warehouse's rows): a contiguous block of whole groups, the blocks
    /// of the N shards covering 1..=n once. Inclusive; empty (first > last) when there are
    /// fewer groups than shards and this one gets none.
    pub fn range(&self, n: u64, group: u64) -> (u64, u64) {
        let g = group.max(1);
        let groups = n.div_ceil(g) as u128;
        let (i, c) = (self.index as u128, self.count as u128);
        let first = (groups * i / c) as u64 * g + 1;
        let last = (((groups * (i + 1) / c) as u64).saturating_mul(g)).min(n);
        (first, last)
    }
}

/// The fleet settings of one shard's run (serialized into the result's config).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fleet {
    pub shard: Shard,
    /// Names the run in the meeting table and in the merge (every shard gets the same one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `--start-at`: the first point starts then (seconds since the epoch) instead of at a
    /// time the shards agree on through the database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_s: Option<f64>,
    pub timeout_s: f64,
}

/// How a shard's result note begins (a merge leaves the note out: its result is no shard's).
const NOTE_HEAD: &str = "Fleet shard ";

/// The result note saying which shard of which fleet run this is, and how the workload split
/// (`how`: `Workload::partition`).
pub fn shard_note(f: &Fleet, how: &str) -> String {
    format!(
        "{NOTE_HEAD}{} ({}): {how}; merge the shards' results with `enginebench merge`.",
        f.shard.label(),
        f.run_id
            .as_deref()
            .map_or("started by --start-at".to_string(), |id| format!(
                "run id {id}"
            )),
    )
}

/// True for the note `shard_note` writes.
pub fn is_shard_note(note: &str) -> bool {
    note.starts_with(NOTE_HEAD)
}

/// `--run-id`: letters, digits, `.`, `_`, `-` (it goes into SQL and file names).
pub fn check_run_id(id: &str) -> Result<()> {
    if id.is_empty()
        || id.len() > 100
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(Error::usage(format!(
            "--run-id {id:?}: use 1 to 100 letters, digits, '.', '_' or '-'"
        )));
    }
    Ok(())
}

/// `--start-at`: RFC 3339 (2026-11-26T03:00:00Z) or seconds since the epoch.
pub fn parse_start_at(s: &str) -> Result<f64> {
    if let Ok(v) = s.trim().parse::<f64>() {
        if v.is_finite() && v > 0.0 {
            return Ok(v);
        }
    }
    humantime::parse_rfc3339_weak(s.trim())
        .map(unix_s)
        .map_err(|_| {
            Error::usage(format!(
                "--start-at {s}: give a UTC time as 2026-11-26T03:00:00Z or seconds since the epoch"
            ))
        })
}

fn unix_s(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

pub fn now_unix_s() -> f64 {
    unix_s(SystemTime::now())
}

/// Sleep until the wall clock reads `at` (seconds since the epoch); a signal ends the wait.
fn sleep_until(at: f64) -> Result<()> {
    loop {
        if let Some(sig) = interrupt::signal() {
            return Err(Error {
                failure: crate::error::Failure::Interrupted(sig),
                message: "interrupted while waiting for the fleet's start".into(),
            });
        }
        let left = at - now_unix_s();
        if left <= 0.0 {
            return Ok(());
        }
        std::thread::sleep(Duration::from_secs_f64(left.min(0.05)));
    }
}

/// The meeting table, created if missing.
async fn ensure_table(conn: &mut Conn) -> Result<()> {
    let create = format!(
        "CREATE TABLE IF NOT EXISTS {TABLE} (run_id varchar(100) NOT NULL, point int NOT NULL, shard int NOT NULL, start_ms bigint, PRIMARY KEY (run_id, point, shard))"
    );
    // Shards started at once race to create it: PostgreSQL then fails all but one with a
    // duplicate key in its catalog, IF NOT EXISTS notwithstanding. Once the winner has
    // committed, a second try finds the table.
    if conn.execute(&create).await.is_err() {
        tokio::time::sleep(POLL).await;
        conn.execute(&create)
            .await
            .ctx("creating the fleet's meeting table")?;
    }
    Ok(())
}

/// Meet the other shards before point `point` (0, 1, ... in the order of the run) and wait for
/// the common start. With `--start-at`, the first point waits for that time; later points
/// start when they are ready. Otherwise every shard checks in to the meeting table; the first
/// one that sees all of them there sets the start a moment ahead, and every shard waits for it.
/// Returns the start (seconds since the epoch).
pub async fn meet(f: &Fleet, conn: &mut Conn, point: u32) -> Result<f64> {
    let Some(run_id) = &f.run_id else {
        let at = if point == 0 {
            f.start_at_unix_s.unwrap_or_else(now_unix_s)
        } else {
            now_unix_s()
        };
        sleep_until(at)?;
        return Ok(at);
    };
    let key = format!("run_id = '{run_id}' AND point = {point}");
    ensure_table(conn).await?;
    let me = f.shard.index;
    conn.execute(&format!("DELETE FROM {TABLE} WHERE {key} AND shard = {me}"))
        .await
        .ctx("checking in to the fleet's meeting table")?;
    conn.execute(&format!(
        "INSERT INTO {TABLE} (run_id, point, shard, start_ms) VALUES ('{run_id}', {point}, {me}, NULL)"
    ))
    .await
    .ctx("checking in to the fleet's meeting table")?;
    eprintln!(
        "shard {}: checked in as {run_id} point {point}; waiting for the other shards (--fleet-timeout {} s)",
        f.shard.label(),
        f.timeout_s
    );
    let since = std::time::Instant::now();
    loop {
        if let Some(sig) = interrupt::signal() {
            return Err(Error {
                failure: crate::error::Failure::Interrupted(sig),
                message: "interrupted while waiting for the other shards".into(),
            });
        }
        let rows = conn
            .query(&format!(
                "SELECT shard FROM {TABLE} WHERE {key} AND shard >= 0"
            ))
            .await
            .ctx("reading the fleet's meeting table")?;
        let here: Vec<u32> = rows
            .iter()
            .filter_map(|r| r.first().cloned().flatten()?.parse().ok())
            .collect();
        let missing: Vec<String> = (0..f.shard.count)
            .filter(|i| !here.contains(i))
            .map(|i| i.to_string())
            .collect();
        if missing.is_empty() {
            break;
        }
        if since.elapsed().as_secs_f64() > f.timeout_s {
            return Err(Error::run(format!(
                "fleet {run_id}: shard(s) {} of {} did not arrive within --fleet-timeout {} s (point {point}); start every shard with the same --run-id and --shard I/{}",
                missing.join(", "),
                f.shard.count,
                f.timeout_s,
                f.shard.count
            )));
        }
        tokio::time::sleep(POLL).await;
    }
    // Everyone is here: the first to insert the start row (shard -1) sets the start; the
    // others' inserts fail on its key, and every shard reads the row that won.
    let start_ms = ((now_unix_s() + LEAD.as_secs_f64()) * 1000.0) as i64;
    let _ = conn
        .execute(&format!(
            "INSERT INTO {TABLE} (run_id, point, shard, start_ms) VALUES ('{run_id}', {point}, -1, {start_ms})"
        ))
        .await;
    let start_ms: i64 = conn
        .query_one(&format!(
            "SELECT start_ms FROM {TABLE} WHERE {key} AND shard = -1"
        ))
        .await
        .ctx("reading the fleet's start")?
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::run("the fleet's start row has no time"))?;
    let at = start_ms as f64 / 1000.0;
    if at < now_unix_s() - LEAD.as_secs_f64() - f.timeout_s {
        return Err(Error::usage(format!(
            "--run-id {run_id} was used by an earlier fleet (its start is long past): give every new fleet run its own id"
        )));
    }
    sleep_until(at)?;
    Ok(at)
}

// ---- prepare --shard: N processes load one database together -------------------------------
//
// The shards meet in the same table as a run's (rows with negative points; a run's points are
// 0, 1, ...). Shard 0 alone decides and does what is done once: it looks whether the tables
// are already there, creates them (without their secondary indexes), and once every shard has
// loaded its share it builds the indexes, the statistics and the metadata row. Every shard
// keeps a heartbeat in its check-in row while it takes part; a shard whose heartbeat is older
// than --fleet-timeout (or that never checked in) ends the others' wait with its number.

/// Shard i checked in; start_ms is its last heartbeat.
const P_HERE: i32 = -1;
/// Shard 0's decision: shard READY (start_ms: the load's common "now"), or SKIP.
const P_TABLES: i32 = -2;
const READY: i32 = -2;
const SKIP: i32 = -3;
/// Shard i loaded its share (start_ms: when).
const P_LOADED: i32 = -3;
/// Shard 0 built the indexes and wrote the metadata (shard DONE).
const P_DONE: i32 = -4;
const DONE: i32 = -4;
/// Shard i failed (best effort: a killed shard is found by its silent heartbeat).
const P_FAILED: i32 = -5;

/// How far apart the shards' clocks may be when a decision is told from an earlier fleet's.
const SKEW_MS: i64 = 5_000;

/// How often a taking-part shard writes its heartbeat.
const BEAT: Duration = Duration::from_secs(1);

/// What a shard does in a fleet's prepare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The tables are already loaded as asked: nothing to do.
    Skip,
    /// Create the tables (shard 0; and a prepare without a fleet), then load.
    Create,
    /// Load this shard's share into the tables shard 0 created.
    Load,
}

/// One shard's part in a fleet's prepare (`prepare --shard`, and `run --shard` when the
/// tables are not loaded yet). Workloads call it through the free functions below, which do
/// the one-process prepare when there is no fleet.
pub struct LoadFleet {
    pub shard: Shard,
    /// None with `run --start-at`: the shards do not meet, so the tables must be loaded.
    run_id: Option<String>,
    timeout_s: f64,
    target: TargetSpec,
    /// The load's common time (ms since the epoch), from shard 0's decision: 0 until known.
    now_ms: AtomicI64,
    beat: Mutex<Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>>,
}

fn now_ms() -> i64 {
    (now_unix_s() * 1000.0) as i64
}

/// A row of the meeting table: (point, shard, start_ms).
type Row = (i32, i32, Option<i64>);

impl LoadFleet {
    pub fn new(shard: Shard, run_id: Option<String>, timeout_s: f64, target: &TargetSpec) -> Self {
        LoadFleet {
            shard,
            run_id,
            timeout_s,
            target: target.clone(),
            now_ms: AtomicI64::new(0),
            beat: Mutex::new(None),
        }
    }

    /// From a run's fleet settings.
    pub fn of(f: &Fleet, target: &TargetSpec) -> Self {
        Self::new(f.shard, f.run_id.clone(), f.timeout_s, target)
    }

    fn id(&self) -> &str {
        self.run_id.as_deref().unwrap_or_default()
    }

    async fn insert(&self, conn: &mut Conn, point: i32, shard: i32, ms: i64) -> Result<()> {
        conn.execute(&format!(
            "INSERT INTO {TABLE} (run_id, point, shard, start_ms) VALUES ('{}', {point}, {shard}, {ms})",
            self.id()
        ))
        .await
        .ctx("writing to the fleet's meeting table")
    }

    async fn rows(&self, conn: &mut Conn) -> Result<Vec<Row>> {
        let rows = conn
            .query(&format!(
                "SELECT point, shard, start_ms FROM {TABLE} WHERE run_id = '{}' AND point < 0",
                self.id()
            ))
            .await
            .ctx("reading the fleet's meeting table")?;
        fn num<T: std::str::FromStr>(v: Option<&Option<String>>) -> Option<T> {
            v.cloned().flatten().and_then(|s| s.parse().ok())
        }
        Ok(rows
            .iter()
            .filter_map(|r| Some((num(r.first())?, num(r.get(1))?, num(r.get(2)))))
            .collect())
    }

    /// Keep this shard's check-in row fresh from a thread of its own (its own connection),
    /// so that a long load or index build is not taken for a lost shard.
    fn start_heartbeat(&self) {
        let stop = Arc::new(AtomicBool::new(false));
        let (target, flag) = (self.target.clone(), stop.clone());
        let sql = format!(
            "UPDATE {TABLE} SET start_ms = {{}} WHERE run_id = '{}' AND point = {P_HERE} AND shard = {}",
            self.id(),
            self.shard.index
        );
        let t = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                let Ok(mut c) = Conn::connect(&target).await else {
                    return;
                };
                while !flag.load(Ordering::Relaxed) {
                    let _ = c.execute(&sql.replace("{}", &now_ms().to_string())).await;
                    let t = std::time::Instant::now();
                    while t.elapsed() < BEAT && !flag.load(Ordering::Relaxed) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            });
        });
        *self.beat.lock().unwrap_or_else(|p| p.into_inner()) = Some((stop, t));
    }

    /// Poll the table until `ready` finds what this shard waits for. `ready` returns Ok(value)
    /// or Err(the shards it still waits on); each of those must have checked in with a fresh
    /// heartbeat, or be within --fleet-timeout of this wait's start. Any shard's failure
    /// ends the wait.
    async fn wait<T>(
        &self,
        conn: &mut Conn,
        what: &str,
        ready: impl Fn(&[Row]) -> std::result::Result<T, Vec<u32>>,
    ) -> Result<T> {
        let since = std::time::Instant::now();
        loop {
            if let Some(sig) = interrupt::signal() {
                return Err(Error {
                    failure: crate::error::Failure::Interrupted(sig),
                    message: format!("interrupted while waiting for {what}"),
                });
            }
            let rows = self.rows(conn).await?;
            if let Some((_, s, _)) = rows.iter().find(|r| r.0 == P_FAILED) {
                return Err(Error::run(format!(
                    "fleet {}: shard {s} failed while preparing (see its output); the tables are incomplete: prepare again with a new --run-id",
                    self.id()
                )));
            }
            let waiting = match ready(&rows) {
                Ok(v) => return Ok(v),
                Err(w) => w,
            };
            let fresh = now_ms() - (self.timeout_s * 1000.0) as i64;
            let silent: Vec<String> = waiting
                .iter()
                .filter(|i| {
                    !rows.iter().any(|r| {
                        r.0 == P_HERE && r.1 == **i as i32 && r.2.is_some_and(|ms| ms >= fresh)
                    })
                })
                .map(|i| i.to_string())
                .collect();
            if !silent.is_empty() && since.elapsed().as_secs_f64() > self.timeout_s {
                return Err(Error::run(format!(
                    "fleet {}: shard(s) {} of {} did not arrive or stopped answering within --fleet-timeout {} s (waiting for {what}); start every shard with the same --run-id and --shard I/{}",
                    self.id(),
                    silent.join(", "),
                    self.shard.count,
                    self.timeout_s,
                    self.shard.count
                )));
            }
            tokio::time::sleep(POLL * 2).await;
        }
    }

    /// Check in; shard 0 waits for every shard, then decides (`loaded`: the tables are
    /// there as asked); the others wait for its decision.
    async fn begin(&self, conn: &mut Conn, loaded: bool) -> Result<Role> {
        if self.run_id.is_none() {
            return if loaded {
                Ok(Role::Skip)
            } else {
                Err(Error::usage(
                    "the tables are not loaded (or not as asked), and with --start-at the shards do not meet to load them together: give the fleet a --run-id, or prepare first (`enginebench prepare ... --shard I/N --run-id ID` on every shard, or one `enginebench prepare`)",
                ))
            };
        }
        ensure_table(conn).await?;
        let me = self.shard.index as i32;
        conn.execute(&format!(
            "DELETE FROM {TABLE} WHERE run_id = '{}' AND point = {P_HERE} AND shard = {me}",
            self.id()
        ))
        .await
        .ctx("checking in to the fleet's meeting table")?;
        let arrived = now_ms();
        self.insert(conn, P_HERE, me, arrived).await?;
        self.start_heartbeat();
        eprintln!(
            "shard {}: checked in to prepare {} (--fleet-timeout {} s)",
            self.shard.label(),
            self.id(),
            self.timeout_s
        );
        let n = self.shard.count;
        let stale = |r: &Row| {
            r.2.is_some_and(|ms| ms < arrived - (self.timeout_s * 1000.0) as i64)
        };
        if me == 0 {
            self.wait(conn, "every shard to check in", |rows| {
                let missing: Vec<u32> = (0..n)
                    .filter(|i| {
                        !rows
                            .iter()
                            .any(|r| r.0 == P_HERE && r.1 == *i as i32 && !stale(r))
                    })
                    .collect();
                if missing.is_empty() {
                    Ok(())
                } else {
                    Err(missing)
                }
            })
            .await?;
            // Rows past the check-in are an earlier fleet's: refuse before anything is dropped.
            if self.rows(conn).await?.iter().any(|r| r.0 < P_HERE) {
                return Err(self.reused());
            }
            if loaded {
                self.decide(conn, SKIP).await?;
                return Ok(Role::Skip);
            }
            return Ok(Role::Create);
        }
        let (kind, ms) = self
            .wait(conn, "shard 0 to create the tables", |rows| {
                rows.iter()
                    .find(|r| r.0 == P_TABLES)
                    .map(|r| (r.1, r.2.unwrap_or_default()))
                    .ok_or_else(|| vec![0])
            })
            .await?;
        // Shard 0 decides after every shard checked in: an older decision is an earlier
        // fleet's (5 s allow for the clocks' skew).
        if ms < arrived - SKEW_MS {
            return Err(self.reused());
        }
        if kind == SKIP {
            return Ok(Role::Skip);
        }
        self.now_ms.store(ms, Ordering::SeqCst);
        Ok(Role::Load)
    }

    fn reused(&self) -> Error {
        Error::usage(format!(
            "--run-id {} was used by an earlier fleet: give every new fleet run its own id",
            self.id()
        ))
    }

    /// Shard 0's decision row (its insert fails when an earlier fleet used the id).
    async fn decide(&self, conn: &mut Conn, kind: i32) -> Result<()> {
        let now = now_ms();
        self.insert(conn, P_TABLES, kind, now)
            .await
            .map_err(|_| self.reused())?;
        self.now_ms.store(now, Ordering::SeqCst);
        Ok(())
    }

    /// This shard loaded its share. Shard 0 then waits for every shard's and returns true (it
    /// finishes the tables); the others wait until shard 0 has, and return false.
    async fn loaded(&self, conn: &mut Conn) -> Result<bool> {
        let me = self.shard.index;
        self.insert(conn, P_LOADED, me as i32, now_ms()).await?;
        let n = self.shard.count;
        if me == 0 {
            eprintln!("shard 0: loaded its share; waiting for the other shards' loads");
            self.wait(conn, "the other shards' loads", |rows| {
                let missing: Vec<u32> = (0..n)
                    .filter(|i| !rows.iter().any(|r| r.0 == P_LOADED && r.1 == *i as i32))
                    .collect();
                if missing.is_empty() {
                    Ok(())
                } else {
                    Err(missing)
                }
            })
            .await?;
            return Ok(true);
        }
        eprintln!(
            "shard {}: loaded its share; waiting for shard 0 to build the indexes",
            self.shard.label()
        );
        self.wait(conn, "shard 0 to build the indexes", |rows| {
            if rows.iter().any(|r| r.0 == P_DONE) {
                Ok(())
            } else {
                Err(vec![0])
            }
        })
        .await?;
        Ok(false)
    }

    /// Tell the others this shard failed (best effort, over a connection of its own: the
    /// command's may be mid-statement). They would otherwise find it by its silence.
    pub async fn failed(&self) {
        if self.run_id.is_none() {
            return;
        }
        let me = self.shard.index as i32;
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            if let Ok(mut c) = Conn::connect(&self.target).await {
                let _ = self.insert(&mut c, P_FAILED, me, now_ms()).await;
            }
        })
        .await;
    }
}

impl Drop for LoadFleet {
    fn drop(&mut self) {
        if let Some((stop, t)) = self.beat.lock().unwrap_or_else(|p| p.into_inner()).take() {
            stop.store(true, Ordering::Relaxed);
            let _ = t.join();
        }
    }
}

/// A workload's prepare, step 1: whether to create the tables, load into the ones shard 0
/// created, or do nothing (`loaded`: the tables are already there as asked). Without a
/// fleet: Create unless loaded.
pub async fn begin(f: Option<&LoadFleet>, conn: &mut Conn, loaded: bool) -> Result<Role> {
    match f {
        Some(f) => f.begin(conn, loaded).await,
        None if loaded => Ok(Role::Skip),
        None => Ok(Role::Create),
    }
}

/// Step 2, after Create made the tables: the other shards may load now.
pub async fn tables_ready(f: Option<&LoadFleet>, conn: &mut Conn) -> Result<()> {
    match f {
        Some(f) if f.run_id.is_some() => f.decide(conn, READY).await,
        _ => Ok(()),
    }
}

/// The load's "now" (ms since the epoch) for timestamps in the rows: shard 0's, so that every
/// shard writes the same values; None without a fleet (the workload takes its own clock).
pub fn load_time_ms(f: Option<&LoadFleet>) -> Option<i64> {
    f.map(|f| f.now_ms.load(Ordering::SeqCst))
        .filter(|ms| *ms > 0)
}

/// Step 3, after this shard's rows: true when this process finishes the tables (indexes,
/// statistics, metadata; then `done`): without a fleet, and shard 0 once every shard loaded.
/// The other shards wait until shard 0 is done and get false.
pub async fn loaded(f: Option<&LoadFleet>, conn: &mut Conn) -> Result<bool> {
    match f {
        Some(f) if f.run_id.is_some() => f.loaded(conn).await,
        _ => Ok(true),
    }
}

/// Step 4 (shard 0): the tables are finished; the other shards' prepare ends.
pub async fn done(f: Option<&LoadFleet>, conn: &mut Conn) -> Result<()> {
    match f {
        Some(f) if f.run_id.is_some() => f.insert(conn, P_DONE, DONE, now_ms()).await,
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_parse() {
        assert_eq!(
            Shard::parse("1/3", None).unwrap(),
            Shard { index: 1, count: 3 }
        );
        assert_eq!(
            Shard::parse("/4", Some("3")).unwrap(),
            Shard { index: 3, count: 4 }
        );
        for bad in ["3/2", "0/0", "2/2", "x/2", "1", "/2"] {
            let e = Shard::parse(bad, None).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(!e.message.contains('\n'), "{bad}");
        }
        assert!(Shard::parse("/2", Some("2")).is_err());
    }

    #[test]
    fn blocks_cover_without_overlap() {
        for (n, c) in [(10u64, 3u32), (3, 3), (100_000, 4), (7, 1)] {
            let mut next = 1;
            for i in 0..c {
                let (lo, hi) = Shard { index: i, count: c }.block(n, "x").unwrap();
                assert_eq!(lo, next);
                assert!(hi >= lo);
                next = hi + 1;
            }
            assert_eq!(next, n + 1);
        }
        assert!(Shard { index: 0, count: 3 }
            .block(2, "--warehouses")
            .is_err());
    }

    #[test]
    fn ranges_cover_once_in_whole_groups() {
        for (n, g, c) in [
            (10u64, 1u64, 3u32),
            (2, 1, 3),
            (300_000, 100_000, 2),
            (7, 3, 2),
            (0, 1, 2),
        ] {
            let mut next = 1;
            for i in 0..c {
                let (lo, hi) = Shard { index: i, count: c }.range(n, g);
                if lo > hi {
                    continue;
                }
                assert_eq!(lo, next, "{n} {g} {c}");
                assert!(hi == n || hi % g == 0);
                next = hi + 1;
            }
            assert_eq!(next, n + 1, "{n} {g} {c}");
        }
        assert_eq!(
            Shard { index: 1, count: 2 }.range(300_000, 100_000),
            (100_001, 300_000)
        );
    }

    #[test]
    fn start_at_and_run_id() {
        assert_eq!(parse_start_at("1700000000").unwrap(), 1_700_000_000.0);
        assert_eq!(
            parse_start_at("2023-11-14T22:13:20Z").unwrap(),
            1_700_000_000.0
        );
        assert!(parse_start_at("tomorrow").is_err());
        assert!(check_run_id("job-7.a_b").is_ok());
        assert!(check_run_id("x'; DROP TABLE t").is_err());
        assert!(check_run_id("").is_err());
    }
}
