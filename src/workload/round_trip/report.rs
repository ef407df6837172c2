//! round-trip's part of the outputs: a line under the terminal table that says what the floor
//! is, since every other workload's latency on the same target stands on it.

use super::NAME;
use crate::model::ResultDoc;
use crate::report::terminal::Pick;
use crate::report::SectionOwner;

pub struct RoundTripReport;

pub static REPORT: RoundTripReport = RoundTripReport;

impl SectionOwner for RoundTripReport {
    fn key(&self) -> &'static str {
        NAME
    }
    fn terminal(&self, doc: &ResultDoc, _pick: Pick) -> String {
        doc.points
            .iter()
            .filter(|p| p.workload == NAME && p.aggregate.runs > 0)
            .map(|p| {
                format!(
                    "round-trip floor at {} thread(s): p50 {} us, p99 {} us per statement\n",
                    p.threads, p.aggregate.latency_us.p50_us, p.aggregate.latency_us.p99_us
                )
            })
            .collect()
    }
}
