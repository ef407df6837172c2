//! The suite's summary (`summary.md`).

use super::*;

pub(super) fn f(v: &serde_json::Value) -> Option<f64> {
    v.as_f64()
}

/// The suite's summary (Markdown): the claims and their verdicts, ops/s per operation × cell,
/// CPU per op and client share, and the settings that differ between the servers (or are
/// equal but not default).
pub fn summarize(
    plan: &Plan,
    cells: &[Cell],
    out_dir: &Path,
    passes: u32,
    evals: &[claims::Evaluation],
) -> String {
    let workloads: Vec<&str> = plan.sections.iter().map(|s| s.workload.as_str()).collect();
    let mut s = format!("# Suite {} ({})\n\n", plan.name, workloads.join(", "));
    if let Some(t) = &plan.title {
        s.push_str(&format!("{t}\n\n"));
    }
    s.push_str(&claims::markdown(evals));
    s.push_str("## Cells\n\n| cell | status | operation | threads | ops/s (max) | p95 us | client us/op | server us/op | client share | disturbed runs |\n|---|---|---|---|---|---|---|---|---|---|\n");
    // Settings per server name (first result of each server).
    let mut settings: BTreeMap<String, (BTreeMap<String, String>, Vec<String>)> = BTreeMap::new();
    for c in cells {
        // One row per kept result (every pass and repeat), named so when there are several.
        let mut results = Vec::new();
        for pass in 1..=passes {
            for (i, p) in kept_results(&pass_dir(out_dir, pass).join(&c.name))
                .into_iter()
                .enumerate()
            {
                results.push((pass, i + 1, p));
            }
        }
        if results.is_empty() {
            s.push_str(&format!("| {} | not run | | | | | | | | |\n", c.name));
            continue;
        }
        let several = passes > 1 || plan.sections[c.section].repeats > 1;
        for (pass, n, path) in results {
            let label = if several {
                format!("{} (pass {pass}, #{n})", c.name)
            } else {
                c.name.clone()
            };
            let Some(doc) = std::fs::read_to_string(path.join("result.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            else {
                continue;
            };
            let status = doc["status"].as_str().unwrap_or("?");
            let server_key = format!(
                "{}{}",
                plan.servers[c.server].name(),
                c.engine
                    .as_deref()
                    .map(|e| format!(" {e}"))
                    .unwrap_or_default()
            );
            if let Some(m) = doc["target"]["settings"].as_object() {
                settings.entry(server_key).or_insert_with(|| {
                    (
                        m.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                            .collect(),
                        doc["target"]["settings_non_default"]
                            .as_array()
                            .map(|a| {
                                a.iter()
                                    .filter_map(|x| x.as_str().map(String::from))
                                    .collect()
                            })
                            .unwrap_or_default(),
                    )
                });
            }
            let points = doc["points"].as_array().cloned().unwrap_or_default();
            if points.is_empty() {
                s.push_str(&format!("| {} | {status} | | | | | | | | |\n", label));
            }
            for p in points {
                let a = &p["aggregate"];
                let opt = |v: Option<f64>, scale: f64, digits: usize| {
                    v.map(|x| format!("{:.*}", digits, x * scale))
                        .unwrap_or_else(|| "–".into())
                };
                s.push_str(&format!(
                    "| {} | {status} | {} | {} | {:.0} | {} | {} | {} | {} | {} |\n",
                    label,
                    p["operation"].as_str().unwrap_or(""),
                    p["threads"],
                    f(&a["ops_per_s_max"]).unwrap_or(0.0),
                    a["latency_us"]["p95_us"],
                    opt(f(&a["client_cpu_us_per_op_median"]), 1.0, 1),
                    opt(f(&a["server_cpu_us_per_op_median"]), 1.0, 1),
                    opt(f(&a["client_cpu_share_median"]), 100.0, 0) + "%",
                    a["disturbed_runs"],
                ));
            }
        }
    }
    if settings.len() > 1 {
        let names: Vec<&String> = settings.keys().collect();
        let list: Vec<(&BTreeMap<String, String>, &[String])> = settings
            .values()
            .map(|(v, nd)| (v, nd.as_slice()))
            .collect();
        let d = capture::diff(&list);
        s.push_str("\n## Settings that differ\n\n| setting | ");
        s.push_str(
            &names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(" | "),
        );
        s.push_str(" |\n|---|");
        s.push_str(&"---|".repeat(names.len()));
        s.push('\n');
        for (k, vals) in &d.differ {
            s.push_str(&format!("| {k} | {} |\n", vals.join(" | ")));
        }
        if d.differ.is_empty() {
            s.push_str("\n(none: the same server settings everywhere)\n");
        }
        s.push_str("\n## Settings equal everywhere but not at their default\n\n");
        for (k, v) in &d.equal_non_default {
            s.push_str(&format!("- {k} = {v}\n"));
        }
    } else if let Some((_, (vals, nd))) = settings.iter().next() {
        s.push_str("\n## Settings not at their default\n\n");
        for k in nd {
            s.push_str(&format!(
                "- {k} = {}\n",
                vals.get(k).map(String::as_str).unwrap_or("")
            ));
        }
    }
    s
}
