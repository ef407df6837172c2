//! A span measured on the host: samples of the host's busy CPU, this process's CPU and the
//! server's, what other processes used between two of them and whether that disturbed the
//! span, the server's counters that moved, and what a measured run counted. The harness's
//! phases and the workloads that measure spans of their own (a sql-bench operation, a
//! compression load, an iiBench window) share them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::proc::{self, ProcSample};
use super::{CpuTimes, ErrorCounts, LatencyHist, DISTURBED_CPUS};

/// Others' CPU seconds that the host sampler cannot tell from its own rounding: /proc/stat and
/// /proc/PID/stat count in clock ticks (10 ms at USER_HZ 100), and others' share is a
/// difference of several such counters (five host fields, the server's four and its children's),
/// so over a short span (a sql-bench operation of 50 ms, a small iiBench window) a few ticks
/// of rounding alone would read as more than `DISTURBED_CPUS`.
pub const OTHERS_RESOLUTION_S: f64 = 0.05;

/// Whether other processes' CPU over a measurement of `elapsed_s` disturbed it: more than
/// `DISTURBED_CPUS` on average, and more CPU seconds than the sampler's rounding.
pub fn disturbed(others_cpus: f64, elapsed_s: f64) -> bool {
    disturbed_above(others_cpus, elapsed_s, DISTURBED_CPUS)
}

/// `disturbed` with the bound of `run --disturbed-above` (a negative bound flags every
/// measurement: a way to try what a suite does with disturbed runs on a quiet machine).
pub fn disturbed_above(others_cpus: f64, elapsed_s: f64, bound: f64) -> bool {
    bound < 0.0 || (others_cpus > bound && others_cpus * elapsed_s > OTHERS_RESOLUTION_S)
}

/// The host's CPU over a run: what every process used, and what others than the client and
/// the server used of it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HostCpu {
    /// Busy CPU of the host's processes (all CPUs) during the run, from /proc/stat: without
    /// the kernel's own threads and interrupts (I/O completion, journal, writeback), which the
    /// server's own writes cause (`measure::proc::host_busy_s`).
    pub busy_s: f64,
    /// busy_s minus the client and (when known) the server: what other processes used.
    pub others_s: f64,
    /// others_s / elapsed_s: 1.0 is one whole CPU.
    pub others_cpus: f64,
}

/// The host's busy CPU over a run, and what processes other than the client and the server
/// used of it.
pub fn host_cpu(busy_s: f64, client_s: f64, server_s: Option<f64>, elapsed_s: f64) -> HostCpu {
    let busy_s = busy_s.max(0.0);
    let others_s = (busy_s - client_s - server_s.unwrap_or(0.0)).max(0.0);
    HostCpu {
        busy_s,
        others_s,
        others_cpus: others_s / elapsed_s.max(1e-9),
    }
}

/// One sample of what `host_cpu` compares, for a span of any shape (a sweep's run, a
/// sql-bench operation, a compression load, an iiBench window): the host's busy CPU, this
/// process's CPU and the server's, and when.
#[derive(Debug, Clone, Copy)]
pub struct HostSample {
    pub at: std::time::Instant,
    pub busy_s: f64,
    pub client: CpuTimes,
    /// The server process tree (when its pid is known and it is alive).
    pub server: Option<ProcSample>,
}

impl HostSample {
    pub fn now(server_pid: Option<u32>) -> HostSample {
        HostSample {
            at: std::time::Instant::now(),
            busy_s: proc::host_busy_s(),
            client: CpuTimes::now(),
            server: server_pid.and_then(ProcSample::of_tree),
        }
    }

    /// What other processes used from `earlier` to this sample.
    pub fn host_cpu_since(&self, earlier: &HostSample) -> HostCpu {
        let server_s = match (earlier.server, self.server) {
            (Some(a), Some(b)) => Some((b.cpu_s() - a.cpu_s()).max(0.0)),
            _ => None,
        };
        host_cpu(
            self.busy_s - earlier.busy_s,
            self.client.since(earlier.client).total_s(),
            server_s,
            self.at.duration_since(earlier.at).as_secs_f64(),
        )
    }
}

/// Counters that moved between two reads (after minus before).
pub fn delta(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .filter_map(|(k, a)| {
            let d = a - before.get(k).copied().unwrap_or(0.0);
            (d != 0.0).then(|| (k.clone(), d))
        })
        .collect()
}

/// What a measured run counted, whatever drove it (a sweep's phase, a schema-change
/// timeline, an iiBench run): what the harness makes the run's record of.
pub struct Counted<'a> {
    pub run: u32,
    pub ops: u64,
    pub rows: u64,
    pub statements: u64,
    pub elapsed_s: f64,
    pub errors: &'a ErrorCounts,
    pub error_samples: &'a [String],
    pub hist: &'a LatencyHist,
    pub client_cpu: CpuTimes,
    pub workers_lost: usize,
    pub interrupted: bool,
}

/// What a phase that a workload drives itself counted (the body of `Harness::measure` returns
/// it): the harness adds the time, the CPU of the client, the server and the host, the
/// server's counters and the disturbance.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub ops: u64,
    pub rows: u64,
    pub statements: u64,
    pub errors: ErrorCounts,
    /// A few of the errors' messages.
    pub error_samples: Vec<String>,
    /// The operations' latencies (`LatencyHist::record_us`).
    pub hist: LatencyHist,
    pub workers_lost: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disturbed_needs_share_and_seconds() {
        // 0.5 CPU over 10 s: disturbed; over 50 ms its 25 ms are within the ticks' rounding.
        assert!(disturbed(0.5, 10.0));
        assert!(!disturbed(0.5, 0.05));
        // Below the share, however long.
        assert!(!disturbed(0.09, 1000.0));
        let a = HostSample::now(None);
        let b = HostSample::now(None);
        let h = b.host_cpu_since(&a);
        assert!(h.others_s >= 0.0 && h.others_cpus >= 0.0);
    }
}
