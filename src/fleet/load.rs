//! `prepare --shard`: N processes load one database together.
//!
//! The shards meet in the same table as a run's (rows with negative points; a run's points are
//! 0, 1, ...). Shard 0 alone decides and does what is done once: it looks whether the tables
//! are already there, creates them (without their secondary indexes), and once every shard has
//! loaded its share it builds the indexes, the statistics and the metadata row. Every shard
//! keeps a heartbeat in its check-in row while it takes part; a shard whose heartbeat is older
//! than --fleet-timeout (or that never checked in) ends the others' wait with its number.

use super::*;

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

/// One shard's part in a fleet's prepare (`prepare --shard`, and `run --shard` when the
/// tables are not loaded yet). Workloads take it as a `FleetLoad` (model/fleet_load.rs), whose
/// functions do the one-process prepare when there is no fleet.
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

// The fleet's side of the steps: with `--start-at` (no run id) the shards do not meet, so
// only `begin` has something to say.
impl FleetLoad for LoadFleet {
    fn begin<'a>(&'a self, conn: &'a mut Conn, loaded: bool) -> LocalBoxFuture<'a, Result<Role>> {
        LoadFleet::begin(self, conn, loaded).boxed_local()
    }
    fn tables_ready<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        async move {
            match self.run_id {
                Some(_) => self.decide(conn, READY).await,
                None => Ok(()),
            }
        }
        .boxed_local()
    }
    fn loaded<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<bool>> {
        async move {
            match self.run_id {
                Some(_) => LoadFleet::loaded(self, conn).await,
                None => Ok(true),
            }
        }
        .boxed_local()
    }
    fn done<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        async move {
            match self.run_id {
                Some(_) => self.insert(conn, P_DONE, DONE, now_ms()).await,
                None => Ok(()),
            }
        }
        .boxed_local()
    }
    fn load_time_ms(&self) -> Option<i64> {
        Some(self.now_ms.load(Ordering::SeqCst)).filter(|ms| *ms > 0)
    }
}
