//! What a phase reports per interval: counts, latencies and the operations of each kind.

use std::collections::BTreeMap;

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
