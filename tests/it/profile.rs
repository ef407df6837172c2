//! `--profile-server`: a point-select run against a real MariaDB samples the server with perf,
//! names its query path among the top functions, and the profile's CPU per operation agrees
//! with the server CPU the run measured from /proc (also for iiBench, which runs its own loop);
//! without perf the run goes on and says why.

use serde_json::Value as Json;

use crate::common::*;

fn point_select(
    dir: &std::path::Path,
    url: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Out, Json) {
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--target",
        url,
        "--threads",
        "2",
        "--warmup",
        "1s",
        "--duration",
        "4s",
        "--runs",
        "1",
        "--table-size",
        "1000",
        "--format",
        "json",
    ];
    args.extend(extra);
    json_run(dir, &args, env)
}

/// Run enginebench with `args` (which ask for `--format json`): it exits 0 and its result is
/// valid against the schema.
fn json_run(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (Out, Json) {
    let out = eb_env(dir, args, env);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    (out, doc)
}

#[test]
fn mariadb_point_select_profile() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_profile");
    let dir = tempdir();
    let (out, doc) = point_select(dir.path(), &url, &["--profile-server"], &[]);
    let run = &doc["points"][0]["runs"][0];
    let p = &run["server_profile"];
    assert!(p.is_object(), "no profile: {}", out.stderr);
    assert_eq!(p["hz"], 199);
    let names: Vec<&str> = p["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    // The server's query path: its parser, its dispatcher or the handler interface.
    let query_path = [
        "MYSQLparse",
        "dispatch_command",
        "mysql_execute_command",
        "handler::",
        "ha_innobase::",
        "JOIN::",
        "Prepared_statement::",
        "mysql_parse",
        "do_command",
        "lex_",
    ];
    assert!(
        names
            .iter()
            .any(|n| query_path.iter().any(|q| n.contains(q))),
        "{names:?}"
    );
    let profiled = p["cpu_us_per_op"].as_f64().unwrap();
    let measured = run["server_process"]["cpu_us_per_op"].as_f64().unwrap();
    let ratio = profiled / measured;
    // The run keeps how much of the server's CPU the samples stand for, and says it.
    let coverage = p["coverage"].as_f64().expect("coverage");
    // (Both per-operation figures are rounded in the file.)
    assert!(
        (coverage / ratio - 1.0).abs() < 0.01,
        "{coverage} vs {ratio}"
    );
    assert!(
        out.stderr.contains("of the server's CPU in /proc"),
        "{}",
        out.stderr
    );
    // Only gross errors (the wrong processes, half the run unsampled): a server that sleeps
    // once per query is sampled erratically on a VM: 0.63-1.04 of /proc in 30 runs of this
    // test's settings on 2026-11-29, with and without a CPU-bound process beside it, and
    // 0.61-1.27 with one connection (docs/profile.md, "How much of the CPU it sees").
    assert!(
        (0.5..=1.5).contains(&ratio),
        "profile {profiled:.1} us/op vs /proc {measured:.1} us/op ({ratio:.3})"
    );
    for k in [
        "kernel_share",
        "lock_share",
        "io_share",
        "network_share",
        "engine_share",
        "unresolved_share",
    ] {
        let v = p[k].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&v), "{k} {v}");
    }
    assert!(p["kernel_share"].as_f64().unwrap() > 0.05, "{p}");
    assert!(!p["folded"].as_array().unwrap().is_empty());
}

#[test]
fn mariadb_profile_without_perf_says_why() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_profile_noperf");
    let dir = tempdir();
    let (out, doc) = point_select(
        dir.path(),
        &url,
        &["--profile-server"],
        &[("ENGINEBENCH_PERF", "/nonexistent/perf")],
    );
    let why: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("--profile-server: not profiling"))
        .collect();
    assert_eq!(why.len(), 1, "{}", out.stderr);
    assert!(why[0].contains("/nonexistent/perf"), "{}", why[0]);
    let run = &doc["points"][0]["runs"][0];
    assert!(run["server_profile"].is_null());
    assert!(run["server_process"]["cpu_us_per_op"].as_f64().unwrap() > 0.0);
}

/// A suite of two cells on the test MariaDB (by URL), InnoDB and MyISAM, with
/// `--profile-server`: the claim comparing them lists the server functions that differ most,
/// and its folded "why" on the page holds the flame graphs, which the browser shows without a
/// script error or an outside request.
#[test]
fn claim_shows_the_functions_that_differ_and_flame_graphs() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_profile_claim");
    let dir = tempdir();
    let plan = format!(
        r#"
name = "profile-claim"
[[servers]]
url = "{url}"
name = "mariadb"

[[sections]]
name = "read"
workload = "micro-read"
engines = ["InnoDB", "MyISAM"]
threads = [2]
[sections.run]
queries = ["READ_KEY_POINT"]
table_size = 2000
warmup = "500ms"
duration = "1500ms"
# Two runs: a claim decides nothing from one value, and leaves its evidence out.
runs = 2

[[claims]]
id = "P1"
says = "READ_KEY_POINT: InnoDB faster than MyISAM"
section = "read"
metric = "ops_per_s"
operation = "READ_KEY_POINT"
a = {{ engine = "InnoDB" }}
b = {{ engine = "MyISAM" }}
expect = "a > b"
"#
    );
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let out = eb(
        dir.path(),
        &[
            "suite",
            "plan.toml",
            "--results-dir",
            "s",
            "--passes",
            "1",
            "--profile-server",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let s = dir.path().join("s");
    // The test machine is seldom quiet and a disturbed run leaves a claim without evidence:
    // the flags are cleared on disk and the suite, with nothing left to run, evaluates again.
    for cell in std::fs::read_dir(&s).unwrap().flatten() {
        for run in std::fs::read_dir(cell.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = run.path().join("result.json");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let mut doc: Json = serde_json::from_str(&text).unwrap();
            for p in doc["points"].as_array_mut().unwrap() {
                for r in p["runs"].as_array_mut().unwrap() {
                    assert!(r["server_profile"].is_object(), "{path:?} not profiled");
                    r["disturbed"] = false.into();
                }
            }
            std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
        }
    }
    let again = eb(
        dir.path(),
        &["suite", "plan.toml", "--results-dir", "s", "--passes", "1"],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let claims: Json =
        serde_json::from_str(&std::fs::read_to_string(s.join("claims.json")).unwrap()).unwrap();
    let functions = claims[0]["functions"].as_array().expect("functions");
    assert!(!functions.is_empty(), "{claims:#}");
    assert!(functions[0]["a_us_per_op"].is_number());
    let html = std::fs::read_to_string(s.join("report.html")).unwrap();
    assert_eq!(
        html.matches("class=\"flame\"").count(),
        3,
        "two cells and their difference"
    );
    if let Some(bin) = crate::report::chromium() {
        let work = tempdir();
        let seen = crate::report::browse(&bin, &s.join("report.html"), work.path());
        assert!(seen.console.is_empty(), "console: {:?}", seen.console);
        assert!(seen.page_requests.is_empty(), "{:?}", seen.page_requests);
        assert!(seen.dom.contains("class=\"flame\""));
    }
}

/// A workload with its own run loop (iiBench: windows of batches, not the runner's timed runs)
/// is profiled too: the run's record has the server's profile, and its CPU per batch agrees
/// with what /proc measured.
#[test]
fn iibench_run_is_profiled_too() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_profile_iibench");
    let dir = tempdir();
    let (out, doc) = json_run(
        dir.path(),
        &[
            "run",
            "iibench",
            "--target",
            &url,
            "--max-rows",
            "50000",
            "--rows-per-commit",
            "200",
            "--format",
            "json",
            // Both sides need the resolution: /proc counts the server's CPU in 10 ms ticks
            // (about 30 here) and 999 Hz takes about 300 samples; at 20,000 rows and 199 Hz
            // (12 ticks, 24 samples) the ratio scattered 0.77-1.21.
            "--profile-server=999",
        ],
        &[],
    );
    let run = &doc["points"][0]["runs"][0];
    let p = &run["server_profile"];
    assert!(p.is_object(), "no profile: {}", out.stderr);
    assert!(p["samples"].as_u64().unwrap() > 100, "{p}");
    let profiled = p["cpu_us_per_op"].as_f64().unwrap();
    let measured = run["server_process"]["cpu_us_per_op"].as_f64().unwrap();
    let ratio = profiled / measured;
    // 0.93-1.04 in 8 runs on a quiet host, 0.993-1.006 in 5 with a CPU-bound process beside
    // it (2026-11-29): a server working in long stretches is sampled evenly.
    let coverage = p["coverage"].as_f64().expect("coverage");
    assert!(
        (coverage / ratio - 1.0).abs() < 0.01,
        "{coverage} vs {ratio}"
    );
    assert!(
        (0.8..=1.2).contains(&ratio),
        "profile {profiled:.1} us/batch vs /proc {measured:.1} us/batch ({ratio:.3})"
    );
}

/// sql-bench times only parts of each operation (its setup is untimed): each operation that
/// ran keeps the profile of its timed parts, per test, with its coverage of /proc's count over
/// the same parts.
#[test]
fn sqlbench_timed_parts_are_profiled() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_profile_sqlbench");
    let dir = tempdir();
    let (out, doc) = json_run(
        dir.path(),
        &[
            "run",
            "sqlbench",
            "--target",
            &url,
            "--scale",
            "0.1",
            "--ops",
            "select_key,count_on_key",
            "--engines",
            "InnoDB",
            "--format",
            "json",
            "--profile-server=999",
        ],
        &[],
    );
    let ops = doc["sections"]["sqlbench"]["engines"][0]["ops"]
        .as_array()
        .unwrap();
    assert_eq!(ops.len(), 2);
    for o in ops {
        assert_eq!(o["status"], "ok", "{o}");
        let p = &o["server_profile"];
        assert!(p.is_object(), "{}: no profile: {}", o["name"], out.stderr);
        assert!(p["samples"].as_u64().unwrap() > 50, "{p}");
        // Gross errors only (the untimed setup sampled too, or the wrong processes): the
        // coverage of a server that sleeps once per query scatters (see the point select).
        let coverage = p["coverage"].as_f64().expect("coverage");
        assert!((0.5..=1.5).contains(&coverage), "{}: {coverage}", o["name"]);
    }
    assert_eq!(out.stderr.matches("profile: ").count(), 2, "{}", out.stderr);
}

/// A profiler started paused samples only between `resume` and `pause`: a process that burns
/// a CPU for 0.3 s paused, 0.6 s sampled and 0.3 s paused again is sampled for the CPU it used
/// in the middle part (/proc), not for all of it. Real perf, on every CPU (root, as in CI);
/// skipped where perf cannot sample.
#[test]
fn a_paused_profiler_samples_only_what_it_resumes() {
    use enginebench::measure::{proc::ProcSample, profile};
    use std::time::Duration;
    let mut busy = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let p = profile::start(busy.id(), 999, false);
    let Ok(mut p) = p else {
        let _ = busy.kill();
        let _ = busy.wait();
        eprintln!("skipped: {}", p.err().unwrap());
        return;
    };
    let cpu = || ProcSample::of_tree(busy.id()).unwrap().cpu_s();
    std::thread::sleep(Duration::from_millis(300));
    p.resume();
    let c0 = cpu();
    std::thread::sleep(Duration::from_millis(600));
    let c1 = cpu();
    p.pause();
    std::thread::sleep(Duration::from_millis(300));
    let all = cpu();
    let prof = p.stop(1);
    let _ = busy.kill();
    let _ = busy.wait();
    let sampled = prof.unwrap().cpu_s;
    let (resumed, total) = (c1 - c0, all);
    // /proc counts in 10 ms ticks; with the pause ignored the samples would be near `total`.
    assert!(
        (sampled - resumed).abs() <= 0.2 * resumed + 0.02,
        "sampled {sampled:.3} s, used {resumed:.3} s while resumed, {total:.3} s in all"
    );
}
