//! schema-change's part of the outputs, from the result's `sections["schema-change"]` (one
//! timeline per algorithm and thread count): the terminal summary of the timelines, and each
//! DDL drawn on the point's throughput-over-time chart.

use serde_json::Value;

use super::{Timeline, NAME};
use crate::report::svg::Series;
use crate::report::terminal::Pick;
use crate::report::{Point, ResultDoc, SectionOwner};

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

    fn terminal(&self, doc: &ResultDoc, _pick: Pick) -> String {
        doc.section::<Vec<Timeline>>(NAME)
            .map(|t| render(&t))
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

/// The terminal summary of every timeline.
fn render(ts: &[Timeline]) -> String {
    let mut out = String::from("\nschema-change timelines (DDL issued while the workload runs)\n");
    for t in ts {
        out.push_str(&super::render_one(t));
    }
    out
}
