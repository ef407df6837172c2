//! A fleet: several enginebench processes (on other machines, pods or network namespaces) run
//! one benchmark as shards of it. Each shard runs its share of the workload (the workload says
//! how it splits: `Workload::partition`), the shards meet before measuring so that their
//! measured runs and report intervals line up on the wall clock, and `enginebench merge` adds
//! their results into one (report/merge.rs). docs/fleet.md.
//!
//! Here: a shard, the run's meeting before each point; `load.rs`: `prepare --shard`.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::{FutureExt, LocalBoxFuture};
use serde::{Deserialize, Serialize};

use crate::db::{Conn, TargetSpec};
use crate::error::{Context, Error, Result};
use crate::interrupt;

// A shard is plain data a floor below (the loader, the contract and the merge take it).
use crate::model::Shard;
// The steps a workload's prepare takes are declared a floor below; the fleet implements them.
use crate::model::fleet_load::{FleetLoad, Role};

mod load;
pub use load::LoadFleet;

/// The table the shards check in to, keyed by run id and point.
pub const TABLE: &str = "enginebench_fleet";

/// How far ahead of the last check-in the start is set: time for every shard to see it.
const LEAD: Duration = Duration::from_millis(1500);

/// How often a waiting shard looks at the table.
const POLL: Duration = Duration::from_millis(100);

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

#[cfg(test)]
mod tests {
    use super::*;

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
