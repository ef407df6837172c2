use super::*;
use crate::model::{Point, RunRecord};

fn plan(claim: &str) -> Plan {
    let text = format!(
        r#"
name = "t"
workload = "micro-read"
engines = ["InnoDB", "MyISAM"]
threads = [1, 4, 16]
[[servers]]
server = "mariadb:small"
[[claims]]
{claim}
"#
    );
    Plan::from_text(&text, "t.toml", false).unwrap()
}

fn point(op: &str, threads: usize, ops: &[f64], disturbed: bool) -> Point {
    Point {
        operation: op.into(),
        threads,
        runs: ops
            .iter()
            .map(|&o| RunRecord {
                ops: 1000,
                ops_per_s: o,
                disturbed,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn doc(ops: &[f64], disturbed: bool) -> ResultDoc {
    ResultDoc {
        status: Status::Complete,
        points: vec![point("READ_PK_POINT", 4, ops, disturbed)],
        ..Default::default()
    }
}

const CLAIM: &str = r#"id = "R1.1"
says = "InnoDB faster than MyISAM"
metric = "ops_per_s"
operation = "READ_PK_POINT"
a = { engine = "InnoDB" }
b = { engine = "MyISAM" }
threads = [4]
expect = "a > b""#;

/// The verdict with each engine's cells (every thread count) given by `of`.
fn verdict_by(p: &Plan, of: &dyn Fn(&str, usize) -> Vec<CellDoc>) -> Evaluation {
    let cells = p.cells();
    let doc_of = |c: &Cell| of(c.engine.as_deref().unwrap_or(""), c.threads);
    p.claims[0].evaluate(p, &cells, &doc_of, &[], Look::ALL)
}

/// The same result in each of three passes (three server starts that agree).
fn verdict(p: &Plan, innodb: Option<ResultDoc>, myisam: Option<ResultDoc>) -> Evaluation {
    verdict_by(p, &|e, _| {
        match e {
            "InnoDB" => innodb.clone(),
            "MyISAM" => myisam.clone(),
            _ => None,
        }
        .map(|doc| {
            (1..=3)
                .map(|pass| CellDoc {
                    pass,
                    doc: doc.clone(),
                })
                .collect()
        })
        .unwrap_or_default()
    })
}

/// One value per pass for each side.
fn by_pass(a: &[f64], b: &[f64]) -> impl Fn(&str, usize) -> Vec<CellDoc> {
    let (a, b) = (a.to_vec(), b.to_vec());
    move |e, _| {
        let v = if e == "InnoDB" { &a } else { &b };
        v.iter()
            .enumerate()
            .map(|(i, x)| CellDoc {
                pass: i as u32 + 1,
                doc: doc(&[*x], false),
            })
            .collect()
    }
}

#[test]
fn a_claim_follows_the_measured_results() {
    let p = plan(CLAIM);
    let fast = doc(&[1000.0, 1010.0, 990.0], false);
    let slow = doc(&[800.0, 810.0, 790.0], false);
    let e = verdict(&p, Some(fast.clone()), Some(slow.clone()));
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    assert_eq!(e.size, Some(Size::NoBand));
    assert!(e.ours.starts_with("a/b 1.25 ["), "{}", e.ours);
    // The same claim against swapped measurements.
    let e = verdict(&p, Some(slow.clone()), Some(fast.clone()));
    assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
    assert_eq!(e.direction, Some(Direction::Opposite));
    // A missing cell, a disturbed run, a difference inside the noise.
    let e = verdict(&p, Some(fast.clone()), None);
    assert_eq!(e.outcome, Outcome::NotMeasured);
    assert!(e.why.contains("has no result"), "{}", e.why);
    let e = verdict(&p, Some(doc(&[1000.0, 1010.0], true)), Some(slow.clone()));
    assert_eq!(e.outcome, Outcome::NotMeasured);
    assert!(e.why.contains("disturbed"), "{}", e.why);
    let noisy = doc(&[1000.0, 700.0, 1300.0], false);
    let e = verdict(&p, Some(noisy), Some(doc(&[990.0, 1010.0, 1000.0], false)));
    assert_eq!(e.outcome, Outcome::NotMeasured);
    assert!(e.why.contains("inside the noise"), "{}", e.why);
}

#[test]
fn a_disturbed_run_outside_the_compared_points_voids_nothing() {
    let p = plan(CLAIM);
    let mut fast = doc(&[1000.0, 1010.0, 990.0], false);
    // Another query of the same cell was disturbed: the claim does not read it.
    fast.points
        .push(point("READ_FTS", 4, &[10.0, 11.0, 12.0], true));
    let e = verdict(&p, Some(fast), Some(doc(&[800.0, 810.0, 790.0], false)));
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
}

#[test]
fn a_partial_result_decides_nothing() {
    let p = plan(CLAIM);
    let mut fast = doc(&[1000.0, 1010.0, 990.0], false);
    fast.status = Status::Interrupted;
    let e = verdict(&p, Some(fast), Some(doc(&[800.0, 810.0, 790.0], false)));
    assert_eq!(e.outcome, Outcome::NotMeasured);
    assert!(e.why.contains("partial result"), "{}", e.why);
}

#[test]
fn direction_and_size_from_the_reports_figure() {
    let banded = format!("{CLAIM}\nfigure_ratio = [1.06, 1.09]\ntolerance = 0.05");
    let p = plan(&banded);
    let steady = doc(&[1000.0, 1001.0, 999.0], false);
    let e = verdict(
        &p,
        Some(doc(&[1070.0, 1075.0, 1080.0], false)),
        Some(steady.clone()),
    );
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    assert_eq!(e.size, Some(Size::Inside));
    // 1.5x: the claimed way, but far larger than the report's figure.
    let e = verdict(
        &p,
        Some(doc(&[1500.0, 1510.0, 1490.0], false)),
        Some(steady.clone()),
    );
    assert_eq!(e.outcome, Outcome::HoldsInDirection, "{}", e.why);
    assert_eq!(e.direction, Some(Direction::Claimed));
    assert_eq!(e.size, Some(Size::Outside));
    assert!(e.why.contains("beyond the band"), "{}", e.why);
    // Inside the noise, but the whole interval below the report's figure: not that size.
    let big = format!("{CLAIM}\nfigure_ratio = 1.58\ntolerance = 0.15");
    let p2 = plan(&big);
    let e = verdict(
        &p2,
        Some(doc(&[900.0, 1100.0, 1300.0, 900.0, 1100.0, 1300.0], false)),
        Some(doc(&[1000.0, 1010.0, 990.0, 1000.0, 1010.0, 990.0], false)),
    );
    assert_eq!(e.outcome, Outcome::NotInSize, "{}", e.why);
    assert_eq!(e.direction, Some(Direction::Unclear));
    assert_eq!(e.size, Some(Size::Outside));
    assert!(e.why.contains("not the report's size"), "{}", e.why);
    // ... and an interval that reaches the band decides nothing.
    let e = verdict(
        &p2,
        Some(doc(&[700.0, 1100.0, 1500.0, 700.0, 1100.0, 1500.0], false)),
        Some(doc(&[1000.0, 1010.0, 990.0, 1000.0, 1010.0, 990.0], false)),
    );
    assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
    let (band, from) = p.claims[0].band().unwrap();
    assert!((band[0].unwrap() - 1.06 / 1.05).abs() < 1e-9, "{from}");
}

#[test]
fn equality_is_an_equivalence_test() {
    let same = format!(
        "{}\nmin_ratio = 0.9\nmax_ratio = 1.1",
        CLAIM.replace("a > b", "a ~ b")
    );
    let p = plan(&same);
    let steady = doc(&[1000.0, 1001.0, 999.0], false);
    // Two tight, equal sides: equivalent inside the band.
    let e = verdict(
        &p,
        Some(doc(&[1020.0, 1021.0, 1019.0], false)),
        Some(steady.clone()),
    );
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    // Two noisy sides of the same mean: weak evidence, not "equal".
    let e = verdict(
        &p,
        Some(doc(&[800.0, 1000.0, 1200.0], false)),
        Some(doc(&[1200.0, 1000.0, 800.0], false)),
    );
    assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
    assert!(e.why.contains("too weak"), "{}", e.why);
    // Tightly 1.5x: not equal.
    let e = verdict(
        &p,
        Some(doc(&[1500.0, 1501.0, 1499.0], false)),
        Some(steady),
    );
    assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
    // Equality without a band is refused when the plan is read.
    let text = format!(
            "name='t'\nworkload='micro-read'\nengines=['InnoDB','MyISAM']\nthreads=[4]\n[[servers]]\nserver='mariadb:small'\n[[claims]]\n{}",
            CLAIM.replace("a > b", "a ~ b")
        );
    let m = Plan::from_text(&text, "t.toml", false).unwrap_err().message;
    assert!(m.contains("needs a band"), "{m}");
}

#[test]
fn per_threads_carries_the_base_cells_spread() {
    let claim = r#"id = "S"
says = "MyISAM scales worse than InnoDB"
metric = "ops_per_s"
operation = "READ_PK_POINT"
a = { engine = "MyISAM", threads = 16, per_threads = 1 }
b = { engine = "InnoDB", threads = 16, per_threads = 1 }
expect = "a < b""#;
    let p = plan(claim);
    let run = |e: &str, t: usize, noisy_base: bool| -> Vec<CellDoc> {
        let ops: Vec<f64> = match (e, t) {
            // MyISAM 1.6x from 1 to 16 threads, InnoDB 2x: tight at 16 threads.
            ("MyISAM", 16) => vec![1600.0, 1601.0, 1599.0],
            ("InnoDB", 16) => vec![2000.0, 2001.0, 1999.0],
            ("MyISAM", 1) if noisy_base => vec![500.0, 1000.0, 1500.0],
            _ => vec![1000.0, 1001.0, 999.0],
        };
        let d = ResultDoc {
            status: Status::Complete,
            points: vec![point("READ_PK_POINT", t, &ops, false)],
            ..Default::default()
        };
        (1..=3)
            .map(|pass| CellDoc {
                pass,
                doc: d.clone(),
            })
            .collect()
    };
    let e = verdict_by(&p, &|e, t| run(e, t, false));
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    // The same 16-thread cells over a noisy 1-thread cell: the ratio of ratios is not
    // significant any more.
    let e = verdict_by(&p, &|e, t| run(e, t, true));
    assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
    assert!(e.why.contains("inside the noise"), "{}", e.why);
}

#[test]
fn the_server_start_is_the_unit() {
    let p = plan(CLAIM);
    // One value per start: three starts that agree decide.
    let e = verdict_by(
        &p,
        &by_pass(&[1000.0, 1010.0, 990.0], &[800.0, 805.0, 795.0]),
    );
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    assert_eq!(e.pairs[0].n, Some([3, 3]));
    assert_eq!(e.starts, Some(3));
    assert!(e.why.contains("over 3 server starts"), "{}", e.why);
    // Tight runs inside one start decide nothing: the spread between starts is unknown.
    let e = verdict(&p, None, None);
    assert_eq!(e.outcome, Outcome::NotMeasured);
    let one = |pass| CellDoc {
        pass,
        doc: doc(&[1000.0, 1001.0, 999.0, 1000.0], false),
    };
    let e = verdict_by(&p, &|e, _| match e {
        "InnoDB" => vec![one(1)],
        _ => vec![CellDoc {
            pass: 1,
            doc: doc(&[800.0, 801.0, 799.0, 800.0], false),
        }],
    });
    assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
    assert!(e.why.contains("one server start"), "{}", e.why);
    // Two starts that disagree (1.25 and 0.88), each from tight runs: the old pooling
    // of every run called this significant; between starts it is noise.
    let e = verdict_by(&p, &|e, _| match e {
        "InnoDB" => vec![
            CellDoc {
                pass: 1,
                doc: doc(&[1000.0, 1001.0, 999.0], false),
            },
            CellDoc {
                pass: 2,
                doc: doc(&[700.0, 701.0, 699.0], false),
            },
        ],
        _ => vec![
            CellDoc {
                pass: 1,
                doc: doc(&[800.0, 801.0, 799.0], false),
            },
            CellDoc {
                pass: 2,
                doc: doc(&[800.0, 801.0, 799.0], false),
            },
        ],
    });
    assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
    assert!(e.why.contains("inside the noise"), "{}", e.why);
    assert!(e.ours.contains("pass 1 1.25, pass 2 0.88"), "{}", e.ours);
    let pair = &e.pairs[0];
    assert!(pair.between_start_sd.unwrap() > 0.2, "{pair:?}");
    assert!(pair.within_start_sd.unwrap() < 0.01, "{pair:?}");
}

/// A disturbed pass is left out of the evidence; the other starts still decide.
#[test]
fn a_disturbed_pass_is_left_out() {
    let p = plan(CLAIM);
    let e = verdict_by(&p, &|e, _| {
        (1..=3)
            .map(|pass| CellDoc {
                pass,
                doc: if e == "InnoDB" {
                    doc(&[1000.0, 1010.0, 990.0], pass == 2)
                } else {
                    doc(&[800.0, 810.0, 790.0], false)
                },
            })
            .collect()
    });
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    assert_eq!(e.starts, Some(2));
    assert!(
        e.why.contains("left out, partial or disturbed: pass 2"),
        "{}",
        e.why
    );
}

/// For a ratio on the claimed side of 1, a tighter interval never gives a worse verdict;
/// for one on the other side, never a better one; and no tighter interval turns a decided
/// verdict into an undecided one.
#[test]
fn a_tighter_interval_never_gives_a_worse_verdict() {
    for band in [
        "",
        "\nfigure_ratio = 1.58\ntolerance = 0.15",
        "\nmin_ratio = 0.8\nmax_ratio = 1.2",
    ] {
        let p = plan(&format!("{CLAIM}{band}"));
        let claim = &p.claims[0];
        for r in [0.5, 0.8, 0.95, 1.05, 1.1, 1.3, 1.4, 1.6, 1.9, 2.5] {
            let mut last: Option<Outcome> = None;
            // Three starts at r·e^-s, r, r·e^s: the same ratio, a narrower interval as s falls.
            for s in [0.8f64, 0.4, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.001] {
                let side = |x: &[f64]| Side {
                    obs: Observed::Starts(
                        x.iter()
                            .enumerate()
                            .map(|(i, m)| {
                                (
                                    i as u32 + 1,
                                    StartValue {
                                        mean: *m,
                                        within: 0.0,
                                        n: 1,
                                    },
                                )
                            })
                            .collect(),
                    ),
                    n: 3,
                    docs: Vec::new(),
                    left_out: Vec::new(),
                };
                let a = side(&[r * (-s).exp(), r, r * s.exp()]);
                let b = side(&[1.0, 1.0, 1.0]);
                let o = claim.judge(4, &a, &b, ALPHA).outcome;
                if let Some(prev) = last {
                    if let Some(pr) = prev.rank() {
                        let now = o.rank();
                        assert!(now.is_some(), "r {r} s {s}{band}: {prev:?} -> {o:?}");
                        let now = now.unwrap();
                        if r > 1.0 {
                            assert!(now >= pr, "r {r} s {s}{band}: {prev:?} -> {o:?}");
                        } else {
                            assert!(now <= pr, "r {r} s {s}{band}: {prev:?} -> {o:?}");
                        }
                    }
                }
                last = Some(o);
            }
        }
    }
}

/// R1.3's case: an imprecise 1.10 below the band is "not the report's size", the same
/// ratio measured tightly "holds in direction only": never "does not hold".
#[test]
fn direction_inside_the_noise_never_fails_the_claim() {
    let p = plan(&format!("{CLAIM}\nfigure_ratio = 1.58\ntolerance = 0.15"));
    let wide = verdict_by(
        &p,
        &by_pass(&[1050.0, 1150.0, 1100.0], &[1000.0, 1000.0, 1000.0]),
    );
    let tight = verdict_by(
        &p,
        &by_pass(&[1100.0, 1102.0, 1098.0], &[1000.0, 1000.0, 1000.0]),
    );
    assert_eq!(wide.outcome, Outcome::NotInSize, "{}", wide.why);
    assert_eq!(tight.outcome, Outcome::HoldsInDirection, "{}", tight.why);
    assert!(tight.outcome.rank() > wide.outcome.rank());
}

/// `a ~ b`: passes at 1.02 and 0.99, both inside the band, are equivalence evidence,
/// not "unstable".
#[test]
fn equality_absorbs_passes_on_both_sides_of_one() {
    let same = format!(
        "{}\nmin_ratio = 0.8\nmax_ratio = 1.25",
        CLAIM.replace("a > b", "a ~ b")
    );
    let p = plan(&same);
    let e = verdict_by(
        &p,
        &by_pass(&[1020.0, 990.0, 1005.0], &[1000.0, 1000.0, 1000.0]),
    );
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
}

/// A load that other processes disturbed voids the load-time claims that read it.
#[test]
fn a_disturbed_load_voids_load_claims() {
    let p = plan(&CLAIM.replace("ops_per_s", "load_s"));
    let loaded = |s: f64, disturbed: bool| {
        let mut d = doc(&[1000.0], false);
        d.load = vec![crate::model::LoadStats {
            table: "t".into(),
            rows: 1000,
            connections: 1,
            method: crate::model::LoadMethod::Insert,
            elapsed_s: s,
            rows_per_s: 1000.0 / s,
            interrupted: false,
            disturbed,
            others_cpus: Some(if disturbed { 0.5 } else { 0.0 }),
        }];
        d
    };
    let e = verdict(&p, Some(loaded(3.0, false)), Some(loaded(2.0, false)));
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    let e = verdict(&p, Some(loaded(3.0, true)), Some(loaded(2.0, false)));
    assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
    assert!(e.why.contains("disturbed"), "{}", e.why);
}

/// `per_metric`: a result's metric over its other metric is one value (the first and
/// last windows of one run are one measurement), its spread from the starts.
#[test]
fn per_metric_is_one_value_per_result() {
    let claim = r#"id = "C"
says = "a's ratio below b's"
metric = "p99_us"
operation = "READ_PK_POINT"
a = { engine = "InnoDB", per_metric = "p50_us" }
b = { engine = "MyISAM", per_metric = "p50_us" }
threads = [4]
expect = "a > b""#;
    let p = plan(claim);
    let with = |p50: u64, p99: u64| {
        let mut d = doc(&[1000.0, 1000.0, 1000.0], false);
        for r in &mut d.points[0].runs {
            r.latency_us.p50_us = p50;
            r.latency_us.p99_us = p99;
        }
        d
    };
    let e = verdict(&p, Some(with(100, 400)), Some(with(100, 200)));
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    assert_eq!(e.pairs[0].n, Some([3, 3]), "one value per result");
}

/// A side that can be 0 (a stall that did not happen) is judged against a bound.
#[test]
fn a_zero_valued_side_is_judged_as_a_bound() {
    let claim = r#"id = "O"
says = "no stall"
metric = "ops_per_s"
operation = "READ_PK_POINT"
a = { engine = "InnoDB" }
b = { value = 0.5 }
threads = [4]
expect = "a < b""#;
    let p = plan(claim);
    let e = verdict_by(&p, &by_pass(&[0.0, 0.0, 0.0], &[]));
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    let e = verdict_by(&p, &by_pass(&[2.0, 2.1, 1.9], &[]));
    assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
}

/// Equal values in every start on both sides: not a zero standard error.
#[test]
fn zero_variance_is_not_significance() {
    let p = plan(CLAIM);
    let e = verdict_by(
        &p,
        &by_pass(&[1003.0, 1003.0, 1003.0], &[1000.0, 1000.0, 1000.0]),
    );
    assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
    assert!(e.pairs[0].ci.unwrap()[0] < 1.0, "{:?}", e.pairs[0]);
}

/// The sequential rule: a look later than the first tests at a stricter level, and a
/// claim keeps the verdict of the pass that decided it.
#[test]
fn until_decided_looks_at_a_falling_level() {
    let p = plan(CLAIM);
    let cells = p.cells();
    let of = by_pass(
        &[1300.0, 1310.0, 1290.0, 1305.0],
        &[1000.0, 1000.0, 1000.0, 1000.0],
    );
    let doc_of = |c: &Cell| of(c.engine.as_deref().unwrap_or(""), c.threads);
    let e = evaluate_one(&p.claims[0], &p, &cells, &doc_of, &[], Design::Sequential);
    assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    assert_eq!(e.looks, Some(3), "decided at the first look");
    assert!((e.alpha - 0.025).abs() < 1e-12, "{}", e.alpha);
    assert!(e.why.contains("97.5 % CI"), "{}", e.why);
    // Two passes only: the rule has not looked.
    let of2 = by_pass(&[1300.0, 1310.0], &[1000.0, 1000.0]);
    let doc_of2 = |c: &Cell| of2(c.engine.as_deref().unwrap_or(""), c.threads);
    let e = evaluate_one(&p.claims[0], &p, &cells, &doc_of2, &[], Design::Sequential);
    assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
    assert!(e.open);
}

#[test]
fn a_claim_that_needs_more_cores_is_undecidable_here() {
    let p = plan(&format!(
        "{CLAIM}\nneeds = {{ cores = 8, why = \"scaling\" }}"
    ));
    let mut fast = doc(&[1000.0, 1010.0, 990.0], false);
    fast.host.cores = 2;
    let e = verdict(&p, Some(fast), Some(doc(&[800.0, 810.0, 790.0], false)));
    assert_eq!(e.outcome, Outcome::Undecidable, "{}", e.why);
    assert!(
        e.why.contains("at least 8 cores, this host has 2"),
        "{}",
        e.why
    );
    let p = plan(&format!(
        "{CLAIM}\nneeds = {{ config_per_thread = {{ warehouses = 1.0 }} }}"
    ));
    let mut few = doc(&[1000.0, 1010.0, 990.0], false);
    few.config = serde_json::json!({ "workload": { "warehouses": 2 } });
    let e = verdict(&p, Some(few), Some(doc(&[800.0, 810.0, 790.0], false)));
    assert_eq!(e.outcome, Outcome::Undecidable, "{}", e.why);
    assert!(e.why.contains("warehouses"), "{}", e.why);
}

/// Every claim of the four reports whose figure has a number carries a band from it, and
/// the reports' claims and ours are told apart.
#[test]
fn every_figure_of_the_reports_has_a_band() {
    for (name, text) in crate::suite::REPRODUCTIONS {
        let p = Plan::from_text(text, name, false).unwrap();
        for c in &p.claims {
            let numbered = c
                .figure
                .as_deref()
                .is_some_and(|f| f.chars().any(|ch| ch.is_ascii_digit()));
            // Figures that only name sizes or thread counts to compare ("4k < 8k",
            // "past 64 threads") give no ratio.
            let ratio_words = ["%", " x", " vs ", "s vs", "KB", "equal", "about"];
            let is_ratio = c
                .figure
                .as_deref()
                .is_some_and(|f| ratio_words.iter().any(|w| f.contains(w)));
            if numbered && is_ratio && !c.ours {
                assert!(c.band().is_some(), "{name} {}: figure without a band", c.id);
            }
            if c.tolerance.is_some() {
                assert!(c.figure_ratio.is_some(), "{name} {}", c.id);
            }
        }
        assert!(p.claims.iter().any(|c| !c.ours), "{name}");
    }
}

#[test]
fn bad_claims_are_refused_when_the_plan_is_read() {
    let bad = |claim: &str| {
        let text = format!(
                "name='t'\nworkload='micro-read'\nengines=['InnoDB','MyISAM']\nthreads=[4]\n[[servers]]\nserver='mariadb:small'\n[[claims]]\n{claim}"
            );
        Plan::from_text(&text, "t.toml", false).unwrap_err().message
    };
    let m = bad(&CLAIM.replace("ops_per_s", "speed"));
    assert!(m.contains("unknown metric 'speed'"), "{m}");
    let m = bad(&CLAIM.replace("\"MyISAM\" }", "\"Falcon\" }"));
    assert!(
        m.contains("no cell of the plan matches { engine=Falcon }"),
        "{m}"
    );
    let m = bad(&CLAIM.replace("b = { engine = \"MyISAM\" }", "b = { }"));
    assert!(m.contains("matches 2 cells"), "{m}");
    let m = bad(&CLAIM.replace("a > b", "a >> b"));
    assert!(m.contains("expect"), "{m}");
    let m = bad(&format!("{CLAIM}\ntolerance = 0.2"));
    assert!(m.contains("figure_ratio"), "{m}");
}
