//! A report's claims as data, and their verdicts computed from the measured results.
//!
//! A claim compares one metric between two selections of cells (`a` and `b`), at each thread
//! count it names: `a > b`, `a < b` or `a ~ b`, with a band for the ratio a/b derived from the
//! report's own figure (`figure_ratio` and a stated `tolerance`, or `min_ratio`/`max_ratio`).
//! Its verdict is computed from the results on disk every time, never stored.
//!
//! The unit of evidence is the server start (a pass): each pass gives one value per side, the
//! two sides of a pass are paired, and the interval of a/b rests on the per-pass ratios
//! (`evidence`). Two judgements are made apart: the *direction* (the claimed way, the other
//! way, or inside the noise: the interval holds 1) and the *size* (a/b inside the band, the
//! whole interval beyond it, or undetermined). The verdict follows from both by one table
//! (`verdict`): `holds`, `holds in direction only`, `not the report's size`, `does not hold`,
//! `not measured` (why: a cell missing, partial or disturbed, one server start, the
//! difference inside the noise), `undecidable here` (the claim needs what this machine or
//! scale lacks). `a ~ b` is decided by two one-sided tests against its band. A side divided by
//! another thread count (`per_threads`) is divided start by start; a side divided by another
//! metric (`per_metric`) gives one value per result.

mod check;
mod detail;
mod judge;
mod metrics;
mod page;
#[cfg(test)]
mod tests;
mod verdict;

use std::collections::BTreeMap;

use serde::Serialize;

pub use super::claim::*;
use super::evidence::{self, Observed, StartValue};
use super::plan::{Cell, Plan};
use crate::model::{Point, ResultDoc, RunRecord, Status};
use crate::report::Owners;

use detail::*;
pub use metrics::*;
pub use page::*;
pub use verdict::*;

/// A claim's verdict at one thread count.
#[derive(Debug, Clone, Serialize)]
pub struct PairEval {
    pub threads: usize,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    /// Means of a and b, and a/b.
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub ratio: Option<f64>,
    /// The confidence interval of a/b at `level` (95 %; 90 % for `a ~ b`, the two one-sided
    /// tests; higher at the later looks of `--until-decided`), from the per-start ratios.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<[f64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<f64>,
    /// Values behind a and b (runs × repeats × passes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<[usize; 2]>,
    /// Server starts (passes) the interval rests on: its unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts: Option<usize>,
    /// The two variance components of log a/b, as standard deviations (≈ relative): between
    /// server starts (beyond what the runs inside a start explain), and within a start (the
    /// standard error of one start's log a/b from its runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub between_start_sd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within_start_sd: Option<f64>,
    /// a/b of each pass (server start).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<PassRatio>,
    pub why: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct PassRatio {
    pub pass: u32,
    pub ratio: f64,
}

/// One counter per operation on both sides.
#[derive(Debug, Clone, Serialize)]
pub struct CounterDiff {
    pub name: String,
    pub a: f64,
    pub b: f64,
}

/// The engine's own status text of a compared cell (SHOW ENGINE ... STATUS at the end of the
/// point read).
#[derive(Debug, Clone, Serialize)]
pub struct EngineStatus {
    pub side: String,
    pub cell: String,
    pub text: String,
}

/// A claim's verdict and the evidence beside it.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    pub id: String,
    pub says: String,
    pub figure: Option<String>,
    /// The band a/b must lie in for the size to hold, and how it came about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band: Option<[Option<f64>; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band_from: Option<String>,
    pub metric: String,
    /// Our own check, not the report's.
    pub ours_check: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contradicts: Option<String>,
    pub outcome: Outcome,
    /// The direction and size levels (over every compared thread count).
    pub direction: Option<Direction>,
    pub size: Option<Size>,
    /// Our figure, e.g. "a/b 1.12 (4 thr), 0.97 (16 thr)".
    pub ours: String,
    pub why: String,
    /// The fewest server starts any compared thread count rests on.
    pub starts: Option<usize>,
    /// The two-sided level the verdict was tested at (0.05: 95 %).
    pub alpha: f64,
    /// `--until-decided`: the passes the verdict was decided at (or the last looked at).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub looks: Option<u32>,
    /// Not decided, and more passes could decide it (every compared cell is in the plan).
    pub open: bool,
    pub pairs: Vec<PairEval>,
    /// Server settings that differ between the compared cells (name, a, b).
    pub settings: Vec<(String, String, String)>,
    /// Server counters per operation that differ most between them.
    pub counters: Vec<CounterDiff>,
    /// SHOW ENGINE ... STATUS of the compared cells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub engine_status: Vec<EngineStatus>,
    /// `--profile-server`: the server functions whose µs/op differ most between the cells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<crate::report::flame::FunctionDiff>,
    /// Their table and the cells' flame graphs, for html().
    #[serde(skip)]
    pub functions_html: String,
}

/// One result of a cell: a cell has one per pass and repeat (`reproduce --passes 2`, a
/// section's `repeats`); a claim pools them.
#[derive(Debug, Clone)]
pub struct CellDoc {
    /// 1 for the first pass, 2 for the second.
    pub pass: u32,
    pub doc: ResultDoc,
}

/// The results of one cell, each with the cell's name.
type NamedDocs = Vec<(String, ResultDoc)>;

/// What evaluating a claim reads: the plan, its cells, where their results are, and the
/// last pass it may read (a look of the sequential rule reads the passes up to its own).
struct Ctx<'a> {
    plan: &'a Plan,
    cells: &'a [Cell],
    si: usize,
    doc_of: &'a dyn Fn(&Cell) -> Vec<CellDoc>,
    owners: Owners<'a>,
    max_pass: u32,
}

/// Everything read for one side at one thread count.
struct Side {
    /// Its value in each server start, or a constant.
    obs: Observed,
    /// Values behind it (runs × repeats × passes).
    n: usize,
    docs: NamedDocs,
    /// Passes left out: their result was partial or disturbed.
    left_out: Vec<u32>,
}

impl Side {
    /// The mean over the starts (a constant: itself).
    fn mean(&self) -> Option<f64> {
        match &self.obs {
            Observed::Constant(c) => Some(*c),
            Observed::Starts(s) if s.is_empty() => None,
            Observed::Starts(s) => Some(s.values().map(|v| v.mean).sum::<f64>() / s.len() as f64),
        }
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

impl Claim {
    /// One side at thread count `t`: its value in each server start (pass), or a constant.
    fn side(&self, cx: &Ctx, sel: &Selector, t: usize) -> Result<Side, String> {
        let Ctx {
            plan,
            cells,
            si,
            doc_of,
            owners,
            max_pass,
        } = *cx;
        if let Some(x) = sel.value {
            return Ok(Side {
                obs: Observed::Constant(x),
                n: 0,
                docs: Vec::new(),
                left_out: Vec::new(),
            });
        }
        let metric = sel.metric.as_deref().unwrap_or(&self.metric);
        let op = sel.operation.as_deref().or(self.operation.as_deref());
        let per = sel.per_metric.as_deref();
        // Passes left out of this side (partial or disturbed).
        let notes: std::cell::RefCell<Vec<u32>> = Default::default();
        // Every value of one cell, by pass: the runs and repeats of one server start
        // together. With `per_metric`, each result gives one value: its metric over the other
        // (the first and last windows of one run are one measurement, not two samples).
        let read = |cell: &Cell, docs: &mut NamedDocs| -> Result<BTreeMap<u32, Vec<f64>>, String> {
            let found: Vec<CellDoc> = doc_of(cell)
                .into_iter()
                .filter(|d| d.pass <= max_pass)
                .collect();
            if found.is_empty() {
                return Err(format!("cell {} has no result", cell.name));
            }
            let mut by_pass: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
            // A start whose measurement is partial or disturbed is left out of the evidence
            // (the other starts still count); with none left, the claim says why.
            let mut left_out: BTreeMap<u32, String> = BTreeMap::new();
            for d in found {
                if left_out.contains_key(&d.pass) {
                    continue;
                }
                if d.doc.status != Status::Complete {
                    by_pass.remove(&d.pass);
                    left_out.insert(
                        d.pass,
                        format!(
                            "cell {} (pass {}) has a result that is {}: a partial result decides nothing",
                            cell.name,
                            d.pass,
                            status_label(&d.doc.status)
                        ),
                    );
                    continue;
                }
                let in_cell = |e: String| format!("cell {}: {e}", cell.name);
                let (mut v, mut disturbed) =
                    doc_values(&d.doc, metric, op, owners).map_err(in_cell)?;
                if let Some(pm) = per {
                    let (w, also) = doc_values(&d.doc, pm, op, owners).map_err(in_cell)?;
                    disturbed |= also;
                    let (mv, mw) = (mean(&v), mean(&w));
                    if mw == 0.0 {
                        return Err(in_cell(format!("{pm} is 0: no ratio")));
                    }
                    v = vec![mv / mw];
                }
                if disturbed {
                    by_pass.remove(&d.pass);
                    left_out.insert(
                        d.pass,
                        format!(
                            "cell {} (pass {}): the measurement of {} this claim reads was disturbed (other processes used the CPU)",
                            cell.name,
                            d.pass,
                            op.unwrap_or(metric)
                        ),
                    );
                    continue;
                }
                by_pass.entry(d.pass).or_default().extend(v);
                docs.push((cell.name.clone(), d.doc));
            }
            if by_pass.is_empty() {
                if let Some(why) = left_out.values().next() {
                    return Err(why.clone());
                }
            }
            for p in left_out.keys() {
                if !notes.borrow().contains(p) {
                    notes.borrow_mut().push(*p);
                }
            }
            Ok(by_pass)
        };
        let starts_of = |by: &BTreeMap<u32, Vec<f64>>| -> BTreeMap<u32, StartValue> {
            by.iter()
                .filter_map(|(p, v)| Some((*p, StartValue::of(v)?)))
                .collect()
        };
        let cell = select(plan, cells, si, sel, t)?;
        let mut docs = Vec::new();
        let by_pass = read(cell, &mut docs)?;
        let mut starts = starts_of(&by_pass);
        let mut n: usize = by_pass.values().map(Vec::len).sum();
        // The divisor: the same selection at another thread count, start by start (both
        // cells ran on the same server process).
        if let Some(pt) = sel.per_threads {
            let base_sel = Selector {
                threads: Some(pt),
                ..sel.clone()
            };
            let bcell = select(plan, cells, si, &base_sel, pt)?;
            let mut bdocs = Vec::new();
            let base = starts_of(&read(bcell, &mut bdocs)?);
            starts = starts
                .into_iter()
                .filter_map(|(p, s)| {
                    let b = base.get(&p)?;
                    (b.mean != 0.0).then(|| (p, s.over(*b)))
                })
                .collect();
            n = n.min(base.values().map(|s| s.n).sum());
            docs.extend(bdocs);
        }
        let mut left_out = notes.into_inner();
        left_out.sort_unstable();
        Ok(Side {
            obs: Observed::Starts(starts),
            n,
            docs,
            left_out,
        })
    }
    /// The claim as the plan states it, not yet judged (`not measured`).
    fn unjudged(&self, look: Look) -> Evaluation {
        let band = self.band();
        Evaluation {
            id: self.id.clone(),
            says: self.says.clone(),
            figure: self.figure.clone(),
            band: band.as_ref().map(|b| b.0),
            band_from: band.as_ref().map(|b| b.1.clone()),
            metric: self.metric.clone(),
            ours_check: self.ours,
            contradicts: self.contradicts.clone(),
            outcome: Outcome::NotMeasured,
            direction: None,
            size: None,
            ours: String::new(),
            why: String::new(),
            starts: None,
            alpha: look.alpha,
            looks: None,
            open: false,
            pairs: Vec::new(),
            settings: Vec::new(),
            counters: Vec::new(),
            engine_status: Vec::new(),
            functions: Vec::new(),
            functions_html: String::new(),
        }
    }

    /// The verdict from the results `doc_of` finds for each cell (every pass and repeat).
    pub fn evaluate(
        &self,
        plan: &Plan,
        cells: &[Cell],
        doc_of: &dyn Fn(&Cell) -> Vec<CellDoc>,
        owners: Owners,
        look: Look,
    ) -> Evaluation {
        let mut eval = self.unjudged(look);
        let si = match self.section_index(plan) {
            Ok(s) => s,
            Err(e) => {
                eval.why = e;
                return eval;
            }
        };
        if let Some(why) = self.missing_server(plan) {
            eval.why = why;
            return eval;
        }
        let threads = self.thread_counts(plan, si);
        let mut evidence: Option<(NamedDocs, NamedDocs)> = None;
        let cx = Ctx {
            plan,
            cells,
            si,
            doc_of,
            owners,
            max_pass: look.max_pass,
        };
        let mut seen_docs: Vec<ResultDoc> = Vec::new();
        for &t in &threads {
            let a = self.side(&cx, &self.a, t);
            let b = self.side(&cx, &self.b, t);
            for s in [&a, &b].into_iter().flatten() {
                seen_docs.extend(s.docs.iter().map(|d| d.1.clone()));
            }
            let pair = match (a, b) {
                (Ok(a), Ok(b)) => {
                    let p = self.judge(t, &a, &b, look.alpha);
                    if evidence.is_none() {
                        evidence = Some((a.docs, b.docs));
                    }
                    p
                }
                (Err(e), _) | (_, Err(e)) => PairEval {
                    threads: t,
                    outcome: Outcome::NotMeasured,
                    direction: None,
                    size: None,
                    a: None,
                    b: None,
                    ratio: None,
                    ci: None,
                    level: None,
                    n: None,
                    starts: None,
                    between_start_sd: None,
                    within_start_sd: None,
                    passes: Vec::new(),
                    why: e,
                },
            };
            eval.pairs.push(pair);
        }
        // What the claim needs is read from every result of the cells it selects, whether
        // they decided anything or not (a disturbed cell still says how many cores it had).
        for &t in &threads {
            for sel in [&self.a, &self.b] {
                if sel.value.is_some() {
                    continue;
                }
                if let Ok(c) = select(plan, cells, si, sel, t) {
                    seen_docs.extend(doc_of(c).into_iter().map(|d| d.doc));
                }
            }
        }
        let refs: Vec<&ResultDoc> = seen_docs.iter().collect();
        if let Some(why) = self.undecidable(&refs, &threads) {
            eval.outcome = Outcome::Undecidable;
            eval.why = why;
        } else {
            let outcomes: Vec<Outcome> = eval.pairs.iter().map(|p| p.outcome).collect();
            let all = |o: Outcome| !outcomes.is_empty() && outcomes.iter().all(|x| *x == o);
            // Over the thread counts: the other way anywhere decides; then any `not measured`;
            // then the weakest verdict.
            eval.outcome = if outcomes.contains(&Outcome::DoesNotHold) {
                Outcome::DoesNotHold
            } else if outcomes.contains(&Outcome::NotMeasured) || outcomes.is_empty() {
                Outcome::NotMeasured
            } else if all(Outcome::Holds) {
                Outcome::Holds
            } else {
                *outcomes
                    .iter()
                    .min_by_key(|o| o.rank())
                    .unwrap_or(&Outcome::NotMeasured)
            };
            // More passes can decide it when every cell it compares is in the plan at this
            // scale and nothing but the evidence is missing.
            eval.open = eval.outcome == Outcome::NotMeasured
                && threads.iter().all(|&t| {
                    [&self.a, &self.b]
                        .iter()
                        .all(|s| s.value.is_some() || self.cells_of(plan, cells, si, s, t).is_ok())
                });
            let several = eval.pairs.len() > 1;
            eval.why = eval
                .pairs
                .iter()
                .find(|p| p.outcome == eval.outcome)
                .or(eval.pairs.first())
                .map(|p| {
                    if several {
                        format!("{} thr: {}", p.threads, p.why)
                    } else {
                        p.why.clone()
                    }
                })
                .unwrap_or_default();
        }
        let (direction, size) = direction_and_size(&eval.pairs);
        (eval.direction, eval.size) = (direction, size);
        eval.starts = eval.pairs.iter().filter_map(|p| p.starts).min();
        eval.ours = ours_text(&eval.pairs);
        if let Some((da, db)) = evidence {
            if let (Some(a), Some(b)) = (da.first(), db.first()) {
                self.add_evidence(&mut eval, a, b);
            }
        }
        eval
    }

    /// What the first compared cells of each side show beside the verdict: the settings and
    /// counters that differ, the server functions, the engine's status.
    fn add_evidence(
        &self,
        eval: &mut Evaluation,
        a: &(String, ResultDoc),
        b: &(String, ResultDoc),
    ) {
        eval.settings = settings_differ(&a.1, &b.1);
        let op_a = self.a.operation.as_deref().or(self.operation.as_deref());
        let op_b = self.b.operation.as_deref().or(self.operation.as_deref());
        eval.counters = counters_differ(&a.1, op_a, &b.1, op_b, 6);
        let prof = |d: &ResultDoc, op| {
            pick_point(d, op)
                .ok()
                .and_then(crate::report::flame::point_profile)
        };
        if let (Some(pa), Some(pb)) = (prof(&a.1, op_a), prof(&b.1, op_b)) {
            use crate::report::flame;
            eval.functions = flame::functions_differ(&pa, &pb, 8);
            eval.functions_html = flame::why_html(&pa, &pb, &eval.functions);
        }
        for (side, (cell, doc), op) in [("a", a, op_a), ("b", b, op_b)] {
            let text = pick_point(doc, op)
                .ok()
                .and_then(|p| p.engine_status.clone())
                .or_else(|| doc.points.iter().find_map(|p| p.engine_status.clone()));
            if let Some(text) = text {
                if !eval
                    .engine_status
                    .iter()
                    .any(|e| e.cell == *cell && e.side != side)
                {
                    eval.engine_status.push(EngineStatus {
                        side: side.into(),
                        cell: cell.clone(),
                        text,
                    });
                }
            }
        }
    }
}

/// The direction and the size over the thread counts, when every one decided its direction.
fn direction_and_size(pairs: &[PairEval]) -> (Option<Direction>, Option<Size>) {
    let decided: Vec<&PairEval> = pairs.iter().filter(|p| p.direction.is_some()).collect();
    if decided.is_empty() || decided.len() != pairs.len() {
        return (None, None);
    }
    let dirs: Vec<Direction> = decided.iter().filter_map(|p| p.direction).collect();
    let direction = Some(if dirs.contains(&Direction::Opposite) {
        Direction::Opposite
    } else if dirs.iter().all(|d| *d == Direction::Claimed) {
        Direction::Claimed
    } else {
        Direction::Unclear
    });
    let sizes: Vec<Size> = decided.iter().filter_map(|p| p.size).collect();
    let size = Some(if sizes.contains(&Size::NoBand) {
        Size::NoBand
    } else if sizes.iter().all(|s| *s == Size::Inside) {
        Size::Inside
    } else if sizes.contains(&Size::Outside) {
        Size::Outside
    } else {
        Size::Undetermined
    });
    (direction, size)
}

/// "a/b 1.42 [1.30, 1.55]", per thread count when there are several.
fn ours_text(pairs: &[PairEval]) -> String {
    let several = pairs.len() > 1;
    pairs
        .iter()
        .filter_map(|p| {
            let r = p.ratio?;
            let ci =
                p.ci.map(|[l, h]| format!(" [{}, {}]", fmt_ratio(l), fmt_ratio(h)))
                    .unwrap_or_default();
            let passes = if p.passes.len() > 1 {
                format!(
                    "; {} starts: {}",
                    p.passes.len(),
                    p.passes
                        .iter()
                        .map(|x| format!("pass {} {}", x.pass, fmt_ratio(x.ratio)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                String::new()
            };
            Some(if several {
                format!("a/b {}{ci} ({} thr{passes})", fmt_ratio(r), p.threads)
            } else if passes.is_empty() {
                format!("a/b {}{ci}", fmt_ratio(r))
            } else {
                format!("a/b {}{ci} ({})", fmt_ratio(r), &passes[2..])
            })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How the passes are judged: once, over all of them (a fixed number of passes), or by the
/// sequential rule of `--until-decided`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Design {
    Fixed,
    /// Looked at after each pass from `evidence::FIRST_LOOK` on, look j at level
    /// `evidence::sequential_alpha(0.05, j)`; a claim keeps the verdict of the first look
    /// that decided it.
    Sequential,
}

/// The nominal two-sided level of every verdict.
pub const ALPHA: f64 = 0.05;

/// Every claim of the plan, evaluated.
pub fn evaluate_all(
    plan: &Plan,
    cells: &[Cell],
    doc_of: &dyn Fn(&Cell) -> Vec<CellDoc>,
    owners: Owners,
    design: Design,
) -> Vec<Evaluation> {
    plan.claims
        .iter()
        .map(|c| evaluate_one(c, plan, cells, doc_of, owners, design))
        .collect()
}

/// One claim under a design.
pub fn evaluate_one(
    c: &Claim,
    plan: &Plan,
    cells: &[Cell],
    doc_of: &dyn Fn(&Cell) -> Vec<CellDoc>,
    owners: Owners,
    design: Design,
) -> Evaluation {
    if design == Design::Fixed {
        return c.evaluate(plan, cells, doc_of, owners, Look::ALL);
    }
    // The passes any compared cell has.
    let last = c
        .cells_compared(plan, cells)
        .iter()
        .flat_map(|cell| doc_of(cell).into_iter().map(|d| d.pass))
        .max()
        .unwrap_or(0);
    let mut looked: Option<Evaluation> = None;
    let mut look = 0;
    let mut seen_starts = 0;
    for k in evidence::FIRST_LOOK..=last {
        // A look is a pass that added a start to this claim's evidence.
        let probe = c.evaluate(
            plan,
            cells,
            doc_of,
            owners,
            Look {
                max_pass: k,
                alpha: ALPHA,
            },
        );
        let starts = probe.starts.unwrap_or(0);
        if starts <= seen_starts && looked.is_some() {
            continue;
        }
        seen_starts = starts;
        look += 1;
        let mut e = c.evaluate(
            plan,
            cells,
            doc_of,
            owners,
            Look {
                max_pass: k,
                alpha: evidence::sequential_alpha(ALPHA, look),
            },
        );
        e.looks = Some(k);
        let decided = e.outcome.decided() || e.outcome == Outcome::Undecidable;
        looked = Some(e);
        if decided {
            break;
        }
    }
    looked.unwrap_or_else(|| {
        let mut e = c.evaluate(plan, cells, doc_of, owners, Look::ALL);
        if e.outcome.decided() {
            // Fewer passes than the first look: the sequential rule has not looked yet.
            e.outcome = Outcome::NotMeasured;
            e.direction = None;
            e.size = None;
            e.why = format!(
                "{} pass(es): --until-decided first looks after pass {}",
                last,
                evidence::FIRST_LOOK
            );
            e.open = true;
        }
        e
    })
}
