//! The terminal table, like the read report's raw-numbers table: operations down, thread
//! counts across, aggregate ops/s in each cell. For operations of several statements (the
//! sysbench transactions) the ops/s row is transactions per second (sysbench's tps) and a
//! second row gives statements per second (sysbench's qps).

use super::ResultDoc;

/// Which aggregate goes in the cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Pick {
    Max,
    Median,
}

pub fn render(doc: &ResultDoc, pick: Pick) -> String {
    let mut ops: Vec<&str> = Vec::new();
    let mut threads: Vec<usize> = Vec::new();
    for p in &doc.points {
        if !ops.contains(&p.operation.as_str()) {
            ops.push(&p.operation);
        }
        if !threads.contains(&p.threads) {
            threads.push(p.threads);
        }
    }
    threads.sort_unstable();
    let w0 = ops.iter().map(|o| o.len()).max().unwrap_or(9).max(9);
    let mut out = format!(
        "{} ops/s ({} of {} run(s)), {} {}\n",
        doc.points
            .first()
            .map(|p| p.workload.as_str())
            .unwrap_or("-"),
        match pick {
            Pick::Max => "max",
            Pick::Median => "median",
        },
        doc.points.first().map(|p| p.runs.len()).unwrap_or(0),
        doc.target.dbms,
        if doc.target.engine.is_empty() {
            String::new()
        } else {
            format!("({})", doc.target.engine)
        }
    );
    out.push_str(&format!("{:<w0$}", "threads"));
    for t in &threads {
        out.push_str(&format!(" {t:>10}"));
    }
    out.push('\n');
    for op in ops {
        out.push_str(&format!("{op:<w0$}"));
        for t in &threads {
            let cell = doc
                .points
                .iter()
                .find(|p| p.operation == op && p.threads == *t)
                .map(|p| match pick {
                    Pick::Max => p.aggregate.ops_per_s_max,
                    Pick::Median => p.aggregate.ops_per_s_median,
                });
            match cell {
                Some(v) => out.push_str(&format!(" {:>10.0}", v)),
                None => out.push_str(&format!(" {:>10}", "-")),
            }
        }
        out.push('\n');
        // Operations of several statements (sysbench's transactions): a second row with the
        // statements per second of the same runs, sysbench's "queries per sec.".
        let multi = doc
            .points
            .iter()
            .filter(|p| p.operation == op)
            .flat_map(|p| &p.runs)
            .any(|r| r.statements != r.ops);
        if multi {
            out.push_str(&format!("{:<w0$}", "  queries/s"));
            for t in &threads {
                let cell = doc
                    .points
                    .iter()
                    .find(|p| p.operation == op && p.threads == *t)
                    .map(|p| {
                        let (ops, st) = p
                            .runs
                            .iter()
                            .fold((0u64, 0u64), |a, r| (a.0 + r.ops, a.1 + r.statements));
                        let tps = match pick {
                            Pick::Max => p.aggregate.ops_per_s_max,
                            Pick::Median => p.aggregate.ops_per_s_median,
                        };
                        tps * st as f64 / ops.max(1) as f64
                    });
                match cell {
                    Some(v) => out.push_str(&format!(" {:>10.0}", v)),
                    None => out.push_str(&format!(" {:>10}", "-")),
                }
            }
            out.push('\n');
        }
    }
    // TPC-C's own figures: tpmC and tpmTotal per thread count (same aggregate as the cells).
    for p in &doc.points {
        let tpm: Vec<(f64, f64)> = p
            .runs
            .iter()
            .filter_map(|r| Some((r.tpm_c?, r.tpm_total?)))
            .collect();
        if tpm.is_empty() {
            continue;
        }
        let pick_of = |v: Vec<f64>| match pick {
            Pick::Max => v.iter().copied().fold(0.0, f64::max),
            Pick::Median => super::model::median(&v),
        };
        let c = pick_of(tpm.iter().map(|t| t.0).collect());
        let t = pick_of(tpm.iter().map(|t| t.1).collect());
        out.push_str(&format!(
            "threads {:>4}: tpmC {c:.0}  tpmTotal {t:.0}\n",
            p.threads
        ));
        // TPC-C 5.2.5.3 and 5.2.3: the first failing run's line, or the first run's.
        let checks: Vec<_> = p
            .runs
            .iter()
            .filter_map(|r| r.constraints.as_ref())
            .collect();
        if let Some(first) = checks.first() {
            let passed = checks.iter().filter(|c| c.pass).count();
            let shown = checks.iter().find(|c| !c.pass).unwrap_or(first);
            out.push_str(&format!(
                "threads {:>4}: constraints {passed}/{} runs pass: {}\n",
                p.threads,
                checks.len(),
                crate::workload::tpcc::constraints::summary_line(shown)
            ));
        }
    }
    if let Some(c) = &doc.compression {
        out.push_str(&crate::workload::compression::render(c));
    }
    if let Some(t) = &doc.schema_change {
        out.push_str(&crate::workload::schema_change::render(t));
    }
    out
}
