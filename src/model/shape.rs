//! What a workload sees while it resolves (`ResolveCx`) and the run's shape it may adjust.
//! The config builds them and reads them back, and the contract hands them to the workloads
//! (it re-exports them): plain settings that both floors take, so they live below both.

use std::time::Duration;

use crate::db::Dbms;
use crate::measure::Method;

/// Which command the workload is resolved for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Run,
    Prepare,
    Cleanup,
    Check,
}

/// What a workload sees while it resolves: the common settings, and the shape of the run that
/// it may adjust to its own defaults (a flag the user gave always wins: see `given`).
#[derive(Debug, Clone)]
pub struct ResolveCx {
    pub purpose: Purpose,
    pub dbms: Dbms,
    pub method: Method,
    pub seed: u64,
    /// `--engine` as typed.
    pub engine: Option<String>,
    pub shape: Shape,
    /// `--shard I/N`: this process runs shard I of a fleet of N; the workload takes its share
    /// (and says how in `Workload::partition`).
    pub shard: Option<super::Shard>,
}

/// The run's shape: thread counts, phase lengths, repeats, and the size the result shows.
#[derive(Debug, Clone)]
pub struct Shape {
    pub threads: Vec<usize>,
    pub warmup: Duration,
    pub duration: Duration,
    pub runs: u32,
    /// The workload's size for the result (rows per table, warehouses, maxid1, ...).
    pub size: u64,
    /// Whether SCHED_BATCH may be used for its client threads.
    pub sched_batch: bool,
    /// Which of the above the user gave on the command line.
    pub given: Given,
}

/// Common flags the user typed (a workload's defaults give way to them).
#[derive(Debug, Clone, Copy, Default)]
pub struct Given {
    pub threads: bool,
    pub warmup: bool,
    pub duration: bool,
    pub runs: bool,
    pub rate: bool,
    pub pin: bool,
}
