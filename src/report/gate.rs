//! `compare BASE NEW --fail-on 'ops_per_s=-5%,p99_us=+10%'`: a regression gate on the rows of
//! [`super::compare`]. A row fails when its metric moved the worse way by more than its bound
//! *and* the difference is significant by the verdict `compare` reports (the server start as
//! the unit: [`super::compare::judge`]); a worse change within the noise between starts
//! passes. A row beyond its bound whose significance is unknown (each side one server start,
//! no between-start spread) neither passes nor fails: it is reported as unknown, and the gate
//! as UNKNOWN when no row fails (exit 0; the verdict line says what to give).

use std::fmt::Write;

use serde::Serialize;

use super::compare::{higher_is_better, Row, Verdict, METRICS};

/// A bound: how far a metric may move the worse way. Both forms carry the sign of the worse
/// direction (negative for ops_per_s, positive for the others).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// Percent of the base value: `-5%`.
    Percent(f64),
    /// In the metric's unit: `p99_us=+500` (µs), `errors=+0` (any significant increase).
    Absolute(f64),
}

impl Limit {
    pub fn label(self) -> String {
        match self {
            Limit::Percent(p) => format!("{p:+}%"),
            Limit::Absolute(d) => format!("{d:+}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The metric as `compare` names its rows.
    pub metric: &'static str,
    pub limit: Limit,
}

/// Names `--fail-on` accepts besides the row names: the CPU metrics without "cpu".
const ALIASES: [(&str, &str); 2] = [
    ("client_us_per_op", "client_cpu_us_per_op"),
    ("server_us_per_op", "server_cpu_us_per_op"),
];

fn metric_of(name: &str) -> Option<&'static str> {
    METRICS
        .iter()
        .map(|m| m.0)
        .find(|m| *m == name)
        .or_else(|| {
            ALIASES
                .iter()
                .find(|a| a.0 == name)
                .and_then(|a| METRICS.iter().map(|m| m.0).find(|m| *m == a.1))
        })
}

fn names() -> String {
    let mut v: Vec<&str> = METRICS.iter().map(|m| m.0).collect();
    v.extend(ALIASES.iter().map(|a| a.0));
    v.join(", ")
}

/// Parse `METRIC=BOUND[,METRIC=BOUND...]`; BOUND is a number with an optional sign and `%`.
/// An unsigned bound is taken in the worse direction; a sign pointing the better way is an
/// error (it would gate on improvements). The message is one line naming the faulty part.
pub fn parse(spec: &str) -> Result<Vec<Bound>, String> {
    let mut out: Vec<Bound> = Vec::new();
    if spec.trim().is_empty() {
        return Err(
            "--fail-on: empty; expected METRIC=BOUND, e.g. 'ops_per_s=-5%,p99_us=+10%'".into(),
        );
    }
    for part in spec.split(',') {
        let part = part.trim();
        let Some((name, value)) = part.split_once('=') else {
            return Err(format!(
                "--fail-on: '{part}' is not METRIC=BOUND (e.g. ops_per_s=-5%)"
            ));
        };
        let name = name.trim();
        let metric = metric_of(name)
            .ok_or_else(|| format!("--fail-on: unknown metric '{name}' (one of {})", names()))?;
        let value = value.trim();
        let (num, percent) = match value.strip_suffix('%') {
            Some(n) => (n.trim(), true),
            None => (value, false),
        };
        let sign = match num.chars().next() {
            Some('+') => Some(1.0),
            Some('-') => Some(-1.0),
            _ => None,
        };
        let magnitude: f64 = num
            .trim_start_matches(['+', '-'])
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                format!("--fail-on: '{part}': the bound '{value}' is not a number like -5% or +500")
            })?;
        let worse = if higher_is_better(metric) { -1.0 } else { 1.0 };
        if sign.is_some_and(|s| s != worse) && magnitude != 0.0 {
            return Err(format!(
                "--fail-on: '{part}': worse is {} for {metric}, so its bound is {}{magnitude}{}",
                if worse < 0.0 { "lower" } else { "higher" },
                if worse < 0.0 { '-' } else { '+' },
                if percent { "%" } else { "" }
            ));
        }
        if out.iter().any(|b| b.metric == metric) {
            return Err(format!("--fail-on: {metric} is bounded twice"));
        }
        let v = worse * magnitude;
        out.push(Bound {
            metric,
            limit: if percent {
                Limit::Percent(v)
            } else {
                Limit::Absolute(v)
            },
        });
    }
    Ok(out)
}

/// What the gate says about one row with a bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// The bound as given (`-5%`, `+500`).
    pub bound: String,
    /// The measured change in the bound's form (`-10.2%`, `+730`).
    pub change: String,
    /// Worse than the bound (significant or not).
    pub beyond: bool,
    /// Beyond the bound and significant: the gate fails.
    pub failed: bool,
    /// Beyond the bound, significance unknown: neither passed nor failed.
    pub unknown: bool,
}

impl Check {
    /// `fail`, `unknown` or `pass`.
    pub fn state(&self) -> &'static str {
        if self.failed {
            "fail"
        } else if self.unknown {
            "unknown"
        } else {
            "pass"
        }
    }

    /// Why the row passed, failed or is unknown, in a few words.
    pub fn reason(&self, verdict: Verdict) -> String {
        if self.failed {
            format!("FAIL: {} beyond {}, significant", self.change, self.bound)
        } else if self.unknown {
            format!(
                "UNKNOWN: {} beyond {}, significance unknown",
                self.change, self.bound
            )
        } else if self.beyond {
            format!(
                "pass: {} beyond {} but {}",
                self.change,
                self.bound,
                verdict.label()
            )
        } else {
            format!("pass: {} within {}", self.change, self.bound)
        }
    }
}

/// The gate column of `compare`'s terminal table: what the gate made of each row (empty for a
/// row without a bound).
pub fn cells(rows: &[Row], checks: &[Option<Check>]) -> Vec<String> {
    rows.iter()
        .zip(checks)
        .map(|(r, c)| c.as_ref().map(|c| c.reason(r.verdict)).unwrap_or_default())
        .collect()
}

/// The change of a row in the form of `limit`, and whether it is beyond the limit.
fn measure(row: &Row, limit: Limit) -> (String, bool) {
    let higher = higher_is_better(row.metric);
    // Positive when the change is the worse way, in the bound's unit.
    let (change, label) = match limit {
        Limit::Percent(_) => {
            let c = if row.a != 0.0 {
                (row.b / row.a - 1.0) * 100.0
            } else if row.b == 0.0 {
                0.0
            } else {
                f64::INFINITY * row.b.signum()
            };
            (c, format!("{c:+.1}%"))
        }
        Limit::Absolute(_) => {
            let c = row.b - row.a;
            (c, format!("{c:+.1}"))
        }
    };
    let bound = match limit {
        Limit::Percent(v) | Limit::Absolute(v) => v,
    };
    let beyond = if higher {
        change < bound
    } else {
        change > bound
    };
    (label, beyond)
}

/// One entry per row: the check of its metric's bound, None for a metric without a bound.
pub fn check(bounds: &[Bound], rows: &[Row]) -> Vec<Option<Check>> {
    rows.iter()
        .map(|r| {
            let b = bounds.iter().find(|b| b.metric == r.metric)?;
            let (change, beyond) = measure(r, b.limit);
            Some(Check {
                bound: b.limit.label(),
                change,
                beyond,
                failed: beyond && r.verdict == Verdict::Significant,
                unknown: beyond && r.verdict == Verdict::Unknown,
            })
        })
        .collect()
}

/// The gate's verdict over all rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub gated: usize,
    pub failed: usize,
    /// Beyond their bound but within the noise.
    pub beyond_in_noise: usize,
    /// Beyond their bound with significance unknown: neither passed nor failed.
    pub unknown: usize,
    /// Why significance is unknown for those rows (each reason once).
    pub why_unknown: Vec<String>,
    /// Bounded metrics no row has (the server's CPU of results without a known server pid).
    pub absent: Vec<&'static str>,
}

impl Outcome {
    pub fn of(bounds: &[Bound], rows: &[Row], checks: &[Option<Check>]) -> Outcome {
        let gated: Vec<(&Row, &Check)> = rows
            .iter()
            .zip(checks)
            .filter_map(|(r, c)| Some((r, c.as_ref()?)))
            .collect();
        Outcome {
            gated: gated.len(),
            failed: gated.iter().filter(|(_, c)| c.failed).count(),
            beyond_in_noise: gated
                .iter()
                .filter(|(r, c)| c.beyond && !c.failed && r.verdict == Verdict::WithinNoise)
                .count(),
            unknown: gated.iter().filter(|(_, c)| c.unknown).count(),
            why_unknown: gated
                .iter()
                .filter(|(_, c)| c.unknown)
                .filter_map(|(r, _)| r.basis.why.clone())
                .fold(Vec::new(), |mut v, w| {
                    if !v.contains(&w) {
                        v.push(w);
                    }
                    v
                }),
            absent: bounds
                .iter()
                .map(|b| b.metric)
                .filter(|m| !rows.iter().any(|r| r.metric == *m))
                .collect(),
        }
    }

    /// No row failed (exit 0), though some may be unknown.
    pub fn passed(&self) -> bool {
        self.failed == 0
    }

    /// `passed`, `FAILED` or `UNKNOWN` (no row failed, some rows beyond their bound with
    /// significance unknown).
    pub fn state(&self) -> &'static str {
        if self.failed > 0 {
            "FAILED"
        } else if self.unknown > 0 {
            "UNKNOWN"
        } else {
            "passed"
        }
    }

    /// One line: the verdict and what it rests on.
    pub fn line(&self) -> String {
        let why = if self.why_unknown.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.why_unknown.join("; "))
        };
        let mut s = match self.state() {
            "FAILED" => format!(
                "gate FAILED: {} of {} gated row(s) worse than the bound and significant (unit: server start, 95 %)",
                self.failed, self.gated
            ),
            "UNKNOWN" => format!(
                "gate UNKNOWN: {} of {} gated row(s) worse than the bound with significance unknown{why}; none worse and significant",
                self.unknown, self.gated
            ),
            _ => format!(
                "gate passed: {} row(s) gated, none worse than its bound and significant",
                self.gated
            ),
        };
        if self.failed > 0 && self.unknown > 0 {
            let _ = write!(
                s,
                "; {} beyond the bound with significance unknown{why}",
                self.unknown
            );
        }
        if self.beyond_in_noise > 0 {
            let _ = write!(
                s,
                "; {} beyond the bound but within noise",
                self.beyond_in_noise
            );
        }
        if !self.absent.is_empty() {
            let _ = write!(s, "; not in these results: {}", self.absent.join(", "));
        }
        s
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn md_table(out: &mut String, rows: &[&Row], checks: &[Option<&Check>], gate: bool) {
    out.push_str("| operation | threads | metric | A | B | B/A | verdict |");
    out.push_str(if gate { " gate |\n" } else { "\n" });
    out.push_str("|---|--:|---|--:|--:|--:|---|");
    out.push_str(if gate { "---|\n" } else { "\n" });
    for (r, c) in rows.iter().zip(checks) {
        let cells: Vec<String> = r.cells().iter().map(|c| md_cell(c)).collect();
        let _ = write!(out, "| {} |", cells.join(" | "));
        if gate {
            let g = match c {
                Some(c) if c.failed || c.unknown => format!("**{}**", c.reason(r.verdict)),
                Some(c) => c.reason(r.verdict),
                None => String::new(),
            };
            let _ = write!(out, " {} |", md_cell(&g));
        }
        out.push('\n');
    }
}

/// GitHub-flavoured markdown for a pull-request comment: the verdict line (with a gate), the
/// gated rows as a table, every other row folded under `<details>`.
pub fn markdown(
    rows: &[Row],
    checks: Option<&[Option<Check>]>,
    outcome: Option<&Outcome>,
    a_label: &str,
    b_label: &str,
) -> String {
    let mut out = String::new();
    if let Some(o) = outcome {
        let _ = writeln!(out, "**enginebench gate {}** — {}\n", o.state(), o.line());
    }
    let _ = writeln!(
        out,
        "B/A with B = {}, A = {} (means over runs; significance at 95 % with the server start as the unit)\n",
        md_cell(b_label),
        md_cell(a_label)
    );
    for line in super::compare::basis_lines(rows) {
        let _ = writeln!(out, "- {}", md_cell(&line));
    }
    out.push('\n');
    let none = vec![None; rows.len()];
    let checks: Vec<Option<&Check>> = checks
        .map(|c| c.iter().map(Option::as_ref).collect())
        .unwrap_or_else(|| none.clone());
    let gate = outcome.is_some();
    let (gated, rest): (Vec<usize>, Vec<usize>) =
        (0..rows.len()).partition(|&i| gate && checks[i].is_some());
    let pick = |idx: &[usize]| -> (Vec<&Row>, Vec<Option<&Check>>) {
        (
            idx.iter().map(|&i| &rows[i]).collect(),
            idx.iter().map(|&i| checks[i]).collect(),
        )
    };
    if gate && !gated.is_empty() {
        let (r, c) = pick(&gated);
        md_table(&mut out, &r, &c, true);
    }
    if !rest.is_empty() {
        let (r, c) = pick(&rest);
        if gate {
            let _ = writeln!(
                out,
                "\n<details><summary>{} other row(s), not gated</summary>\n",
                r.len()
            );
            md_table(&mut out, &r, &c, false);
            out.push_str("\n</details>\n");
        } else {
            md_table(&mut out, &r, &c, false);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: &'static str, a: f64, b: f64, verdict: Verdict) -> Row {
        Row {
            operation: "op".into(),
            threads: 1,
            metric,
            a,
            b,
            ratio: b / a,
            verdict,
            basis: crate::report::compare::Basis {
                unit: crate::report::compare::UNIT,
                starts: [1, 1],
                spread: None,
                why: (verdict == Verdict::Unknown)
                    .then(|| crate::report::compare::NO_SPREAD.to_string()),
            },
            disturbed: false,
        }
    }

    #[test]
    fn parses_bounds_with_signs_aliases_and_absolute_values() {
        let b =
            parse("ops_per_s=-5%, p99_us=+10%,server_us_per_op=20%,errors=0,p50_us=+500").unwrap();
        assert_eq!(
            b,
            vec![
                Bound {
                    metric: "ops_per_s",
                    limit: Limit::Percent(-5.0)
                },
                Bound {
                    metric: "p99_us",
                    limit: Limit::Percent(10.0)
                },
                Bound {
                    metric: "server_cpu_us_per_op",
                    limit: Limit::Percent(20.0)
                },
                Bound {
                    metric: "errors",
                    limit: Limit::Absolute(0.0)
                },
                Bound {
                    metric: "p50_us",
                    limit: Limit::Absolute(500.0)
                },
            ]
        );
        // Unsigned throughput bounds point the worse way too.
        assert_eq!(
            parse("ops_per_s=5%").unwrap()[0].limit,
            Limit::Percent(-5.0)
        );
        assert_eq!(
            parse("client_us_per_op=+1.5%").unwrap()[0].metric,
            "client_cpu_us_per_op"
        );
    }

    #[test]
    fn bad_bounds_are_one_line_errors() {
        for (spec, says) in [
            ("", "empty"),
            ("ops_per_s", "not METRIC=BOUND"),
            ("qps=-5%", "unknown metric 'qps'"),
            (
                "ops_per_s=+5%",
                "worse is lower for ops_per_s, so its bound is -5%",
            ),
            (
                "p99_us=-10%",
                "worse is higher for p99_us, so its bound is +10%",
            ),
            ("p99_us=ten%", "not a number"),
            ("p99_us=+10%%", "not a number"),
            ("p99_us=inf", "not a number"),
            ("p99_us=1%,p99_us=2%", "bounded twice"),
            ("ops_per_s=-5%,", "not METRIC=BOUND"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(says), "{spec}: {e}");
            assert!(e.starts_with("--fail-on") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn fails_only_beyond_the_bound_and_significant() {
        let bounds = parse("ops_per_s=-5%,p99_us=+10%,errors=+0").unwrap();
        let rows = vec![
            row("ops_per_s", 1000.0, 900.0, Verdict::Significant), // -10 %: fails
            row("ops_per_s", 1000.0, 900.0, Verdict::WithinNoise), // beyond, noise
            row("ops_per_s", 1000.0, 960.0, Verdict::Significant), // -4 %: within
            row("ops_per_s", 1000.0, 1200.0, Verdict::Significant), // better
            row("p99_us", 100.0, 111.0, Verdict::Significant),     // +11 %: fails
            row("p99_us", 100.0, 80.0, Verdict::Significant),      // better
            row("p99_us", 100.0, 150.0, Verdict::Unknown),         // beyond, unknown
            row("errors", 0.0, 3.0, Verdict::Significant),         // any increase
            row("p50_us", 10.0, 50.0, Verdict::Significant),       // no bound
        ];
        let c = check(&bounds, &rows);
        let failed: Vec<bool> = c
            .iter()
            .map(|c| c.as_ref().is_some_and(|c| c.failed))
            .collect();
        assert_eq!(
            failed,
            [true, false, false, false, true, false, false, true, false]
        );
        assert!(c[8].is_none());
        assert_eq!(c[0].as_ref().unwrap().change, "-10.0%");
        assert_eq!(
            c[0].as_ref().unwrap().reason(Verdict::Significant),
            "FAIL: -10.0% beyond -5%, significant"
        );
        assert_eq!(
            c[1].as_ref().unwrap().reason(Verdict::WithinNoise),
            "pass: -10.0% beyond -5% but within noise"
        );
        assert_eq!(c[7].as_ref().unwrap().change, "+3.0");
        let o = Outcome::of(&bounds, &rows, &c);
        assert_eq!(
            (o.gated, o.failed, o.beyond_in_noise, o.unknown),
            (8, 3, 1, 1)
        );
        assert_eq!(o.state(), "FAILED");
        assert!(!o.passed() && o.line().starts_with("gate FAILED: 3 of 8"));
        // The unknown row is said beside the failures, not counted as one.
        assert!(
            o.line().contains("; 1 beyond the bound with significance unknown (each side is one server start; give --between-start calibration.json or a catalog baseline)"),
            "{}",
            o.line()
        );
        assert_eq!(c[6].as_ref().unwrap().state(), "unknown");
        // A bound on a metric the rows lack is said, not failed.
        let b = parse("server_us_per_op=+5%").unwrap();
        let o = Outcome::of(&b, &rows, &check(&b, &rows));
        assert!(o.passed(), "{o:?}");
        assert!(o
            .line()
            .contains("not in these results: server_cpu_us_per_op"));
    }

    /// A row beyond its bound whose significance is unknown neither passes nor fails: the
    /// gate says UNKNOWN, with why, and exits 0 (passed() holds) as long as no row fails.
    #[test]
    fn unknown_rows_are_reported_and_do_not_fail_the_gate() {
        let bounds = parse("ops_per_s=-5%,p99_us=+10%").unwrap();
        let rows = vec![
            row("ops_per_s", 1000.0, 900.0, Verdict::Unknown), // -10 %: unknown
            row("p99_us", 100.0, 105.0, Verdict::Unknown),     // +5 %: within its bound
        ];
        let c = check(&bounds, &rows);
        let states: Vec<&str> = c.iter().map(|c| c.as_ref().unwrap().state()).collect();
        assert_eq!(states, ["unknown", "pass"]);
        assert_eq!(
            c[0].as_ref().unwrap().reason(Verdict::Unknown),
            "UNKNOWN: -10.0% beyond -5%, significance unknown"
        );
        let o = Outcome::of(&bounds, &rows, &c);
        assert_eq!((o.gated, o.failed, o.unknown), (2, 0, 1));
        assert!(o.passed(), "no row failed: exit 0");
        assert_eq!(o.state(), "UNKNOWN");
        assert_eq!(
            o.line(),
            "gate UNKNOWN: 1 of 2 gated row(s) worse than the bound with significance unknown (each side is one server start; give --between-start calibration.json or a catalog baseline); none worse and significant"
        );
        let md = markdown(&rows, Some(&c), Some(&o), "a", "b");
        assert!(
            md.starts_with("**enginebench gate UNKNOWN** — gate UNKNOWN: 1 of 2"),
            "{md}"
        );
        assert!(
            md.contains(
                "| significance unknown | **UNKNOWN: -10.0% beyond -5%, significance unknown** |"
            ),
            "{md}"
        );
    }

    /// The whole chain on two results of one server start each, 10 % apart with steady runs:
    /// unknown without a between-start spread, FAILED with a calibrated one of 3 %, and passed
    /// (beyond the bound but within noise) with one of 8 %.
    #[test]
    fn the_gate_on_one_start_per_side_follows_the_between_start_spread() {
        use crate::report::compare::{compare_sides, BetweenStart};
        use crate::report::{Point, ResultDoc, RunRecord};
        let doc = |ops: f64| ResultDoc {
            points: vec![Point {
                operation: "op".into(),
                threads: 1,
                runs: [0.999, 1.0, 1.001]
                    .iter()
                    .map(|f| RunRecord {
                        ops_per_s: ops * f,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let bounds = parse("ops_per_s=-5%").unwrap();
        let gate = |between: Option<&BetweenStart>| {
            let rows = compare_sides(&[doc(1000.0)], &[doc(900.0)], between);
            let c = check(&bounds, &rows);
            Outcome::of(&bounds, &rows, &c)
        };
        let o = gate(None);
        assert_eq!((o.state(), o.passed(), o.unknown), ("UNKNOWN", true, 1));
        let cal = |sd: f64| BetweenStart {
            sd,
            df: 12,
            source: "calibration.json".into(),
            from: crate::report::compare::SpreadFrom::Calibration,
        };
        let o = gate(Some(&cal(0.03)));
        assert_eq!((o.state(), o.passed(), o.failed), ("FAILED", false, 1));
        let o = gate(Some(&cal(0.08)));
        assert_eq!(
            (o.state(), o.passed(), o.beyond_in_noise),
            ("passed", true, 1)
        );
    }

    #[test]
    fn markdown_has_a_verdict_and_table_lines() {
        let bounds = parse("ops_per_s=-5%").unwrap();
        let rows = vec![
            row("ops_per_s", 1000.0, 900.0, Verdict::Significant),
            row("p99_us", 100.0, 101.0, Verdict::WithinNoise),
        ];
        let c = check(&bounds, &rows);
        let o = Outcome::of(&bounds, &rows, &c);
        let md = markdown(&rows, Some(&c), Some(&o), "base|x", "new");
        let lines: Vec<&str> = md.lines().collect();
        assert!(
            lines[0].starts_with("**enginebench gate FAILED** — gate FAILED: 1 of 1"),
            "{md}"
        );
        assert!(md.contains("A = base\\|x"), "{md}");
        assert!(md.contains("| operation | threads | metric | A | B | B/A | verdict | gate |\n|---|--:|---|--:|--:|--:|---|---|\n| op | 1 | ops_per_s | 1000.0 | 900.0 | 0.900 | significant | **FAIL: -10.0% beyond -5%, significant** |"), "{md}");
        assert!(
            md.contains("<details><summary>1 other row(s), not gated</summary>"),
            "{md}"
        );
        // Every table line has the same number of cells as its header.
        for l in lines.iter().filter(|l| l.starts_with('|')) {
            let cells = l.replace("\\|", "").matches('|').count();
            assert!(cells == 8 || cells == 9, "{l}");
        }
        let plain = markdown(&rows, None, None, "a", "b");
        assert!(
            !plain.contains("gate")
                && plain.lines().filter(|l| l.starts_with("| op |")).count() == 2,
            "{plain}"
        );
    }
}
