//! The terminal table, like the read report's raw-numbers table: operations down, thread
//! counts across, aggregate ops/s in each cell. For operations of several statements (the
//! sysbench transactions) the ops/s row is transactions per second (sysbench's tps) and a
//! second row gives statements per second (sysbench's qps).

pub use crate::model::Pick;

use super::{Owners, ResultDoc};

/// The table of one result, then each owner's lines for it.
pub fn render(doc: &ResultDoc, pick: Pick, owners: Owners) -> String {
    // A workload whose results are not points (seconds per operation of a fixed suite) has only its
    // own lines.
    let sections: String = owners.iter().map(|o| o.terminal(doc, pick)).collect();
    if doc.points.is_empty() && !sections.is_empty() {
        return sections;
    }
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
    out.push_str(&steps_and_connections(doc));
    out.push_str(&sections);
    out
}

/// Under the table: each run's load steps (`--threads N@T,...`, `--rate R@T,...`) and its
/// connections' set-up (`--connect per-transaction`), for the runs that have them.
fn steps_and_connections(doc: &ResultDoc) -> String {
    let mut out = String::new();
    for p in &doc.points {
        for r in &p.runs {
            if let Some(c) = &r.connect_per_transaction {
                out.push_str(&format!(
                    "{} at {} threads, run {}: connect per transaction: {} connection(s), set-up p50 {} us, p99 {} us, mean {:.0} us ({:.0}% of the mean latency)\n",
                    p.operation,
                    p.threads,
                    r.run,
                    c.connections,
                    c.setup_us.p50_us,
                    c.setup_us.p99_us,
                    c.setup_us.mean_us,
                    c.setup_share * 100.0
                ));
            }
            if r.steps.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "{} run {}, load steps:\n  {:>4} {:>8} {:>7} {:>10} {:>10} {:>9} {:>9} {:>8}\n",
                p.operation,
                r.run,
                "step",
                "start s",
                "threads",
                "target/s",
                "ops/s",
                "p50 us",
                "p99 us",
                "errors"
            ));
            for st in &r.steps {
                out.push_str(&format!(
                    "  {:>4} {:>8.0} {:>7} {:>10} {:>10.1} {:>9} {:>9} {:>8}\n",
                    st.step,
                    st.start_s,
                    st.threads,
                    st.target_ops_per_s
                        .map_or("-".to_string(), |t| format!("{t:.0}")),
                    st.ops_per_s,
                    st.latency_us.p50_us,
                    st.latency_us.p99_us,
                    st.errors
                ));
            }
        }
    }
    out
}
