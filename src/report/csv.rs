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
                r.server_process
                    .as_ref()
                    .map(|s| format!("{:.2}", s.cpu_us_per_op))
                    .unwrap_or_default(),
                r.client_cpu_share
                    .map(|s| format!("{s:.3}"))
                    .unwrap_or_default(),
                r.server_process
                    .as_ref()
                    .map(|s| format!("{:.1}", s.written_bytes_per_op))
                    .unwrap_or_default(),
                r.host_cpu.others_cpus,
                r.disturbed,
                // Empty when not counted (results from before they were, a server whose pid
                // is not known).
                sleeps(r.client_cpu.voluntary_cs_per_op),
                sleeps(
                    r.server_process
                        .as_ref()
                        .and_then(|s| s.voluntary_cs_per_op)
                ),
            ));
        }
    }
    out
}

fn sleeps(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.3}")).unwrap_or_default()
}
