//! A result with the label it goes by, which every section of the report reads: the page, its
//! sections, the tables and the workloads' own sections.

use super::{IntervalSample, ResultDoc, RunRecord};

/// A result with the label it goes by in charts and tables.
pub struct Labeled<'a> {
    pub label: String,
    pub doc: &'a ResultDoc,
}

/// Labels that tell results apart: "dbms engine", made unique when two results share one.
pub fn labels(docs: &[ResultDoc]) -> Vec<String> {
    let base: Vec<String> = docs
        .iter()
        .map(|d| {
            let e = &d.target.engine;
            // "sqlite sqlite-btree" says nothing more than "sqlite".
            if e.is_empty() || e.starts_with(&d.target.dbms) {
                d.target.dbms.clone()
            } else {
                format!("{} {}", d.target.dbms, e)
            }
        })
        .collect();
    // Results of several workloads on one server are told apart by their workload first.
    let with_workload: Vec<String> = base
        .iter()
        .zip(docs)
        .map(
            |(b, d)| match d.config.get("workload").and_then(|w| w.as_str()) {
                Some(w) if base.iter().filter(|x| *x == b).count() > 1 => format!("{b} {w}"),
                _ => b.clone(),
            },
        )
        .collect();
    with_workload
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if with_workload.iter().filter(|x| *x == b).count() > 1 {
                format!("{b} #{}", i + 1)
            } else {
                b.clone()
            }
        })
        .collect()
}

/// A run's intervals without a short last one: operations started before the deadline end
/// just after it, and a few milliseconds of them would plot as a meaningless spike or dip.
pub fn full_intervals(run: &RunRecord) -> impl Iterator<Item = &IntervalSample> {
    let nominal = run.intervals.first().map_or(0.0, |i| i.t_s);
    let mut prev = 0.0;
    run.intervals.iter().filter(move |i| {
        let len = i.t_s - prev;
        prev = i.t_s;
        len >= 0.5 * nominal
    })
}
