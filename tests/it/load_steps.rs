//! Load steps within a run (`--rate R@T,...`, `--threads N@T,...`): each step keeps its own
//! rate, the figures are kept per step in the result, the jsonl lines and the page (whose
//! throughput chart marks the steps), and a plain list stays a sweep.

use serde_json::Value as Json;

use crate::common::*;

/// Three rate steps on MariaDB, uniform arrivals (so that the counts due in a step are exact
/// and the 3 % bound measures the client and the server, not Poisson's spread).
#[test]
fn mariadb_three_rate_steps_keep_their_rates_and_the_page_marks_them() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let db = fresh_db(&url, "eb_load_steps");
    let dir = tempdir();
    let results = dir.path().join("results");
    let out = eb(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--target",
            &db,
            "--table-size",
            "2000",
            "--queries",
            "READ_PK_POINT",
            "--threads",
            "4",
            "--rate",
            "200@2s,400@2s,800@2s",
            "--arrivals",
            "uniform",
            "--warmup",
            "1s",
            "--runs",
            "1",
            "--report-interval",
            "500ms",
            "--format",
            "jsonl",
            "--results-dir",
            results.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let file = result_file(&results);
    let doc: Json = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_schema_valid(&doc);
    assert_eq!(doc["config"]["steps"].as_array().map(|s| s.len()), Some(3));
    let p = &doc["points"][0];
    // The warm-up ramped up to the first rate and says what it left undone.
    assert_eq!(p["warmup"]["ramp_s"].as_f64(), Some(0.5), "{}", p["warmup"]);
    assert!(p["warmup"]["backlog_ops"].is_u64(), "{}", p["warmup"]);
    let run = &p["runs"][0];
    let steps = run["steps"].as_array().expect("steps in the run");
    assert_eq!(steps.len(), 3);
    for (i, (s, target)) in steps.iter().zip([200.0, 400.0, 800.0]).enumerate() {
        assert_eq!(s["step"].as_u64(), Some(i as u64 + 1));
        assert_eq!(s["target_ops_per_s"].as_f64(), Some(target));
        assert_eq!(s["start_s"].as_f64(), Some(2.0 * i as f64));
        let achieved = s["ops_per_s"].as_f64().unwrap();
        assert!(
            (achieved / target - 1.0).abs() <= 0.03,
            "step {}: {achieved} ops/s for a target of {target}: {s}",
            i + 1
        );
        assert!(s["latency_us"]["p99_us"].as_u64() > Some(0), "{s}");
        assert!(s["response_us"]["p99_us"].as_u64() > Some(0), "{s}");
        assert_eq!(s["errors"].as_u64(), Some(0), "{s}");
    }
    let step_ops: u64 = steps.iter().map(|s| s["ops"].as_u64().unwrap()).sum();
    assert_eq!(step_ops, run["ops"].as_u64().unwrap(), "the steps add up");
    // Intervals and jsonl lines say their step.
    let in_steps: Vec<u64> = (run["intervals"].as_array().unwrap().iter())
        .filter_map(|i| i["step"].as_u64())
        .collect();
    assert!(
        in_steps.contains(&1) && in_steps.contains(&3),
        "{in_steps:?}"
    );
    let lines: Vec<Json> = (out.stdout.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["phase"] == "run" && l["step"].as_u64() == Some(2)),
        "{}",
        out.stdout
    );
    // The terminal's lines: one per step.
    assert!(out.stderr.contains("step 3 at 4 s"), "{}", out.stderr);

    // The page the run wrote: the steps on the throughput chart and in their table.
    let page = file.parent().unwrap().join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    for s in [
        "step 1: 4 thds, 200 ops/s",
        "step 2: 4 thds, 400 ops/s",
        "step 3: 4 thds, 800 ops/s",
    ] {
        assert!(html.contains(s), "{s} not on the page");
    }
    assert!(html.contains("id=load-steps"));
    let Some(bin) = crate::report::chromium() else {
        return;
    };
    let work = tempdir();
    let seen = crate::report::browse(&bin, &page, work.path());
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(seen.dom.contains("step 2: 4 thds, 400 ops/s"));
    assert!(seen.dom.contains("Load steps"));
}

/// Thread steps on SQLite: each step's connections work (the session opens the largest
/// count), and `--threads 1,2` without @ is still a sweep of two points.
#[test]
fn sqlite_thread_steps_and_a_sweep_stay_apart() {
    let dir = tempdir();
    let doc = micro_read_sqlite(
        dir.path(),
        "steps",
        &[
            "--queries",
            "READ_PK_POINT",
            "--threads",
            "1@600ms,3@600ms",
            "--warmup",
            "0",
            "--runs",
            "1",
        ],
    );
    let doc: Json = serde_json::from_str(&std::fs::read_to_string(doc).unwrap()).unwrap();
    assert_schema_valid(&doc);
    assert_eq!(doc["points"].as_array().unwrap().len(), 1);
    let p = &doc["points"][0];
    assert_eq!(p["threads"].as_u64(), Some(3));
    let steps = p["runs"][0]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["threads"].as_u64(), Some(1));
    assert_eq!(steps[1]["threads"].as_u64(), Some(3));
    assert!(
        steps.iter().all(|s| s["ops"].as_u64() > Some(0)),
        "{steps:?}"
    );
    assert!(steps[0].get("target_ops_per_s").is_none());
    // Each step keeps its histogram (a fleet's merge adds steps with it): it holds the step's
    // operations.
    for s in steps {
        let h = enginebench::measure::LatencyHist::decode(s["histogram_hdr_v2"].as_str().unwrap())
            .unwrap();
        assert_eq!(Some(h.count()), s["ops"].as_u64(), "{s}");
    }

    let sweep = micro_read_sqlite(
        dir.path(),
        "sweep",
        &[
            "--queries",
            "READ_PK_POINT",
            "--threads",
            "1,2",
            "--duration",
            "300ms",
            "--warmup",
            "0",
            "--runs",
            "1",
        ],
    );
    let sweep: Json = serde_json::from_str(&std::fs::read_to_string(sweep).unwrap()).unwrap();
    assert_eq!(sweep["points"].as_array().unwrap().len(), 2);
    assert!(sweep["points"][0]["runs"][0].get("steps").is_none());
}

/// Mistakes are one line and exit 2.
#[test]
fn bad_steps_are_usage_errors() {
    let dir = tempdir();
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    for (flags, says) in [
        (vec!["--threads", "1@1s,4"], "no @DURATION"),
        (vec!["--rate", "100@1s", "--duration", "5s"], "--duration"),
        (
            vec!["--threads", "1@1s,2@2s", "--rate", "100@1s,200@1s"],
            "same durations",
        ),
        (vec!["--rate", "100@1s", "--events", "10"], "--events"),
    ] {
        let mut args = vec!["run", "micro-read", "--target", &url];
        args.extend(flags.iter());
        let out = eb(dir.path(), &args);
        assert_eq!(out.code, 2, "{flags:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{flags:?}: {}", out.stderr);
        let lines = out.stderr.lines().filter(|l| !l.starts_with("warning:"));
        assert_eq!(lines.count(), 1, "{}", out.stderr);
    }
}
