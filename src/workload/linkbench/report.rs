//! LinkBench's part of the terminal output: one row per request type, with its ops/s and p99
//! at each thread count, as LinkBench closes a run with per-type statistics (LatencyStats:
//! count and latency percentiles of each operation type, in ms). The numbers come from the
//! runs' `by_kind`; LinkBench has no section of its own in the result.

use std::fmt::Write;

use super::{KINDS, NAME};
use crate::model::{Point, ResultDoc, RunRecord};
use crate::report::terminal::Pick;
use crate::report::SectionOwner;

/// LinkBench's part of every output.
pub struct Report;

impl SectionOwner for Report {
    fn key(&self) -> &'static str {
        NAME
    }

    fn terminal(&self, doc: &ResultDoc, pick: Pick) -> String {
        terminal(doc, pick)
    }

    /// Where the properties came from: they themselves are recorded (`props`) and count.
    fn not_the_work(&self) -> &'static [&'static str] {
        &["config_file"]
    }
}

/// The run a cell shows: the fastest one (`max`) or the median one by ops/s (the lower one
/// for an even count), like the table's aggregate.
fn picked_run(p: &Point, pick: Pick) -> Option<&RunRecord> {
    let mut runs: Vec<&RunRecord> = p.runs.iter().filter(|r| !r.by_kind.is_empty()).collect();
    runs.sort_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s));
    match pick {
        Pick::Max => runs.last().copied(),
        Pick::Median => runs.get(runs.len().saturating_sub(1) / 2).copied(),
    }
}

fn terminal(doc: &ResultDoc, pick: Pick) -> String {
    let points: Vec<&Point> = doc
        .points
        .iter()
        .filter(|p| p.workload == NAME && p.runs.iter().any(|r| !r.by_kind.is_empty()))
        .collect();
    if points.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let mut ops: Vec<&str> = Vec::new();
    for p in &points {
        if !ops.contains(&p.operation.as_str()) {
            ops.push(&p.operation);
        }
    }
    for op in ops {
        let mut cols: Vec<(usize, &RunRecord)> = points
            .iter()
            .filter(|p| p.operation == op)
            .filter_map(|p| Some((p.threads, picked_run(p, pick)?)))
            .collect();
        cols.sort_by_key(|c| c.0);
        let _ = writeln!(
            out,
            "\nlinkbench {op} by request type ({} run of each point; p99 in ms)",
            match pick {
                Pick::Max => "fastest",
                Pick::Median => "median",
            }
        );
        let _ = write!(out, "{:<12}", "threads");
        for (t, _) in &cols {
            let _ = write!(out, " {:>19}", t);
        }
        out.push('\n');
        let _ = write!(out, "{:<12}", "type");
        for _ in &cols {
            let _ = write!(out, " {:>10} {:>8}", "ops/s", "p99");
        }
        out.push('\n');
        // LinkBench's ten types in its order, then any other kind a result holds.
        let mut kinds: Vec<&str> = KINDS.to_vec();
        for (_, r) in &cols {
            for k in r.by_kind.keys() {
                if !kinds.contains(&k.as_str()) {
                    kinds.push(k);
                }
            }
        }
        for kind in kinds {
            if !cols.iter().any(|(_, r)| r.by_kind.contains_key(kind)) {
                continue;
            }
            let _ = write!(out, "{kind:<12}");
            for (_, r) in &cols {
                match r.by_kind.get(kind) {
                    Some(k) => {
                        let rate = k.ops as f64 / r.elapsed_s.max(1e-9);
                        let p99 = if k.ops > 0 {
                            format!("{:.3}", k.latency_us.p99_us as f64 / 1e3)
                        } else {
                            "-".into()
                        };
                        let _ = write!(out, " {rate:>10.1} {p99:>8}");
                    }
                    None => {
                        let _ = write!(out, " {:>10} {:>8}", "-", "-");
                    }
                }
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::KindRecord;

    #[test]
    fn one_row_per_type_and_a_column_pair_per_thread_count() {
        let run = |ops_per_s: f64, getnode: u64| {
            let mut r = RunRecord {
                ops_per_s,
                elapsed_s: 10.0,
                ..Default::default()
            };
            for k in KINDS {
                r.by_kind.insert(k.into(), KindRecord::default());
            }
            let mut g = KindRecord {
                ops: getnode,
                ..Default::default()
            };
            g.latency_us.p99_us = 1500;
            r.by_kind.insert("getnode".into(), g);
            r
        };
        let point = |threads, runs| Point {
            workload: NAME.into(),
            operation: "requests".into(),
            threads,
            runs,
            ..Default::default()
        };
        let doc = ResultDoc {
            points: vec![
                point(1, vec![run(10.0, 100), run(20.0, 200), run(30.0, 300)]),
                point(4, vec![run(50.0, 500)]),
            ],
            ..Default::default()
        };
        let t = terminal(&doc, Pick::Median);
        let rows: Vec<&str> = t.lines().filter(|l| l.starts_with("getnode")).collect();
        assert_eq!(rows.len(), 1, "{t}");
        // Median run of threads 1 (200 ops in 10 s), the one run of threads 4.
        assert!(rows[0].contains("20.0") && rows[0].contains("50.0"), "{t}");
        assert!(rows[0].contains("1.500"), "{t}");
        assert_eq!(t.lines().filter(|l| l.starts_with("addlink")).count(), 1);
        let max = terminal(&doc, Pick::Max);
        assert!(
            max.lines()
                .any(|l| l.starts_with("getnode") && l.contains("30.0")),
            "{max}"
        );
        // Other workloads: nothing.
        let mut other = doc.clone();
        other
            .points
            .iter_mut()
            .for_each(|p| p.workload = "tpcc".into());
        assert_eq!(terminal(&other, Pick::Max), "");
    }
}
