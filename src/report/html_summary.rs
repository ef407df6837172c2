//! The answer the page opens with: per operation, the result with the highest throughput,
//! every other result's ratio to it with the significance verdict `compare` uses (the server
//! start as the unit: [`super::compare::judge`]), and the server settings that differ. Each
//! result on a page is one server start and a page has no between-start spread, so the
//! verdict says "significance unknown" rather than reading the runs of one start as the noise.

use std::fmt::Write;

use super::compare::{judge, Verdict};
use super::svg::{escape, short};
use super::tables::Cell;
use super::ResultDoc;
use crate::model::mean_var;
use crate::model::Labeled;

/// Server settings named in the summary at most (the fairness section has them all).
const MAX_SETTINGS: usize = 8;

/// One result's best point of an operation: the thread count with the highest mean ops/s
/// over its measured runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Peak {
    /// Index of the result.
    pub result: usize,
    pub threads: usize,
    pub ops_per_s: f64,
}

/// Another result next to the best one.
#[derive(Debug, Clone, PartialEq)]
pub struct Behind {
    pub peak: Peak,
    /// Its ops/s ÷ the best's (≤ 1).
    pub ratio: f64,
    pub verdict: Verdict,
    /// The results (server starts) each side rests on, the best's and this one's.
    pub starts: [usize; 2],
    /// Why significance is unknown, when it is.
    pub why: Option<String>,
}

/// An operation's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Leader {
    pub operation: String,
    pub best: Peak,
    /// The others, in result order.
    pub others: Vec<Behind>,
}

fn peak(doc: &ResultDoc, result: usize, op: &str) -> Option<Peak> {
    doc.points
        .iter()
        .filter(|p| p.operation == op && !p.runs.is_empty())
        .map(|p| {
            let runs: Vec<f64> = p.runs.iter().map(|r| r.ops_per_s).collect();
            Peak {
                result,
                threads: p.threads,
                ops_per_s: mean_var(&runs).0,
            }
        })
        .max_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s))
}

/// Per operation (first-seen order): the best result and the others' ratios to it. The best is
/// the highest mean ops/s at any thread count; the verdict compares the two peaks as
/// `compare` does, one result (one server start) per side and no between-start spread.
pub fn leaders(docs: &[&ResultDoc]) -> Vec<Leader> {
    let mut ops: Vec<&str> = Vec::new();
    for d in docs {
        for p in &d.points {
            if !ops.contains(&p.operation.as_str()) {
                ops.push(&p.operation);
            }
        }
    }
    ops.into_iter()
        .filter_map(|op| {
            let peaks: Vec<Peak> = docs
                .iter()
                .enumerate()
                .filter_map(|(i, d)| peak(d, i, op))
                .collect();
            // The first of equals leads: a tie keeps the results' order.
            let best =
                peaks.iter().cloned().reduce(
                    |a, b| {
                        if b.ops_per_s > a.ops_per_s {
                            b
                        } else {
                            a
                        }
                    },
                )?;
            let others = peaks
                .into_iter()
                .filter(|p| p.result != best.result)
                .map(|p| {
                    let (verdict, basis) =
                        judge("ops_per_s", &[best.ops_per_s], &[p.ops_per_s], None);
                    Behind {
                        ratio: if best.ops_per_s > 0.0 {
                            p.ops_per_s / best.ops_per_s
                        } else {
                            f64::NAN
                        },
                        verdict,
                        starts: basis.starts,
                        why: basis.why,
                        peak: p,
                    }
                })
                .collect();
            Some(Leader {
                operation: op.to_string(),
                best,
                others,
            })
        })
        .collect()
}

/// The summary section.
pub fn section(h: &mut String, rs: &[Labeled]) {
    let docs: Vec<&ResultDoc> = rs.iter().map(|r| r.doc).collect();
    let leaders = leaders(&docs);
    if leaders.is_empty() {
        return;
    }
    h.push_str("<h2 id=summary>Summary</h2>");
    if rs.len() == 1 {
        h.push_str("<p class=note>Per operation: the highest throughput (mean ops/s over the measured runs) and the thread count it was reached at.</p>");
    } else {
        h.push_str("<p class=note>Per operation: the result with the highest throughput (mean ops/s over the measured runs, at its best thread count), and each other result's throughput as a ratio to it. The unit of significance is the server start: each result is one start, and its runs share that start's speed, so their spread cannot tell a difference between results from the difference between two starts of one server. With one start per side and no measured between-start spread the verdict is <i>significance unknown</i>; <code>enginebench compare A B --between-start calibration.json</code> (the spread from <code>enginebench reproduce NAME --calibrate</code>) or a catalog baseline (<code>compare NEW --baseline catalog:last=N</code>) decides it (docs/ci.md).</p>");
    }
    h.push_str("<table data-table=\"summary\" class=sum><tr><th class=l>operation</th><th class=l>best</th><th>ops/s</th>");
    if rs.len() > 1 {
        h.push_str("<th class=l>others ÷ best</th>");
    }
    h.push_str("</tr>");
    for l in &leaders {
        let _ = write!(
            h,
            "<tr><td class=l>{}</td><td class=l><b>{}</b></td><td>{} <span class=note>at {} thr</span></td>",
            escape(&l.operation),
            escape(&rs[l.best.result].label),
            short(l.best.ops_per_s),
            l.best.threads
        );
        if rs.len() > 1 {
            h.push_str("<td class=l>");
            for (i, o) in l.others.iter().enumerate() {
                let _ = write!(
                    h,
                    "{}<span class=\"{}\" title=\"{} ops/s at {} threads; {} server start(s) per side{}\">{}: {:.3}× {}</span>",
                    if i > 0 { "<br>" } else { "" },
                    if o.verdict == Verdict::Significant {
                        "sig"
                    } else {
                        "ns"
                    },
                    short(o.peak.ops_per_s),
                    o.peak.threads,
                    o.starts[0].max(o.starts[1]),
                    o.why
                        .as_deref()
                        .map(|w| format!(": significance unknown ({})", escape(w)))
                        .unwrap_or_default(),
                    escape(&rs[o.peak.result].label),
                    o.ratio,
                    o.verdict.label()
                );
            }
            h.push_str("</td>");
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    settings(h, rs);
}

/// The server settings that differ (or are not at their default), named in one paragraph.
fn settings(h: &mut String, rs: &[Labeled]) {
    if rs.len() < 2 || rs.iter().all(|r| r.doc.target.settings.is_empty()) {
        return;
    }
    let tables = super::html_fairness::tables(rs);
    let Some(t) = tables.iter().find(|t| t.name == "server-settings") else {
        return;
    };
    if t.rows.is_empty() {
        h.push_str("<p class=note>Server settings: none differs between the results.</p>");
        return;
    }
    // The settings table holds text, or nothing where a server lacks the setting.
    let text = |c: &Cell| match c {
        Cell::Text(s) => s.clone(),
        _ => "–".to_string(),
    };
    h.push_str("<p><b>Server settings that differ</b> (* not at its default): ");
    for (i, row) in t.rows.iter().take(MAX_SETTINGS).enumerate() {
        let values: Vec<String> = row[1..].iter().map(text).collect();
        let _ = write!(
            h,
            "{}<code>{}</code> {}",
            if i > 0 { "; " } else { "" },
            escape(&text(&row[0])),
            escape(&values.join(" / "))
        );
    }
    if t.rows.len() > MAX_SETTINGS {
        let _ = write!(
            h,
            "; and {} more (Fairness, below)",
            t.rows.len() - MAX_SETTINGS
        );
    }
    h.push_str("</p>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Point, RunRecord};

    fn doc(points: &[(&str, usize, &[f64])]) -> ResultDoc {
        ResultDoc {
            points: points
                .iter()
                .map(|(op, threads, qps)| Point {
                    operation: op.to_string(),
                    threads: *threads,
                    runs: qps
                        .iter()
                        .map(|q| RunRecord {
                            ops_per_s: *q,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_best_peak_leads_and_the_others_get_ratio_and_verdict() {
        let a = doc(&[
            ("get", 1, &[100.0, 102.0, 98.0]),
            ("get", 4, &[300.0, 310.0, 290.0]),
            ("scan", 1, &[50.0, 51.0, 49.0]),
        ]);
        let b = doc(&[
            ("get", 1, &[150.0, 151.0, 149.0]),
            ("get", 4, &[200.0, 202.0, 198.0]),
            ("scan", 1, &[100.0, 101.0, 99.0]),
            ("scan", 4, &[20.0]),
        ]);
        let c = doc(&[("get", 2, &[295.0, 315.0, 290.0]), ("scan", 1, &[60.0])]);
        let l = leaders(&[&a, &b, &c]);
        assert_eq!(l.len(), 2);
        // get: A at 4 threads (300) ties with C at 2 threads (the first leads) and beats B (200).
        assert_eq!(
            (l[0].operation.as_str(), l[0].best.result, l[0].best.threads),
            ("get", 0, 4)
        );
        assert_eq!(l[0].best.ops_per_s, 300.0);
        let r: Vec<(usize, usize, String)> = l[0]
            .others
            .iter()
            .map(|o| (o.peak.result, o.peak.threads, format!("{:.3}", o.ratio)))
            .collect();
        assert_eq!(r, vec![(1, 4, "0.667".into()), (2, 2, "1.000".into())]);
        // scan: B leads.
        assert_eq!((l[1].best.result, l[1].best.threads), (1, 1));
        assert_eq!(l[1].others[0].ratio, 0.5);
        // Every result is one server start: the 1.5x of get (runs ±1 %), the 2x of scan and
        // a tie all have significance unknown, with the unit and why, whatever the runs.
        for o in l.iter().flat_map(|l| &l.others) {
            assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
            assert_eq!(o.starts, [1, 1]);
            assert_eq!(o.why.as_deref(), Some(crate::report::compare::NO_SPREAD));
        }
    }

    /// The section names the unit and says "significance unknown" for each other result.
    #[test]
    fn the_section_says_the_unit_and_significance_unknown() {
        let a = doc(&[("get", 1, &[100.0, 101.0, 99.0])]);
        let b = doc(&[("get", 1, &[150.0, 151.0, 149.0])]);
        let rs = [
            Labeled {
                label: "a".into(),
                doc: &a,
            },
            Labeled {
                label: "b".into(),
                doc: &b,
            },
        ];
        let mut h = String::new();
        section(&mut h, &rs);
        assert!(
            h.contains("The unit of significance is the server start"),
            "{h}"
        );
        assert!(
            h.contains("a: 0.667× significance unknown</span>")
                && h.contains("1 server start(s) per side: significance unknown (each side is one server start; give --between-start calibration.json or a catalog baseline)"),
            "{h}"
        );
        assert!(!h.contains("class=\"sig\""), "{h}");
    }

    #[test]
    fn one_result_and_points_without_runs() {
        let a = doc(&[("get", 1, &[10.0]), ("idle", 1, &[])]);
        let l = leaders(&[&a]);
        assert_eq!(l.len(), 1, "an operation without runs has no answer");
        assert!(l[0].others.is_empty());
        // Equal peaks: the first result leads.
        let l = leaders(&[&a, &a]);
        assert_eq!(l[0].best.result, 0);
        assert_eq!(l[0].others[0].ratio, 1.0);
    }
}
