//! The result model: one struct that every output (JSON, CSV, terminal table) reads.
//! Serialized fields carry their unit in the name. `schema/result-v2.schema.json` describes it.
//!
//! What only one workload produces lives in `sections` (and a run's derived figures in
//! `figures`), keyed by the workload's name: the workload owns that part's type and reads and
//! writes it through [`ResultDoc::section`] / [`ResultDoc::set_section`] (and the same on
//! [`Point`] and [`RunRecord`]); this module knows no workload.
//!
//! It stands on the ground (db, measure): the runner, the loader, the live outputs, the
//! contract and every output read and write it. Here: the result and its points and runs;
//! `owners.rs`: what a workload adds to the outputs (its sections, tables, chart series);
//! `labeled.rs`: a result with its label; `samples.rs`: a phase's intervals; `target.rs`: the target's nodes, replication, table sizes
//! and disk use; `load.rs`: what a load did; `phase.rs`: what a session of workers is asked for
//! (pacing, faults, a phase's plan) and what a phase measured.

pub mod fleet_load;
mod labeled;
mod load;
mod owners;
mod phase;
mod samples;
mod shape;
mod shard;
mod target;

pub use labeled::{full_intervals, labels, Labeled};
pub use load::{LoadJournal, LoadMethod, LoadOptions, LoadStats, LoadTrack, LoadWatch};
pub use owners::{Cell, MetricValues, Owners, Pick, SectionOwner, Series, Table};
pub use phase::{
    Arrivals, ConnectMode, ConnectStats, Faults, KindStats, LoadStep, NodeStats, Pacing, PhasePlan,
    PhaseResult, ScheduleStats, StepStats, TxConnect, DEFAULT_CONNECT_TIMEOUT,
};
pub use samples::{IntervalSample, KindTick, PhaseInfo, PhaseKind};
pub use shape::{Given, Purpose, ResolveCx, Shape};
pub use shard::{Shard, INDEX_ENV};
pub use target::{DiskUsage, NodeInfo, ReplicationSample, TableSize};

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::measure::host::HostFacts;
use crate::measure::{CpuTimes, LatencySummary};
// What other processes used is measured on the host (a floor below).
pub use crate::measure::HostCpu;

pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    #[default]
    Running,
    Complete,
    Interrupted,
    Failed,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ResultDoc {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub status: Status,
    /// Why the run did not complete (one line, no password).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub started_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// The fully resolved run configuration (the target URL with its password redacted).
    pub config: serde_json::Value,
    pub target: TargetInfo,
    pub host: HostFacts,
    pub load: Vec<LoadStats>,
    pub points: Vec<Point>,
    /// What is approximate or differs from the original benchmark, said where the numbers are.
    pub notes: Vec<String>,
    /// Parts of the result that one workload owns, keyed by the workload's name; only that
    /// workload reads or writes their content.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sections: BTreeMap<String, Value>,
    /// A merge of a fleet's shards (`enginebench merge`): which shards it holds and which
    /// were lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetMerge>,
    /// The client's I/O path (a network target's; none for SQLite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientInfo>,
}

/// How the client reached the server.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClientInfo {
    /// `wire` (enginebench's lean client) or the general driver (`mysql_async`,
    /// `tokio_postgres`).
    pub driver: String,
    /// The lean client's I/O path in the measuring loops: `io_uring` or `epoll` (the general
    /// drivers: `epoll`).
    pub io: String,
    /// What `--client-io` asked for: `auto`, `io_uring` or `epoll`.
    pub requested: String,
    /// Why io_uring was not used though `auto` asked for it, in the process or in a loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The lean client's measuring loops by the path each took (absent in results made
    /// before it was recorded, and for the general drivers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<LoopCounts>,
    /// What the lean client's batched I/O path did in each measured run (io_uring loops
    /// only; absent in older results, for the general drivers and on epoll).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batch: Vec<BatchRun>,
}

/// One measured run's batch figures (docs/method.md, "Batched waits and held replies").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchRun {
    pub operation: String,
    pub threads: usize,
    pub run: u32,
    /// The point's client loops by the path each took (and so whether any batched at all).
    pub loops: LoopCounts,
    /// Waits for half of a loop's replies (every connection of the loop waiting for one),
    /// and those of them that ran to the wait's 2 ms limit.
    pub batched_waits: u64,
    pub waits_to_timeout: u64,
    /// Receive completions with bytes (a reply, or a part of a long one), and those taken
    /// right after a batched wait.
    pub receives: u64,
    pub held_receives: u64,
    /// How long receives waited in the kernel for the loop, over all receives (0 for those
    /// not taken after a batched wait): an upper bound, the length of the wait each ended.
    pub hold_mean_us: f64,
    pub hold_p99_us: u64,
}

/// Client loops by I/O path: a loop asked for io_uring whose ring could not start there took
/// epoll (`ClientInfo::fallback` says why), so a run may mix both.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopCounts {
    pub io_uring: u64,
    pub epoll: u64,
    /// Of the epoll loops, those `--client-io auto` put there for having fewer connections
    /// than the ring needs to pay (docs/method.md, "The I/O path"; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub auto_epoll: u64,
}

/// What a merged result is made of.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FleetMerge {
    pub run_id: String,
    /// Shards the fleet had (N of --shard I/N).
    pub shards: u32,
    /// Shards whose results were merged, and the result file each came from.
    pub merged: Vec<MergedShard>,
    /// Shards with no complete result: missing from the merge's inputs, or ended before
    /// their last run (failed, killed). Their finished runs are merged; `shards` of each
    /// merged run says which shards it holds.
    pub lost: Vec<u32>,
    /// The largest difference between the shards' starts of one run (their clocks and the
    /// meeting's spread).
    pub max_start_skew_s: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MergedShard {
    pub shard: u32,
    pub file: String,
    pub status: Status,
    pub hostname: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    pub dbms: String,
    pub url: String,
    pub server_version: String,
    /// The storage engine of the benchmark table as the server reports it.
    pub engine: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<u64>,
    /// The server's global settings, read once (MariaDB: SHOW GLOBAL VARIABLES via
    /// information_schema.SYSTEM_VARIABLES; PostgreSQL: pg_settings, values with their unit).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Names of the settings that were set (config file, command line, SET GLOBAL) to a value
    /// other than the compiled-in default; paths and ports of the private server left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings_non_default: Vec<String>,
    /// The server process, when enginebench started it (`--server`) or was told its pid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerInfo>,
    /// Every node of a multi-host target (node 0 first, in the URL's order) or a Spider head
    /// then its backends, read once at the start like node 0's `settings`; absent for one node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeInfo>,
}

/// The server process behind the target.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServerInfo {
    /// True when enginebench started (and stopped) this server.
    pub managed: bool,
    /// `mariadb:PROFILE` / `postgres:PROFILE` of a managed server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The option file the managed server was started with (profile + --server-opt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options_file: Option<String>,
    /// CPUs the server's threads were pinned to (`--pin server=...`); absent: not pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_cpus: Option<Vec<usize>>,
    /// How `pid` was found: "managed", "--server-pid", "socket peer" or "listening port"
    /// (`db::peer::FoundBy`); absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_by: Option<String>,
}

/// One (operation, thread count) point: its warm-up and its measured runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Point {
    pub workload: String,
    pub operation: String,
    pub threads: usize,
    pub warmup: Option<PhaseSummary>,
    pub runs: Vec<RunRecord>,
    pub aggregate: Aggregate,
    /// `SHOW ENGINE INNODB|ROCKSDB STATUS` after the point's last run (MariaDB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_status: Option<String>,
    /// Sizes of the benchmark database's tables after the point's last run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_sizes: Vec<TableSize>,
    /// The server's data folder on disk after a forced flush (local servers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_usage: Option<DiskUsage>,
    /// Parts of the point that one workload owns, keyed by the workload's name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sections: BTreeMap<String, Value>,
    /// How the point's connections were opened (absent in results of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<ConnectRecord>,
}

/// How a point's connections were opened: paced (at most 16 connecting at once) and retried
/// while the server refused them for now (listen queue full, no free connection slot).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ConnectRecord {
    pub connections: usize,
    /// Connect attempts refused for now and retried (0 when every first attempt worked).
    #[serde(default)]
    pub retries: u64,
    /// From the first connect to the last connection ready (the drivers' setup included).
    #[serde(default)]
    pub elapsed_s: f64,
}

/// The warm-up, kept only as a summary: it is never part of any aggregate.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PhaseSummary {
    pub ops: u64,
    pub elapsed_s: f64,
    pub ops_per_s: f64,
    pub errors: u64,
    /// Open loop: how long the rate rose from 0 to the first rate at the warm-up's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_s: Option<f64>,
    /// Open loop: starts due in the warm-up that never started when it ended. They are not
    /// carried into the measured runs: each run's schedule starts afresh (and every
    /// operation of the warm-up has finished before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_ops: Option<u64>,
}

/// One load step of a measured run (`--threads N@T,...`, `--rate R@T,...`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// From 1.
    pub step: u32,
    /// Seconds from the run's start to the step's start, and the step's length.
    pub start_s: f64,
    pub duration_s: f64,
    /// Connections working in the step.
    pub threads: usize,
    /// Open loop: the step's target rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ops_per_s: Option<f64>,
    /// Operations that succeeded, started (open loop: due) in the step, and per second of it.
    pub ops: u64,
    pub ops_per_s: f64,
    pub errors: u64,
    pub latency_us: LatencySummary,
    /// Open loop: response time, starts due in the step and those never started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_us: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_ops: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_ops: Option<u64>,
    /// The step's latency histogram (HDR, V2 log encoding), and the open loop's response-time
    /// one: a fleet's merge adds the shards' steps with them, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram_hdr_v2: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_hdr_v2: Option<String>,
}

/// `--connect per-transaction` over a run: the connections opened (one per operation that
/// got one) and each one's set-up (connect and the workload's setup on it: prepares,
/// settings), which is inside every operation's latency too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TxConnectRecord {
    pub connections: u64,
    pub setup_us: LatencySummary,
    /// Mean set-up over the mean latency of the run's operations.
    pub setup_share: f64,
    /// The set-up times' histogram (HDR, V2 log encoding), so that a merge adds them exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_hdr_v2: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunRecord {
    pub run: u32,
    pub ops: u64,
    pub rows: u64,
    pub rows_per_op: f64,
    /// Statements sent (equal to ops for single-query operations; sysbench's "queries").
    #[serde(default)]
    pub statements: u64,
    pub elapsed_s: f64,
    pub ops_per_s: f64,
    #[serde(default)]
    pub statements_per_s: f64,
    pub errors_total: u64,
    pub errors: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_samples: Vec<String>,
    /// Service time: from the actual start of each operation to its end.
    pub latency_us: LatencySummary,
    /// Open loop (--rate) only: response time, from each operation's intended start to its end
    /// (service time plus any wait behind schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_us: Option<LatencySummary>,
    /// A fleet shard's open-loop run only: the response-time histogram (HdrHistogram V2,
    /// base64), so that `merge` adds the shards' exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_hdr_v2: Option<String>,
    /// Open loop (--rate) only: how well the schedule was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoop>,
    pub client_cpu: ClientCpu,
    /// Server status counters that moved during this run (after minus before).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_counters: BTreeMap<String, f64>,
    /// The server process over this run (when its pid is known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_process: Option<ServerProcess>,
    /// `--profile-server`: where the server's CPU went over this run (perf samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_profile: Option<crate::measure::profile::ServerProfile>,
    /// Client CPU / (client + server CPU) over this run (when the server's pid is known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_share: Option<f64>,
    /// CPU used on this host during the run by processes other than the client and the server.
    pub host_cpu: HostCpu,
    /// True when other processes used more than 10 % of one CPU during the run.
    #[serde(default)]
    pub disturbed: bool,
    pub intervals: Vec<IntervalSample>,
    pub workers_lost: usize,
    pub interrupted: bool,
    /// The latency histogram (HdrHistogram V2, base64): merges exactly with other runs.
    pub histogram_hdr_v2: String,
    /// Per operation kind (a transaction type, a request type), for workloads with several kinds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_kind: BTreeMap<String, KindRecord>,
    /// Figures the workload derives from the run, by name (a unit in the name when it has one).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub figures: BTreeMap<String, f64>,
    /// Growth of the workload's own counters during the run (retries, skipped work, say),
    /// summed over connections.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload_counters: BTreeMap<String, u64>,
    /// `--percentile P`: service-time percentiles asked for besides the fixed set (`p97_5`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentiles_us: BTreeMap<String, u64>,
    /// `--reconnect`: connections re-established during the run, and attempts that failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnects: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnect_failures: u64,
    /// Per node of a multi-host target, in the URL's order (absent for one node).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_node: Vec<NodeRecord>,
    /// A shard of a fleet (`--shard`): when the run started (seconds since the epoch), to line
    /// the shards' runs up in a merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_unix_s: Option<f64>,
    /// A merge of a fleet's shards (`enginebench merge`): each shard's part of this run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardRun>,
    /// Parts of the run that one workload owns, keyed by the workload's name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sections: BTreeMap<String, Value>,
    /// Load steps (`--threads N@T,...`, `--rate R@T,...`): each step's figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepRecord>,
    /// `--connect per-transaction`: the connections and their set-up times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_per_transaction: Option<TxConnectRecord>,
}

/// One node of a multi-host target over a run: its connections' operations, errors and
/// latencies (they add up to the run's totals).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NodeRecord {
    /// `host:port` as the URL gave it.
    pub node: String,
    pub connections: usize,
    pub ops: u64,
    pub ops_per_s: f64,
    pub errors_total: u64,
    pub errors: BTreeMap<String, u64>,
    pub latency_us: LatencySummary,
    /// Connections to this node lost for good during the run (the node went away).
    #[serde(default)]
    pub workers_lost: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnects: u64,
    /// This node's status counters that moved during the run, read over a connection of its
    /// own (Galera's certification failures, flow control, queues); empty when not read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_counters: BTreeMap<String, f64>,
    /// Replication state sampled over the node's own connection at every report interval
    /// and at the end of the run: a PostgreSQL replica's lag, a Galera node's queues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication: Option<ReplicationRecord>,
    /// A fleet shard's result only: this node's latency histogram (HdrHistogram V2, base64),
    /// so that `merge` adds the shards' exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram_hdr_v2: Option<String>,
}

/// One node's replication over a run, from samples (`ReplicationSample`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ReplicationRecord {
    pub samples: u64,
    /// PostgreSQL replica: WAL bytes not replayed yet (the primary's pg_current_wal_lsn()
    /// minus the replica's pg_last_wal_replay_lsn(), read one after the other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_bytes_max: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_bytes_mean: Option<f64>,
    /// PostgreSQL replica: seconds since the last replayed transaction committed on the
    /// primary (now() - pg_last_xact_replay_timestamp()), 0 when it has replayed everything
    /// it received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_s_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_s_mean: Option<f64>,
    /// Galera node: write sets waiting to be applied (wsrep_local_recv_queue) and to be sent
    /// (wsrep_local_send_queue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recv_queue_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recv_queue_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_queue_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_queue_mean: Option<f64>,
    /// Every sample, in time order.
    pub intervals: Vec<ReplicationSample>,
}

impl ReplicationRecord {
    /// Max and mean of each figure over `samples` (None: no sample had it); None when no
    /// sample had anything.
    pub fn of(samples: Vec<ReplicationSample>) -> Option<ReplicationRecord> {
        let samples: Vec<ReplicationSample> =
            samples.into_iter().filter(|s| !s.is_empty()).collect();
        if samples.is_empty() {
            return None;
        }
        fn stats(v: Vec<f64>) -> (Option<f64>, Option<f64>) {
            if v.is_empty() {
                return (None, None);
            }
            let max = v.iter().copied().fold(f64::MIN, f64::max);
            (Some(max), Some(v.iter().sum::<f64>() / v.len() as f64))
        }
        let pick = |f: fn(&ReplicationSample) -> Option<f64>| {
            stats(samples.iter().filter_map(f).collect())
        };
        let (bytes_max, bytes_mean) = pick(|s| s.lag_bytes.map(|b| b as f64));
        let (lag_s_max, lag_s_mean) = pick(|s| s.lag_s);
        let (recv_queue_max, recv_queue_mean) = pick(|s| s.recv_queue);
        let (send_queue_max, send_queue_mean) = pick(|s| s.send_queue);
        Some(ReplicationRecord {
            samples: samples.len() as u64,
            lag_bytes_max: bytes_max.map(|b| b as u64),
            lag_bytes_mean: bytes_mean,
            lag_s_max,
            lag_s_mean,
            recv_queue_max,
            recv_queue_mean,
            send_queue_max,
            send_queue_mean,
            intervals: samples,
        })
    }
}

/// The typed content of a section, None when it is absent or does not have the owner's shape.
fn get_section<T: DeserializeOwned>(map: &BTreeMap<String, Value>, key: &str) -> Option<T> {
    serde_json::from_value(map.get(key)?.clone()).ok()
}

fn put_section<T: Serialize>(map: &mut BTreeMap<String, Value>, key: &str, value: &T) {
    // The owners' section types are plain data: serializing them cannot fail.
    let v = serde_json::to_value(value).expect("a section serializes");
    map.insert(key.to_string(), v);
}

/// Typed access to the sections of a part of the result, for the workload that owns them.
macro_rules! section_access {
    ($t:ty) => {
        impl $t {
            /// The section `key` read as its owner's type (None: absent or of another shape).
            pub fn section<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
                get_section(&self.sections, key)
            }

            /// Write section `key` (replacing what it held).
            pub fn set_section<T: Serialize>(&mut self, key: &str, value: &T) {
                put_section(&mut self.sections, key, value)
            }
        }
    };
}

section_access!(ResultDoc);
section_access!(Point);
section_access!(RunRecord);

impl RunRecord {
    /// A derived figure of the run (`figures[name]`).
    pub fn figure(&self, name: &str) -> Option<f64> {
        self.figures.get(name).copied()
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One shard's part of a merged run: its own figures, or `lost` when it has none for this
/// run (it failed or was killed before the run ended).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ShardRun {
    pub shard: u32,
    pub lost: bool,
    pub ops: u64,
    pub ops_per_s: f64,
    pub errors_total: u64,
    pub client_cpu: ClientCpu,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_unix_s: Option<f64>,
    #[serde(default)]
    pub disturbed: bool,
}

/// One operation kind within a run: ops finished (rolled_back of them ended in a requested
/// rollback), errors, and latency of the finished ones.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KindRecord {
    pub ops: u64,
    #[serde(default)]
    pub rolled_back: u64,
    pub errors: u64,
    pub latency_us: LatencySummary,
    /// A fleet shard's result only: this kind's latency histogram (HdrHistogram V2, base64),
    /// so that `merge` adds the shards' exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram_hdr_v2: Option<String>,
}

/// The schedule of one open-loop run, over all connections.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpenLoop {
    /// The requested total rate.
    pub rate_ops_per_s: f64,
    pub arrivals: String,
    /// Intended starts before the end of the run (started + backlog).
    pub intended_ops: u64,
    /// Intended starts that had not started when the run ended (the server fell behind).
    pub backlog_ops: u64,
    /// Operations started more than 2 ms after their intended start.
    pub late_ops: u64,
    /// The largest delay of an actual start behind its intended start.
    pub max_lag_us: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClientCpu {
    pub user_s: f64,
    pub sys_s: f64,
    pub us_per_op: f64,
    /// The client's threads going to sleep (voluntary context switches) and preempted
    /// (involuntary), over the run and per operation: a client wakes once per sleep, and its
    /// wake-ups are much of its cost (absent in results from before they were counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voluntary_cs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempted_cs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voluntary_cs_per_op: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempted_cs_per_op: Option<f64>,
}

impl ClientCpu {
    pub fn new(c: CpuTimes, ops: u64) -> Self {
        Self::from_parts(
            c.user_s,
            c.sys_s,
            Some((c.voluntary_cs, c.preempted_cs)),
            ops,
        )
    }

    /// From the run's totals: CPU seconds, the switches when counted, and the operations.
    pub fn from_parts(user_s: f64, sys_s: f64, switches: Option<(u64, u64)>, ops: u64) -> Self {
        let per_op = |n: u64| n as f64 / ops.max(1) as f64;
        Self {
            user_s,
            sys_s,
            us_per_op: (user_s + sys_s) * 1e6 / ops.max(1) as f64,
            voluntary_cs: switches.map(|s| s.0),
            preempted_cs: switches.map(|s| s.1),
            voluntary_cs_per_op: switches.map(|s| per_op(s.0)),
            preempted_cs_per_op: switches.map(|s| per_op(s.1)),
        }
    }
}

/// A server process (with its threads; PostgreSQL: the postmaster and its children) over a run,
/// from /proc/PID/stat, /proc/PID/io and /proc/PID/status.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServerProcess {
    pub user_s: f64,
    pub sys_s: f64,
    pub cpu_us_per_op: f64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub written_bytes_per_op: f64,
    /// Resident memory of the main server process at the end of the run.
    pub rss_bytes: u64,
    /// The server's threads going to sleep per operation (voluntary context switches): a
    /// server thread that waits for its client's next query sleeps and must be woken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voluntary_cs_per_op: Option<f64>,
    /// The server's threads preempted per operation (involuntary context switches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempted_cs_per_op: Option<f64>,
}

/// Over the measured runs of one point.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Aggregate {
    pub runs: usize,
    pub ops_per_s_max: f64,
    pub ops_per_s_median: f64,
    pub ops_per_s_min: f64,
    /// Coefficient of variation of ops/s over runs (stddev / mean); 0 with one run.
    pub ops_per_s_cv: f64,
    /// Percentiles of all measured operations of all runs (histograms merged): service time.
    pub latency_us: LatencySummary,
    /// Open loop only: response time over all runs (histograms merged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_us: Option<LatencySummary>,
    pub client_cpu_us_per_op_median: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_us_per_op_median: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_share_median: Option<f64>,
    /// Runs flagged `disturbed` (other processes used > 10 % of one CPU).
    pub disturbed_runs: usize,
    pub errors_total: u64,
    /// `--percentile P`: over all runs (histograms merged).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentiles_us: BTreeMap<String, u64>,
}

/// Median of the values present, or None when no run has one.
pub fn median_of_some(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = v.flatten().collect();
    (!v.is_empty()).then(|| median(&v))
}

/// Median of a non-empty list (mean of the two middle values for an even count).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Coefficient of variation (sample standard deviation / mean).
pub fn cv(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let (mean, var) = mean_var(v);
    if mean == 0.0 {
        return 0.0;
    }
    var.sqrt() / mean
}

/// Mean and sample variance (0 for fewer than two values).
pub fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, var)
}

impl Aggregate {
    pub fn of(runs: &[RunRecord], merged: LatencySummary) -> Self {
        let qps: Vec<f64> = runs.iter().map(|r| r.ops_per_s).collect();
        let cpu: Vec<f64> = runs.iter().map(|r| r.client_cpu.us_per_op).collect();
        Aggregate {
            runs: runs.len(),
            ops_per_s_max: qps.iter().copied().fold(0.0, f64::max),
            ops_per_s_median: median(&qps),
            ops_per_s_min: if qps.is_empty() {
                0.0
            } else {
                qps.iter().copied().fold(f64::INFINITY, f64::min)
            },
            ops_per_s_cv: cv(&qps),
            latency_us: merged,
            response_us: None,
            client_cpu_us_per_op_median: median(&cpu),
            server_cpu_us_per_op_median: median_of_some(
                runs.iter()
                    .map(|r| r.server_process.as_ref().map(|s| s.cpu_us_per_op)),
            ),
            client_cpu_share_median: median_of_some(runs.iter().map(|r| r.client_cpu_share)),
            disturbed_runs: runs.iter().filter(|r| r.disturbed).count(),
            errors_total: runs.iter().map(|r| r.errors_total).sum(),
            percentiles_us: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_cv() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(cv(&[5.0]), 0.0);
        let c = cv(&[90.0, 100.0, 110.0]);
        assert!((c - 0.1).abs() < 1e-9, "{c}");
    }

    #[test]
    fn dead_nodes_are_marked_and_noted() {
        let node = |n: &str| NodeInfo {
            node: n.into(),
            ..NodeInfo::default()
        };
        let mut nodes = vec![node("a:1"), node("b:2"), node("c:3")];
        // Cluster::dead_nodes counts from 1; a number past the list is ignored.
        let notes = NodeInfo::mark_exited(&mut nodes, &[2, 9]);
        let exited: Vec<bool> = nodes.iter().map(|n| n.exited).collect();
        assert_eq!(exited, vec![false, true, false]);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("Node 1 (b:2)"), "{}", notes[0]);
        // Absent from the JSON unless true: older readers and one-node results unchanged.
        let json = serde_json::to_value(&nodes[0]).unwrap();
        assert!(json.get("exited").is_none(), "{json}");
        assert_eq!(serde_json::to_value(&nodes[1]).unwrap()["exited"], true);
    }
}
