//! `enginebench reproduce NAME --calibrate`: the claims' statistics applied to comparisons that
//! are false by construction.
//!
//! The plan's first server is started as two "servers", `a` and `b`, in every pass; each
//! section keeps its first engine and variant; every operation at every thread count is then
//! compared between `a` and `b` with the claims' own rule (`a > b`, no band), as if they were
//! two engines. Nothing differs but the server start, so every comparison the rule calls
//! significant is a false verdict: their share is the rule's real false-direction rate, which
//! must not exceed its nominal 5 %. It is shown for every number of passes from 2 on (the
//! same results read with the first N passes) and for the sequential rule of
//! `--until-decided`, with a 95 % interval, and beside it the two variance components the
//! intervals rest on.

use std::path::Path;

use serde::Serialize;

use super::claims::{self, Claim, Design, Look};
use super::evidence;
use super::plan::{Cell, Plan};
use crate::error::{Error, Result};
use crate::report::Owners;

/// The A/A plan made from a report's plan (already at its scale).
pub fn plan(of: &Plan) -> Result<Plan> {
    let Some(first) = of.servers.iter().find(|s| s.server.is_some()).cloned() else {
        return Err(Error::usage(format!(
            "plan {}: --calibrate needs a server the suite starts (`server = \"mariadb:PROFILE\"`): a server given by URL cannot be started twice",
            of.name
        )));
    };
    let first_name = first.name();
    let mut p = of.clone();
    p.name = format!("{}-calibration", of.name);
    p.title = of.title.as_ref().map(|t| format!("A/A calibration of {t}"));
    p.servers = ["a", "b"]
        .iter()
        .map(|n| super::ServerEntry {
            name: Some(n.to_string()),
            ..first.clone()
        })
        .collect();
    p.sections
        .retain(|s| s.servers.is_empty() || s.servers.contains(&first_name));
    for s in &mut p.sections {
        s.servers.clear();
        s.engines.truncate(1);
        s.variants.truncate(1);
    }
    p.calibrates = std::mem::take(&mut p.claims);
    p.single = false;
    if p.sections.is_empty() {
        return Err(Error::usage(format!(
            "plan {}: no section runs on its first server {first_name}: nothing to calibrate",
            of.name
        )));
    }
    Ok(p)
}

/// One A/A comparison and what the rule made of it.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub id: String,
    /// What it compares: ops_per_s of one operation, or a metric the report's claims read.
    pub metric: String,
    pub ratio: Option<f64>,
    pub ci: Option<[f64; 2]>,
    pub starts: Option<usize>,
    pub between_start_sd: Option<f64>,
    pub within_start_sd: Option<f64>,
    /// Called significant (either way) with the first N passes, for N = 2, 3, ... (N left
    /// out where those passes give the comparison fewer than two starts).
    pub significant_with: Vec<(u32, bool)>,
    /// Called significant by the sequential rule over every pass.
    pub significant_sequential: bool,
    /// a/b of each start.
    pub per_start: Vec<f64>,
    pub why: String,
}

/// The false-direction rate over the comparisons.
#[derive(Debug, Clone, Serialize)]
pub struct Rate {
    /// "2 passes", ..., "sequential".
    pub design: String,
    pub significant: usize,
    pub compared: usize,
    pub rate: f64,
    pub ci95: [f64; 2],
}

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub plan: String,
    pub passes: u32,
    pub nominal_alpha: f64,
    pub rates: Vec<Rate>,
    /// Medians over the comparisons at every pass: the spread of one start's log a/b between
    /// starts, and within a start.
    pub median_between_start_sd: Option<f64>,
    pub median_within_start_sd: Option<f64>,
    pub comparisons: Vec<Comparison>,
    /// Sections with neither per-operation points nor a claim of the report reading them.
    pub not_calibrated: Vec<String>,
    /// The spread of one start pair's log a/b (a/b of `ops_per_s` between two server starts of
    /// one configuration, each side one start), pooled over every ops_per_s comparison with at least
    /// two starts: sqrt(Σ (d − d̄)² / Σ (starts − 1)), and its degrees of freedom. What a
    /// comparison of two results, each one server start, must allow for (`compare
    /// --between-start calibration.json`).
    pub pooled_start_sd: Option<f64>,
    pub pooled_df: usize,
}

/// The A/A claims: every operation that `a`'s results measured, at each thread count of each
/// section.
fn aa_claims(
    p: &Plan,
    cells: &[Cell],
    doc_of: &dyn Fn(&Cell) -> Vec<claims::CellDoc>,
) -> (Vec<Claim>, Vec<String>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for (si, s) in p.sections.iter().enumerate() {
        let section = if s.name.is_empty() {
            &s.workload
        } else {
            &s.name
        };
        let mut any = false;
        for &t in &s.threads {
            let Some(cell) = cells
                .iter()
                .find(|c| c.section == si && c.threads == t && p.servers[c.server].name() == "a")
            else {
                continue;
            };
            let mut ops: Vec<String> = Vec::new();
            for d in doc_of(cell) {
                for pt in &d.doc.points {
                    if pt.threads == t && !ops.contains(&pt.operation) {
                        ops.push(pt.operation.clone());
                    }
                }
            }
            for op in ops {
                any = true;
                let text = format!(
                    "id = {id:?}\nsays = \"A/A: the same server configuration, started twice\"\nsection = {section:?}\nmetric = \"ops_per_s\"\noperation = {op:?}\na = {{ server = \"a\" }}\nb = {{ server = \"b\" }}\nthreads = [{t}]\nexpect = \"a > b\"\n",
                    id = format!("{section}/{op}/{t}")
                );
                if let Ok(c) = toml::from_str::<Claim>(&text) {
                    out.push(c);
                }
            }
        }
        // The metrics the report's claims read on this section beyond an operation's
        // ops_per_s (sql-bench's seconds per operation, load times, sizes, stalls): each
        // compared A/A as its claims compare it, at their thread counts.
        // (ops_per_s where the section has per-operation points is compared above.)
        let per_operation = any;
        for c in p.calibrates.iter().filter(|c| {
            c.section.as_deref().unwrap_or(&s.workload) == section.as_str()
                && !(c.metric == "ops_per_s" && (c.operation.is_some() || per_operation))
        }) {
            let id = format!(
                "{section}/{}{}{}",
                c.metric,
                c.operation
                    .as_ref()
                    .map(|o| format!("/{o}"))
                    .unwrap_or_default(),
                c.threads
                    .iter()
                    .map(|t| format!("/{t}"))
                    .collect::<String>()
            );
            if out.iter().any(|o: &Claim| o.id == id) {
                continue;
            }
            let text = format!(
                "id = {id:?}\nsays = \"A/A: the same server configuration, started twice\"\nmetric = \"x\"\na = {{ server = \"a\" }}\nb = {{ server = \"b\" }}\nexpect = \"a > b\"\n"
            );
            let Ok(mut aa) = toml::from_str::<Claim>(&text) else {
                continue;
            };
            aa.section = Some(section.clone());
            aa.metric = c.metric.clone();
            aa.operation = c.operation.clone();
            aa.threads = c.threads.clone();
            any = true;
            out.push(aa);
        }
        if !any {
            skipped.push(section.clone());
        }
    }
    (out, skipped)
}

/// Judge every A/A comparison the results in `out_dir` allow.
pub fn evaluate(p: &Plan, out_dir: &Path, owners: Owners) -> Calibration {
    let cells = p.cells();
    let passes = super::passes_on_disk(out_dir);
    let doc_of = |c: &Cell| super::cell_docs(out_dir, c, passes, owners);
    let (aa, not_calibrated) = aa_claims(p, &cells, &doc_of);
    let mut plan = p.clone();
    plan.claims = aa.clone();
    let significant = |e: &claims::Evaluation| e.outcome.decided();
    let mut comparisons = Vec::new();
    for c in &aa {
        let all = c.evaluate(&plan, &cells, &doc_of, owners, Look::ALL);
        let pair = all.pairs.first();
        let significant_with = (2..=passes)
            .map(|k| {
                let e = c.evaluate(
                    &plan,
                    &cells,
                    &doc_of,
                    owners,
                    Look {
                        max_pass: k,
                        alpha: claims::ALPHA,
                    },
                );
                (k, e.starts.is_some_and(|n| n >= 2), significant(&e))
            })
            .filter(|x| x.1)
            .map(|(k, _, sig)| (k, sig))
            .collect();
        let seq = claims::evaluate_one(c, &plan, &cells, &doc_of, owners, Design::Sequential);
        comparisons.push(Comparison {
            id: c.id.clone(),
            metric: c.metric.clone(),
            ratio: pair.and_then(|p| p.ratio),
            ci: pair.and_then(|p| p.ci),
            starts: pair.and_then(|p| p.starts),
            between_start_sd: pair.and_then(|p| p.between_start_sd),
            within_start_sd: pair.and_then(|p| p.within_start_sd),
            significant_with,
            significant_sequential: significant(&seq),
            per_start: pair
                .map(|p| p.passes.iter().map(|x| x.ratio).collect())
                .unwrap_or_default(),
            why: all.why.clone(),
        });
    }
    let rate = |design: String, flags: Vec<bool>| {
        let n = flags.len();
        let k = flags.iter().filter(|f| **f).count();
        Rate {
            design,
            significant: k,
            compared: n,
            rate: if n > 0 { k as f64 / n as f64 } else { 0.0 },
            ci95: evidence::wilson(k, n),
        }
    };
    let mut rates: Vec<Rate> = (2..=passes)
        .map(|k| {
            let flags = comparisons
                .iter()
                .filter_map(|c| c.significant_with.iter().find(|x| x.0 == k).map(|x| x.1))
                .collect();
            rate(format!("{k} passes"), flags)
        })
        .collect();
    if passes >= evidence::FIRST_LOOK {
        let flags = comparisons
            .iter()
            .filter(|c| c.starts.is_some_and(|s| s >= 2))
            .map(|c| c.significant_sequential)
            .collect();
        rates.push(rate(
            format!(
                "sequential (looks after passes {}..{passes})",
                evidence::FIRST_LOOK
            ),
            flags,
        ));
    }
    let median = |f: &dyn Fn(&Comparison) -> Option<f64>| {
        let mut v: Vec<f64> = comparisons.iter().filter_map(f).collect();
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| v[v.len() / 2])
    };
    let (mut ss, mut df) = (0.0, 0usize);
    // ops_per_s only: what `compare --between-start` judges with it.
    for c in comparisons.iter().filter(|c| c.metric == "ops_per_s") {
        let logs: Vec<f64> = c
            .per_start
            .iter()
            .filter(|r| **r > 0.0)
            .map(|r| r.ln())
            .collect();
        if logs.len() >= 2 {
            let (_, var) = evidence::mean_var(&logs);
            ss += var * (logs.len() - 1) as f64;
            df += logs.len() - 1;
        }
    }
    Calibration {
        pooled_start_sd: (df > 0).then(|| (ss / df as f64).sqrt()),
        pooled_df: df,
        plan: p.name.clone(),
        passes,
        nominal_alpha: claims::ALPHA,
        median_between_start_sd: median(&|c| c.between_start_sd),
        median_within_start_sd: median(&|c| c.within_start_sd),
        rates,
        comparisons,
        not_calibrated,
    }
}

/// The calibration in Markdown.
pub fn markdown(c: &Calibration) -> String {
    let pct = |x: f64| format!("{:.1} %", x * 100.0);
    let mut s = format!(
        "# A/A calibration: {}\n\nOne server configuration started twice per pass (`a` and `b`), every operation x thread count compared between them with the claims' rule as if they were two engines: every comparison called significant is false. Nominal level {}. {} pass(es).\n\n",
        c.plan,
        pct(c.nominal_alpha),
        c.passes
    );
    s.push_str("| design | called significant | compared | false-direction rate | 95 % interval |\n|---|--:|--:|--:|---|\n");
    for r in &c.rates {
        s.push_str(&format!(
            "| {} | {} | {} | {} | [{}, {}] |\n",
            r.design,
            r.significant,
            r.compared,
            pct(r.rate),
            pct(r.ci95[0]),
            pct(r.ci95[1])
        ));
    }
    if c.rates.is_empty() {
        s.push_str("| (fewer than 2 passes: no interval rests on server starts) | | | | |\n");
    }
    s.push_str(&format!(
        "\nThe comparisons of one pass share its two server starts, so they are not independent: the interval above (Wilson's, as if they were) is narrower than the truth.\n\nVariance of one start's log a/b, as a standard deviation (median over the comparisons): between server starts {}, within a start (from its runs) {}. Pooled over every ops_per_s comparison, one start pair's log a/b varies by {} ({} degrees of freedom): what a comparison of two results, each one server start, must allow for.\n\n",
        c.median_between_start_sd.map(pct).unwrap_or_else(|| "–".into()),
        c.median_within_start_sd.map(pct).unwrap_or_else(|| "–".into()),
        c.pooled_start_sd.map(pct).unwrap_or_else(|| "–".into()),
        c.pooled_df,
    ));
    if !c.not_calibrated.is_empty() {
        s.push_str(&format!(
            "Not calibrated (neither per-operation points nor a claim of the report reading them): {}.\n\n",
            c.not_calibrated.join(", ")
        ));
    }
    s.push_str("| comparison | a/b | 95 % CI | starts | between | within | significant |\n|---|--:|---|--:|--:|--:|---|\n");
    for x in &c.comparisons {
        let sig: Vec<String> = x
            .significant_with
            .iter()
            .filter(|(_, s)| *s)
            .map(|(k, _)| format!("{k} passes"))
            .chain(x.significant_sequential.then(|| "sequential".to_string()))
            .collect();
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            x.id,
            x.ratio
                .map(|r| format!("{r:.3}"))
                .unwrap_or_else(|| "–".into()),
            x.ci.map(|[l, h]| format!("[{l:.3}, {h:.3}]"))
                .unwrap_or_else(|| x.why.clone()),
            x.starts
                .map(|n| n.to_string())
                .unwrap_or_else(|| "–".into()),
            x.between_start_sd.map(pct).unwrap_or_else(|| "–".into()),
            x.within_start_sd.map(pct).unwrap_or_else(|| "–".into()),
            if sig.is_empty() {
                "no".into()
            } else {
                sig.join(", ")
            }
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Point, ResultDoc, RunRecord, Status};

    const PLAN: &str = r#"
name = "t"
[[servers]]
server = "mariadb:small"
[[sections]]
name = "read"
workload = "micro-read"
engines = ["InnoDB", "MyISAM"]
threads = [1, 4]
"#;

    #[test]
    fn the_aa_plan_starts_one_server_twice_with_one_engine() {
        let p = Plan::from_text(PLAN, "t.toml", false).unwrap();
        let aa = plan(&p).unwrap();
        let names: Vec<String> = aa.servers.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(aa.servers[0].server, aa.servers[1].server);
        let cells = aa.cells();
        assert_eq!(cells.len(), 4, "{cells:?}");
        assert!(cells.iter().all(|c| c.engine.as_deref() == Some("InnoDB")));
    }

    /// A section without per-operation points (sql-bench: seconds per operation) is
    /// calibrated on the metrics the report's claims read there, each once, and only the
    /// ops_per_s comparisons make the pooled between-start spread.
    #[test]
    fn the_aa_plan_compares_the_metrics_the_reports_claims_read() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/plans/sqlbench-sysbench-2009.toml"
        ))
        .unwrap();
        let of = Plan::from_text(&text, "sqlbench-sysbench-2009.toml", true).unwrap();
        let p = plan(&of).unwrap();
        assert!(p.claims.is_empty());
        let (aa, skipped) = aa_claims(&p, &p.cells(), &|_| Vec::new());
        let ids: Vec<&str> = aa.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.contains(&"sqlbench/sqlbench.op_s:insert"), "{ids:?}");
        assert!(ids.contains(&"sqlbench/sqlbench.total_s"), "{ids:?}");
        assert!(ids.contains(&"sysbench/load_s"), "{ids:?}");
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
        assert!(!skipped.contains(&"sqlbench".to_string()), "{skipped:?}");
        assert!(aa.iter().all(|c| c.a.server.as_deref() == Some("a")
            && c.b.server.as_deref() == Some("b")
            && c.figure_ratio.is_none()
            && c.needs_server.is_none()));
    }

    /// Simulated A/A passes: each start has a speed of its own (±15 %), shared by all its
    /// cells, and runs that agree within it. The rule must call few of the comparisons
    /// significant with three passes, where pooling every run called most of them.
    #[test]
    fn a_simulated_aa_check_stays_near_its_level() {
        let p = plan(&Plan::from_text(PLAN, "t.toml", false).unwrap()).unwrap();
        let cells = p.cells();
        let mut rng = crate::rng::Rng::new(7);
        // A standard normal draw (Box-Muller).
        let mut normal = move || {
            let u =
                |r: &mut crate::rng::Rng| ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let (u1, u2) = (u(&mut rng), u(&mut rng));
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        };
        // Speed of each (pass, server) start, and per (pass, cell, op) runs.
        let mut docs: std::collections::BTreeMap<(String, u32), ResultDoc> = Default::default();
        let mut total = 0;
        let mut significant = 0;
        for trial in 0..40u32 {
            docs.clear();
            for pass in 1..=3u32 {
                let speed: Vec<f64> = (0..2).map(|_| 1.0 + 0.15 * normal()).collect();
                for c in &cells {
                    let s = speed[c.server];
                    let points = ["Q1", "Q2"]
                        .iter()
                        .map(|op| Point {
                            operation: op.to_string(),
                            threads: c.threads,
                            runs: (0..3)
                                .map(|_| RunRecord {
                                    ops: 1000,
                                    ops_per_s: 1000.0 * s * (1.0 + 0.01 * normal()),
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        })
                        .collect();
                    docs.insert(
                        (c.name.clone(), pass),
                        ResultDoc {
                            status: Status::Complete,
                            points,
                            ..Default::default()
                        },
                    );
                }
            }
            let doc_of = |c: &Cell| -> Vec<claims::CellDoc> {
                docs.iter()
                    .filter(|((n, _), _)| *n == c.name)
                    .map(|((_, pass), d)| claims::CellDoc {
                        pass: *pass,
                        doc: d.clone(),
                    })
                    .collect()
            };
            let (aa, _) = aa_claims(&p, &cells, &doc_of);
            let mut plan = p.clone();
            plan.claims = aa.clone();
            // One comparison per trial (the others share its starts).
            let e = aa[trial as usize % aa.len()].evaluate(&plan, &cells, &doc_of, &[], Look::ALL);
            total += 1;
            significant += e.outcome.decided() as usize;
        }
        // 40 independent A/A comparisons at 5 %: about 2 expected; 7 or more has a
        // probability below 1 %.
        assert!(
            significant <= 6,
            "{significant} of {total} called significant"
        );
    }
}
