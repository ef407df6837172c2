//! A fleet's prepare as a workload's `prepare` sees it: the four steps that N processes loading
//! one database together take (`prepare --shard I/N`), as a trait that the fleet's meeting
//! (`crate::fleet`) implements, and the one-process default when there is no fleet. Plain
//! steps a floor below the contract, so that a workload's prepare takes them in its context
//! without knowing how the shards meet.

use futures_util::future::LocalBoxFuture;

use crate::db::Conn;
use crate::error::Result;

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

/// One shard's part in a fleet's prepare. A workload calls it through the functions below,
/// which do the one-process prepare when there is no fleet.
pub trait FleetLoad {
    /// Step 1: check in and learn this shard's role (`loaded`: the tables are there as asked).
    fn begin<'a>(&'a self, conn: &'a mut Conn, loaded: bool) -> LocalBoxFuture<'a, Result<Role>>;
    /// Step 2 (shard 0, after Create): the other shards may load now.
    fn tables_ready<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>>;
    /// Step 3, after this shard's rows: true when this process finishes the tables.
    fn loaded<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<bool>>;
    /// Step 4 (shard 0): the tables are finished.
    fn done<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>>;
    /// The load's common "now" (ms since the epoch), once shard 0 decided it.
    fn load_time_ms(&self) -> Option<i64>;
}

/// Step 1: whether to create the tables, load into the ones shard 0 created, or do nothing
/// (`loaded`: the tables are already there as asked). Without a fleet: Create unless loaded.
pub async fn begin(f: Option<&dyn FleetLoad>, conn: &mut Conn, loaded: bool) -> Result<Role> {
    match f {
        Some(f) => f.begin(conn, loaded).await,
        None if loaded => Ok(Role::Skip),
        None => Ok(Role::Create),
    }
}

/// Step 2, after Create made the tables: the other shards may load now.
pub async fn tables_ready(f: Option<&dyn FleetLoad>, conn: &mut Conn) -> Result<()> {
    match f {
        Some(f) => f.tables_ready(conn).await,
        None => Ok(()),
    }
}

/// The load's "now" (ms since the epoch) for timestamps in the rows: shard 0's, so that every
/// shard writes the same values; None without a fleet (the workload takes its own clock).
pub fn load_time_ms(f: Option<&dyn FleetLoad>) -> Option<i64> {
    f.and_then(|f| f.load_time_ms())
}

/// Step 3, after this shard's rows: true when this process finishes the tables (indexes,
/// statistics, metadata; then `done`): without a fleet, and shard 0 once every shard loaded.
/// The other shards wait until shard 0 is done and get false.
pub async fn loaded(f: Option<&dyn FleetLoad>, conn: &mut Conn) -> Result<bool> {
    match f {
        Some(f) => f.loaded(conn).await,
        None => Ok(true),
    }
}

/// Step 4 (shard 0): the tables are finished; the other shards' prepare ends.
pub async fn done(f: Option<&dyn FleetLoad>, conn: &mut Conn) -> Result<()> {
    match f {
        Some(f) => f.done(conn).await,
        None => Ok(()),
    }
}
