//! A merged fleet result (`enginebench merge`): each shard's throughput, CPU and errors per
//! measured run, and which shards were lost.

use std::fmt::Write;

use super::svg::escape;
use crate::model::Labeled;

pub fn section(h: &mut String, rs: &[Labeled]) {
    for r in rs {
        let Some(f) = &r.doc.fleet else { continue };
        let _ = write!(
            h,
            "<h2 id=fleet>Per shard: {}</h2><p class=note>Fleet run {} of {} shards; merged from {} result(s){}; the shards' starts differed by at most {:.3} s. Lost: no figures for that run (the shard failed or was killed before it ended).</p><table><tr><th class=l>operation</th><th>threads</th><th>run</th><th>shard</th><th>ops/s</th><th>ops</th><th>errors</th><th>client µs/op</th><th class=l>state</th></tr>",
            escape(&r.label),
            escape(&f.run_id),
            f.shards,
            f.merged.len(),
            if f.lost.is_empty() {
                String::new()
            } else {
                format!(
                    "; lost: shard(s) {}",
                    f.lost.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                )
            },
            f.max_start_skew_s
        );
        for p in &r.doc.points {
            for run in &p.runs {
                for s in &run.shards {
                    let _ = write!(
                        h,
                        "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{:.1}</td><td class=l>{}</td></tr>",
                        escape(&p.operation),
                        p.threads,
                        run.run,
                        s.shard,
                        s.ops_per_s,
                        s.ops,
                        s.errors_total,
                        s.client_cpu.us_per_op,
                        match (s.lost, s.disturbed) {
                            (true, _) => "lost",
                            (false, true) => "disturbed",
                            _ => "ok",
                        }
                    );
                }
            }
        }
        h.push_str("</table>");
    }
}
