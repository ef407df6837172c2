//! CSV: one row per measured run, columns derived from the result model; or one of the
//! report's tables (`--table NAME`), gathered here from the page's sections and the owners'.

use super::tables::Table;
use super::{Owners, ResultDoc};
use crate::model::Labeled;

pub const HEADER: &str = "workload,operation,threads,run,ops,rows,elapsed_s,ops_per_s,errors,\
p50_us,p90_us,p95_us,p99_us,p99_9_us,max_us,mean_us,client_cpu_us_per_op,server_cpu_us_per_op,\
client_cpu_share,written_bytes_per_op,others_cpus,disturbed,client_sleeps_per_op,server_sleeps_per_op";

pub fn to_string(doc: &ResultDoc) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for p in &doc.points {
        for r in &p.runs {
            let l = &r.latency_us;
            let srv = r.server_process.as_ref();
            out.push_str(&format!(
                "{},{},{},{},{},{},{:.3},{:.1},{},{},{},{},{},{},{},{:.1},{:.2},{},{},{},{:.3},{},{},{}\n",
                p.workload,
                p.operation,
                p.threads,
                r.run,
                r.ops,
                r.rows,
                r.elapsed_s,
                r.ops_per_s,
                r.errors_total,
                l.p50_us,
                l.p90_us,
                l.p95_us,
                l.p99_us,
                l.p99_9_us,
                l.max_us,
                l.mean_us,
                r.client_cpu.us_per_op,
                // Empty when the server's pid is not known.
                opt(srv.map(|s| s.cpu_us_per_op), 2),
                opt(r.client_cpu_share, 3),
                opt(srv.map(|s| s.written_bytes_per_op), 1),
                r.host_cpu.others_cpus,
                r.disturbed,
                // Empty when not counted (results from before they were, a server whose pid
                // is not known).
                opt(r.client_cpu.voluntary_cs_per_op, 3),
                opt(srv.and_then(|s| s.voluntary_cs_per_op), 3),
            ));
        }
    }
    out
}

/// An optional figure with `digits` decimals, or an empty cell.
fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|v| format!("{v:.digits$}")).unwrap_or_default()
}

/// Every table the report's sections hold for these results: the generic ones, then
/// each owner's (empty ones left out).
pub fn all(rs: &[Labeled], owners: Owners) -> Vec<Table> {
    let mut t = Vec::new();
    t.extend(super::html_fairness::tables(rs));
    t.extend(super::html_kinds::tables(rs));
    t.extend(super::html_nodes::tables(rs));
    for o in owners {
        t.extend(o.tables(rs));
    }
    t.retain(|x| !x.is_empty());
    t
}

/// The name of every table a report can have, whether or not given results fill it (what
/// `report --help` lists under `--table`): the tables of no results, before empty ones go.
pub fn table_names(owners: Owners) -> Vec<&'static str> {
    let mut t = Vec::new();
    t.extend(super::html_fairness::tables(&[]));
    t.extend(super::html_kinds::tables(&[]));
    t.extend(super::html_nodes::tables(&[]));
    for o in owners {
        t.extend(o.tables(&[]));
    }
    t.iter().map(|x| x.name).collect()
}

/// `report --format csv --table NAME`: the named table of these results as CSV.
pub fn table(docs: &[ResultDoc], name: &str, owners: Owners) -> Result<String, String> {
    let labels = crate::model::labels(docs);
    let rs: Vec<Labeled> = docs
        .iter()
        .zip(labels)
        .map(|(doc, label)| Labeled { label, doc })
        .collect();
    let tables = all(&rs, owners);
    match tables.iter().find(|t| t.name == name) {
        Some(t) => Ok(t.to_csv()),
        None => {
            let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
            Err(if names.is_empty() {
                format!("--table {name}: these results have no such table (they have none besides the runs: leave out --table)")
            } else {
                format!(
                    "--table {name}: these results have no such table; they have: {}",
                    names.join(", ")
                )
            })
        }
    }
}
