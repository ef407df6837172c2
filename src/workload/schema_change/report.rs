//! schema-change's part of the outputs, from the result's `sections["schema-change"]` (one
//! timeline per algorithm and thread count): the terminal summary of the timelines, and each
//! DDL drawn on the point's throughput-over-time chart.

use serde_json::Value;

use super::{Timeline, NAME};
use crate::model::{Point, ResultDoc};
use crate::report::svg::Series;
use crate::report::terminal::Pick;
use crate::report::SectionOwner;

/// schema-change's part of every output.
pub struct Report;

impl SectionOwner for Report {
    fn key(&self) -> &'static str {
        NAME
    }

    fn claim_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "schema_change.ddl_s",
                "how long the first schema change took (s)",
            ),
            (
                "schema_change.longest_stall_s",
                "the longest stretch without a finished operation (s)",
            ),
        ]
    }

    fn claim_value(
        &self,
        doc: &ResultDoc,
        metric: &str,
        op: Option<&str>,
    ) -> Option<crate::report::MetricValues> {
        let tls: Vec<Timeline> = doc.section(NAME)?;
        let tl = tls
            .iter()
            .find(|t| op.is_none_or(|o| t.algorithm.eq_ignore_ascii_case(o)))?;
        let v = match metric {
            "schema_change.ddl_s" => tl.ddl.iter().find(|d| d.ok)?.duration_s,
            "schema_change.longest_stall_s" => tl.longest_stall_s,
            _ => return None,
        };
        Some(crate::report::MetricValues::Once(v))
    }

    /// The run behind the timeline the claim reads (the first of its algorithm).
    fn claim_disturbed(&self, doc: &ResultDoc, metric: &str, op: Option<&str>) -> Option<bool> {
        if !self.claim_metrics().iter().any(|(n, _)| *n == metric) {
            return None;
        }
        let tls: Vec<Timeline> = doc.section(NAME)?;
        let tl = tls
            .iter()
            .find(|t| op.is_none_or(|o| t.algorithm.eq_ignore_ascii_case(o)))?;
        run_disturbed(doc, tl)
    }

    /// Timelines whose run was disturbed.
    fn disturbed_parts(&self, doc: &ResultDoc) -> usize {
        doc.section::<Vec<Timeline>>(NAME).map_or(0, |tls| {
            tls.iter()
                .filter(|t| run_disturbed(doc, t) == Some(true))
                .count()
        })
    }

    fn terminal(&self, doc: &ResultDoc, _pick: Pick) -> String {
        doc.section::<Vec<Timeline>>(NAME)
            .map(|t| render(doc, &t))
            .unwrap_or_default()
    }

    fn markers(&self, doc: &ResultDoc, point: &Point) -> Vec<Series> {
        ddl_markers(doc, point)
    }

    /// v1 kept the timelines in the document's `schema_change` field.
    fn upgrade_v1(&self, doc: &mut Value) {
        crate::report::move_into(doc, "schema_change", "sections", NAME);
    }
}

/// The point that holds a timeline's run (its throughput series and CPU).
fn point_of<'d>(doc: &'d ResultDoc, t: &Timeline) -> Option<&'d Point> {
    doc.points
        .iter()
        .find(|p| p.operation == t.algorithm && p.threads == t.threads)
}

/// Whether the timeline's run was disturbed (None: its point is missing).
fn run_disturbed(doc: &ResultDoc, t: &Timeline) -> Option<bool> {
    let p = point_of(doc, t)?;
    (!p.runs.is_empty()).then(|| p.runs.iter().any(|r| r.disturbed))
}

/// For the HTML throughput chart: each DDL of the point's timeline as a box from its start to
/// its end, as high as the run's highest interval rate.
fn ddl_markers(doc: &ResultDoc, p: &Point) -> Vec<Series> {
    let Some(t) = doc.section::<Vec<Timeline>>(NAME).and_then(|ts| {
        ts.into_iter()
            .find(|t| t.algorithm == p.operation && t.threads == p.threads)
    }) else {
        return Vec::new();
    };
    let top = p
        .runs
        .iter()
        .flat_map(|r| &r.intervals)
        .map(|i| i.ops_per_s)
        .fold(0.0, f64::max);
    t.ddl
        .iter()
        .map(|d| Series {
            name: if d.statement.contains(" ADD ") {
                "ADD COLUMN".into()
            } else {
                "DROP COLUMN".into()
            },
            points: vec![
                (d.start_s, 0.0),
                (d.start_s, top),
                (d.end_s, top),
                (d.end_s, 0.0),
            ],
        })
        .collect()
}

/// The terminal summary of every timeline, each marked when its run was disturbed.
fn render(doc: &ResultDoc, ts: &[Timeline]) -> String {
    let mut out = String::from("\nschema-change timelines (DDL issued while the workload runs)\n");
    for t in ts {
        let others = point_of(doc, t)
            .and_then(|p| p.runs.iter().find(|r| r.disturbed))
            .map(|r| r.host_cpu.others_cpus);
        out.push_str(&super::render_one(t, others));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostCpu, RunRecord};

    fn timeline(algorithm: &str, threads: usize) -> Timeline {
        Timeline {
            algorithm: algorithm.into(),
            threads,
            engine: "InnoDB".into(),
            during: "oltp_insert".into(),
            table_rows: 1000,
            before_s: 1.0,
            after_s: 1.0,
            elapsed_s: 3.0,
            status: "complete".into(),
            ddl: vec![super::super::DdlEvent {
                statement: "ALTER TABLE sbtest1 ADD COLUMN eb_added INT".into(),
                start_s: 1.0,
                end_s: 1.5,
                duration_s: 0.5,
                ok: true,
                error: None,
                baseline_ops_per_s: 100.0,
                during_ops_per_s: 50.0,
                lost_ops: 25.0,
                lost_fraction: 0.5,
                max_latency_us: 1000,
            }],
            longest_stall_s: 0.2,
            longest_stall_start_s: 1.1,
        }
    }

    fn point(algorithm: &str, threads: usize, others_cpus: f64) -> Point {
        Point {
            workload: NAME.into(),
            operation: algorithm.into(),
            threads,
            runs: vec![RunRecord {
                host_cpu: HostCpu {
                    others_cpus,
                    ..Default::default()
                },
                disturbed: crate::measure::disturbed(others_cpus, 3.0),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn claims_read_their_timelines_run() {
        let mut d = ResultDoc {
            points: vec![point("instant", 4, 0.02), point("copy", 4, 0.6)],
            ..Default::default()
        };
        // "inplace" has no point (a result cut short): unknown.
        d.set_section(
            NAME,
            &vec![
                timeline("instant", 4),
                timeline("copy", 4),
                timeline("inplace", 4),
            ],
        );
        let r = Report;
        let dis = |m: &str, op: &str| r.claim_disturbed(&d, m, Some(op));
        assert_eq!(dis("schema_change.ddl_s", "instant"), Some(false));
        assert_eq!(dis("schema_change.ddl_s", "COPY"), Some(true));
        assert_eq!(dis("schema_change.longest_stall_s", "copy"), Some(true));
        assert_eq!(dis("schema_change.ddl_s", "inplace"), None);
        assert_eq!(dis("schema_change.nope", "copy"), None);
        assert_eq!(r.disturbed_parts(&d), 1);
        let t = r.terminal(&d, Pick::Median);
        let copy = t.lines().find(|l| l.starts_with("copy")).unwrap();
        assert!(copy.contains("DISTURBED (others 0.60 CPU)"), "{t}");
        assert!(!t
            .lines()
            .any(|l| l.starts_with("instant") && l.contains("DISTURBED")));
    }
}
