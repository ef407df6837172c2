//! `compare --fail-on`: the regression gate on a real SQLite result. Each result is one server
//! start: a planted 10 % slowdown (the result copied with every run's ops/s scaled by 0.9 and
//! its latencies by 1/0.9) is UNKNOWN without a between-start spread (exit 0, said on every
//! line that matters) and fails with exit 1 against a calibrated spread of 3 %; the same
//! result passes; a 13 % slowdown passes as noise against a spread of 10 % and fails against
//! 3 %, however its runs scatter; the markdown for a pull request has its verdict line and
//! table; bad bounds and a bad calibration file are one line and exit 2.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::common::*;

/// A real result: two queries at one thread, six short measured runs each (about 3 s).
fn base(dir: &Path) -> PathBuf {
    micro_read_sqlite(
        dir,
        "base",
        &[
            "--threads",
            "1",
            "--runs",
            "6",
            "--duration",
            "200ms",
            "--warmup",
            "100ms",
            "--queries",
            "READ_PK_POINT,READ_KEY_POINT",
        ],
    )
}

/// A copy of `doc` with every run's throughput multiplied by `factors[run % len]` and its
/// latency percentiles divided by it (the same operations, each taking longer).
fn scaled(doc: &Json, factors: &[f64]) -> Json {
    let mut d = doc.clone();
    for p in d["points"].as_array_mut().unwrap() {
        for (i, r) in p["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
            let f = factors[i % factors.len()];
            r["ops_per_s"] = Json::from(r["ops_per_s"].as_f64().unwrap() * f);
            for (k, v) in r["latency_us"].as_object_mut().unwrap() {
                if k != "mean_us" {
                    *v = Json::from((v.as_f64().unwrap() / f).round() as u64);
                }
            }
        }
    }
    d
}

fn write(dir: &Path, name: &str, doc: &Json) -> String {
    let f = dir.join(name);
    std::fs::write(&f, doc.to_string()).unwrap();
    f.to_str().unwrap().to_string()
}

/// A calibration.json as `reproduce NAME --calibrate` writes it, with this between-start
/// spread of ln(a/b).
fn calibration(dir: &Path, name: &str, sd: f64, df: usize) -> String {
    write(
        dir,
        name,
        &serde_json::json!({
            "plan": "read-2007-calibration",
            "passes": 3,
            "nominal_alpha": 0.05,
            "rates": [],
            "comparisons": [],
            "not_calibrated": [],
            "pooled_start_sd": sd,
            "pooled_df": df,
        }),
    )
}

#[test]
fn fail_on_gates_a_planted_slowdown_and_passes_noise() {
    let dir = tempdir();
    let d = dir.path();
    let a = base(d);
    let mut doc: Json = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    // Steady runs, as on a quiet machine: each point's runs at its median ops/s +-1 %. Runs of
    // 200 ms on the shared 2-core test machine scatter by up to 30 %, which no test at 95 %
    // separates from a 10 % change; the copies below plant the differences on this base.
    for p in doc["points"].as_array_mut().unwrap() {
        let m = p["aggregate"]["ops_per_s_median"].as_f64().unwrap();
        for (i, r) in p["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
            r["ops_per_s"] = Json::from(m * [1.0, 1.01, 0.99][i % 3]);
        }
    }
    let a = write(d, "base.json", &doc);
    let a = a.as_str();
    // The planted slowdown also lengthens every latency by 1/0.9 (+11.1 %): p99's bound is
    // set above that, so that only the throughput rows may fail, whatever the runs' real
    // latencies scatter.
    let bounds = "ops_per_s=-5%,p99_us=+20%";
    // Between-start spreads of ln(a/b), as an A/A calibration measures them.
    let tight = calibration(d, "tight.json", 0.03, 12);
    let wide = calibration(d, "wide.json", 0.10, 10);
    let tight = tight.as_str();

    // 10 % slower on every run, but each side is one server start and no between-start
    // spread is given: the ops_per_s rows are UNKNOWN, not failed and not passed (exit 0).
    let slow = write(d, "slow.json", &scaled(&doc, &[0.9]));
    let out = eb(d, &["compare", a, &slow, "--fail-on", bounds]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let unknown: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("READ_") && l.contains(" ops_per_s "))
        .collect();
    assert_eq!(unknown.len(), 2, "{}", out.stdout);
    for l in &unknown {
        assert!(
            l.contains("significance unknown")
                && l.contains("UNKNOWN: -10.0% beyond -5%, significance unknown"),
            "{l}"
        );
    }
    assert!(!out.stdout.contains("FAIL:"), "{}", out.stdout);
    assert!(out
        .stdout
        .contains("unit of significance: the server start"));
    assert!(
        out.stdout.contains("significance unknown (each side is one server start; give --between-start calibration.json or a catalog baseline)"),
        "{}",
        out.stdout
    );
    let last = out.stdout.lines().last().unwrap();
    assert!(
        last.starts_with("gate UNKNOWN: 2 of 4 gated row(s)"),
        "{last}"
    );
    assert!(out.stderr.contains("gate UNKNOWN"), "{}", out.stderr);
    let js = eb(
        d,
        &["compare", a, &slow, "--fail-on", bounds, "--format", "json"],
    );
    assert_eq!(js.code, 0, "{}", js.stderr);
    let rows: Json = serde_json::from_str(&js.stdout).unwrap();
    for r in rows.as_array().unwrap() {
        assert_eq!(r["verdict"], "unknown", "{r}");
        assert_eq!(r["unit"], "server start", "{r}");
        assert_eq!(r["starts"], serde_json::json!([1, 1]), "{r}");
    }
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["gate"]["unknown"] == true && r["metric"] == "ops_per_s"));

    // Against a between-start spread of 3 % (t(12) · 3 % = 6.5 % of ln(B/A)): worse than -5 %
    // and significant.
    let out = eb(
        d,
        &[
            "compare",
            a,
            &slow,
            "--fail-on",
            bounds,
            "--between-start",
            tight,
        ],
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let fails: Vec<&str> = out.stdout.lines().filter(|l| l.contains("FAIL:")).collect();
    assert!(!fails.is_empty(), "{}", out.stdout);
    for l in &fails {
        assert!(
            l.contains(" ops_per_s ") && l.contains("FAIL: -10.0% beyond -5%, significant"),
            "{l}"
        );
    }
    let last = out.stdout.lines().last().unwrap();
    assert!(last.starts_with("gate FAILED: "), "{}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("gate FAILED"), "{}", out.stderr);
    // Every row with a bound says what the gate made of it; the others have no gate column.
    let gated = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("READ_"))
        .filter(|l| l.contains(" ops_per_s ") || l.contains(" p99_us "))
        .count();
    let judged = out
        .stdout
        .lines()
        .filter(|l| l.contains("FAIL:") || l.contains("pass:"))
        .count();
    assert_eq!((gated, judged), (4, 4), "{}", out.stdout);

    // The markdown for a pull request: verdict, then a table of the gated rows.
    let md = eb(
        d,
        &[
            "compare",
            a,
            &slow,
            "--fail-on",
            bounds,
            "--between-start",
            tight,
            "--format",
            "markdown",
        ],
    );
    assert_eq!(md.code, 1, "{}", md.stderr);
    let lines: Vec<&str> = md.stdout.lines().collect();
    assert!(
        lines[0].starts_with("**enginebench gate FAILED** — gate FAILED: "),
        "{}",
        md.stdout
    );
    let table: Vec<&&str> = lines.iter().filter(|l| l.starts_with('|')).collect();
    assert_eq!(
        table[0].to_string(),
        "| operation | threads | metric | A | B | B/A | verdict | gate |"
    );
    assert_eq!(table[1].to_string(), "|---|--:|---|--:|--:|--:|---|---|");
    assert!(md
        .stdout
        .contains("**FAIL: -10.0% beyond -5%, significant**"));
    assert!(md.stdout.contains("not gated</summary>"), "{}", md.stdout);
    // JSON and CSV carry the gate too.
    let with_tight = |b: &str, format: &str| {
        eb(
            d,
            &[
                "compare",
                a,
                b,
                "--fail-on",
                bounds,
                "--between-start",
                tight,
                "--format",
                format,
            ],
        )
    };
    let js = with_tight(&slow, "json");
    assert_eq!(js.code, 1);
    let rows: Json = serde_json::from_str(&js.stdout).unwrap();
    let ops = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["gate"]["failed"] == true && r["metric"] == "ops_per_s")
        .expect("a failed ops_per_s row");
    assert_eq!(ops["spread"]["from"], "calibration", "{ops}");
    assert_eq!(ops["spread"]["sd"], 0.03, "{ops}");
    // The calibration covers ops_per_s: p99's significance stays unknown (within its bound).
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["metric"] == "p99_us" && r["verdict"] == "unknown"));
    let csv = with_tight(&slow, "csv");
    assert!(csv
        .stdout
        .starts_with("operation,threads,metric,a,b,ratio,verdict,disturbed,bound,change,gate\n"));
    assert!(csv.stdout.contains(",-5%,-10.0%,fail"), "{}", csv.stdout);

    // The same runs: no change at all.
    let same = write(d, "same.json", &scaled(&doc, &[1.0]));
    let out = eb(
        d,
        &[
            "compare",
            a,
            &same,
            "--fail-on",
            bounds,
            "--between-start",
            tight,
        ],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out
        .stdout
        .lines()
        .last()
        .unwrap()
        .starts_with("gate passed: 4 row(s) gated"));
    // About 13 % slower on average (runs scattered far more than that, which no longer
    // matters: a start is the unit). Against a between-start spread of 10 % (t(10) · 10 % =
    // 22 %) that is noise: it passes and the table says why.
    let noisy = write(d, "noisy.json", &scaled(&doc, &[0.5, 1.1, 1.0]));
    let gate = |spread: &str, format: &str| {
        eb(
            d,
            &[
                "compare",
                a,
                &noisy,
                "--fail-on",
                "ops_per_s=-5%",
                "--between-start",
                spread,
                "--format",
                format,
            ],
        )
    };
    let out = gate(&wide, "table");
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("beyond -5% but within noise"),
        "{}",
        out.stdout
    );
    let md = gate(&wide, "markdown");
    assert_eq!(md.code, 0);
    assert!(
        md.stdout
            .starts_with("**enginebench gate passed** — gate passed: 2 row(s) gated"),
        "{}",
        md.stdout
    );
    // Against 3 % the same 13 % is significant, whatever the scatter of the runs.
    let out = gate(tight, "table");
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    // Without --fail-on a difference never changes the exit code.
    let out = eb(d, &["compare", a, &slow]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("gate"), "{}", out.stdout);
}

#[test]
fn bad_fail_on_is_one_line_and_exit_2() {
    let dir = tempdir();
    let d = dir.path();
    // The bounds are checked before the files are read: these files do not exist.
    for (spec, says) in [
        (
            "ops_per_s=+5%",
            "worse is lower for ops_per_s, so its bound is -5%",
        ),
        ("qps=-5%", "unknown metric 'qps'"),
        ("p99_us", "not METRIC=BOUND"),
        ("p99_us=fast", "not a number"),
        ("", "empty"),
    ] {
        let out = eb(d, &["compare", "a.json", "b.json", "--fail-on", spec]);
        assert_eq!(out.code, 2, "{spec}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
        assert!(
            out.stderr.starts_with("enginebench: --fail-on: ") && out.stderr.contains(says),
            "{spec}: {}",
            out.stderr
        );
        assert!(out.stdout.is_empty());
    }
    let out = eb(d, &["compare", "a.json", "b.json", "--format", "yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    // A calibration file that is missing or is not one: one line, exit 2, before the results
    // are read (they do not exist either).
    std::fs::write(d.join("plain.json"), r#"{"plan": "x"}"#).unwrap();
    std::fs::write(d.join("broken.json"), "{").unwrap();
    for (file, says) in [
        ("none.json", "cannot read it"),
        ("plain.json", "no pooled_start_sd"),
        ("broken.json", "not a calibration.json"),
    ] {
        let out = eb(d, &["compare", "a.json", "b.json", "--between-start", file]);
        assert_eq!(out.code, 2, "{file}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
        assert!(
            out.stderr
                .starts_with(&format!("enginebench: --between-start {file}: "))
                && out.stderr.contains(says),
            "{file}: {}",
            out.stderr
        );
    }
}
