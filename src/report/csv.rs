//! CSV: one row per measured run, columns derived from the result model.

use super::ResultDoc;

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
