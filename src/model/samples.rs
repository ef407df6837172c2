//! What a phase reports per interval: counts, latencies and the operations of each kind; and
//! a phase's label (`PhaseInfo`), which the live outputs show beside them.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::measure::{ErrorCounts, LatencySummary};

/// Operations of one kind in one interval (indexed like `Workload::kinds()`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KindTick {
    pub ops: u64,
    pub rolled_back: u64,
}

/// One finished interval of a phase: counts add across workers (and across machines).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct IntervalSample {
    /// End of the interval, seconds from the start of the phase.
    pub t_s: f64,
    pub ops: u64,
    pub errors: u64,
    pub ops_per_s: f64,
    pub latency_us: LatencySummary,
    /// Operations per kind in this interval, by kind name (workloads with several kinds).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_kind: BTreeMap<String, KindTick>,
    /// Figures the workload derives from the interval, by name (TPC-C: "tpm_c").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub figures: BTreeMap<String, f64>,
    /// Per kind, indexed like `Workload::kinds()`; named into `by_kind` by the caller.
    #[serde(skip)]
    pub kind_ticks: Vec<KindTick>,
    /// The interval's errors by class (the live metrics count them per class).
    #[serde(skip)]
    pub error_classes: ErrorCounts,
    /// Length of the interval (the last one of a phase may be shorter).
    #[serde(skip)]
    pub len_s: f64,
    /// The load step (from 1) the interval's middle falls in, for a run with steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
}

/// What a phase is, as the live outputs name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    Warmup,
    Run,
}

impl PhaseKind {
    pub fn name(self) -> &'static str {
        match self {
            PhaseKind::Warmup => "warmup",
            PhaseKind::Run => "run",
        }
    }
}

/// A phase's label for the live outputs.
#[derive(Debug, Clone)]
pub struct PhaseInfo {
    pub kind: PhaseKind,
    pub operation: String,
    pub threads: usize,
    /// Measured run number, from 1 (0 in a warm-up), and how many there are.
    pub run: u32,
    pub runs: u32,
    /// The length the progress line counts to (None: bounded by operations only).
    pub planned: Option<Duration>,
    /// Seconds from the start of the measured run to the start of this phase: a run made of
    /// several phases (iibench's windows, schema-change's chunks) counts its time as one.
    pub offset_s: f64,
    /// Drawn on the terminal and shown as the current phase; false for a phase that runs
    /// beside another one (iibench's query connections), which is still counted.
    pub shown: bool,
}

impl PhaseInfo {
    /// A shown phase without offset.
    pub fn new(kind: PhaseKind, operation: &str, threads: usize, run: (u32, u32)) -> Self {
        PhaseInfo {
            kind,
            operation: operation.to_string(),
            threads,
            run: run.0,
            runs: run.1,
            planned: None,
            offset_s: 0.0,
            shown: true,
        }
    }
    pub fn planned(mut self, d: Duration) -> Self {
        // A century is the runner's "no time limit".
        self.planned = (d < Duration::from_secs(365 * 86_400)).then_some(d);
        self
    }
}
