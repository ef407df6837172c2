//! Measurement: per-worker latency histograms (merged off the hot path), outcome counters,
//! per-interval samples, and resource samplers (client CPU, host facts).

pub mod hist;
pub mod host;
pub mod proc;
pub mod profile;
pub mod span;

pub use hist::{LatencyHist, LatencySummary};
pub use span::{
    delta, disturbed, disturbed_above, host_cpu, Counted, HostCpu, HostSample, Tally,
    OTHERS_RESOLUTION_S,
};

use serde::{Deserialize, Serialize};

use crate::error::ErrorClass;

/// A preset of the run method; any flag given explicitly overrides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// About two minutes: 100k rows, threads 1,4,16, 1 s warm-up, 2 runs of 1 s.
    Quick,
    /// The 2007 read report exactly: 1M rows, threads 1,4,16,64,128,256, 180 s warm-up,
    /// 3 runs of 60 s, the maximum kept (about 8 hours for all 13 queries).
    Classic,
}

/// Other processes using more than this many CPUs during a run flag it `disturbed` (the
/// default of `run --disturbed-above`).
pub const DISTURBED_CPUS: f64 = 0.10;

/// Errors counted per class; a fixed array so that counting is one add on the hot path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorCounts(pub [u64; ErrorClass::ALL.len()]);

impl ErrorCounts {
    pub fn add(&mut self, class: ErrorClass) {
        self.0[class.index()] += 1;
    }
    pub fn merge(&mut self, other: &ErrorCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// Only the classes that occurred, by name (what goes into results).
    pub fn to_map(&self) -> std::collections::BTreeMap<&'static str, u64> {
        ErrorClass::ALL
            .iter()
            .filter(|c| self.0[c.index()] > 0)
            .map(|c| (c.name(), self.0[c.index()]))
            .collect()
    }
}

/// CPU time used by this process so far (all threads), and its threads' context switches,
/// from getrusage.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user_s: f64,
    pub sys_s: f64,
    /// Threads that went to sleep (voluntary switches) and were preempted (involuntary).
    #[serde(default)]
    pub voluntary_cs: u64,
    #[serde(default)]
    pub preempted_cs: u64,
}

impl CpuTimes {
    pub fn now() -> Self {
        // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF is always valid.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        if rc != 0 {
            return Self::default();
        }
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Self {
            user_s: tv(ru.ru_utime),
            sys_s: tv(ru.ru_stime),
            voluntary_cs: ru.ru_nvcsw.max(0) as u64,
            preempted_cs: ru.ru_nivcsw.max(0) as u64,
        }
    }
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: self.user_s - earlier.user_s,
            sys_s: self.sys_s - earlier.sys_s,
            voluntary_cs: self.voluntary_cs.saturating_sub(earlier.voluntary_cs),
            preempted_cs: self.preempted_cs.saturating_sub(earlier.preempted_cs),
        }
    }
    /// Add another interval's times and switches to these.
    pub fn add(&mut self, other: CpuTimes) {
        self.user_s += other.user_s;
        self.sys_s += other.sys_s;
        self.voluntary_cs += other.voluntary_cs;
        self.preempted_cs += other.preempted_cs;
    }
    pub fn total_s(self) -> f64 {
        self.user_s + self.sys_s
    }
}
