//! The catalog (docs/catalog.md): runs record their result, `history` filters, `import`
//! without duplicates, two writers at once, a catalog that cannot be opened, the gate against
//! the recent past, the trend page, and the same on a real PostgreSQL catalog.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{eb_env, micro_read_sqlite, server_url, tempdir, Out};

fn with_catalog(dir: &Path, cat: &str, args: &[&str]) -> Out {
    eb_env(dir, args, &[("ENGINEBENCH_CATALOG", cat)])
}

fn json(out: &Out) -> Vec<Value> {
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

/// One real result (micro-read on SQLite: READ_PK_POINT at 1 and 2 threads, 3 runs each).
fn real_result(dir: &Path) -> Value {
    let f = micro_read_sqlite(
        dir,
        "base",
        &[
            "--threads",
            "1,2",
            "--runs",
            "3",
            "--duration",
            "100ms",
            "--warmup",
            "0",
            "--queries",
            "READ_PK_POINT",
        ],
    );
    serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap()
}

/// `n` copies of `base` in `dir/NAME-i/result.json`, copy i started on day `day0 + i`, its
/// runs' ops/s set by `ops(i, run)` and one server setting `buffer` at `buffer(i)`.
fn copies(
    base: &Value,
    dir: &Path,
    name: &str,
    n: usize,
    day0: usize,
    ops: impl Fn(usize, usize) -> f64,
    buffer: impl Fn(usize) -> String,
) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let mut v = base.clone();
            let day = day0 + i;
            v["started_at"] = format!("2026-10-{:02}T{:02}:00:00Z", 1 + day / 24, day % 24).into();
            v["target"]["settings"]["buffer"] = buffer(i).into();
            for p in v["points"].as_array_mut().unwrap() {
                for (r, run) in p["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
                    run["ops_per_s"] = ops(i, r).into();
                    run["disturbed"] = false.into();
                }
            }
            let d = dir.join(format!("{name}-{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("result.json"),
                serde_json::to_string_pretty(&v).unwrap(),
            )
            .unwrap();
            d
        })
        .collect()
}

/// Noise of a few tenths of a percent around 1000 ops/s: three runs differ.
fn steady(_: usize, r: usize) -> f64 {
    1000.0 * [0.996, 1.0, 1.004][r % 3]
}

fn count(cat: &str, dir: &Path, extra: &[&str]) -> usize {
    let mut args = vec!["history", "--format", "json"];
    args.extend_from_slice(extra);
    json(&with_catalog(dir, cat, &args)).len()
}

#[test]
fn runs_are_recorded_and_history_filters_them() {
    let d = tempdir();
    let cat = d.path().join("cat/catalog.db");
    let cat = cat.to_str().unwrap();
    let url = format!("sqlite://{}/bench.db", d.path().display());
    let run = |name: &str, threads: &str, q: &str| {
        let results = d.path().join(name);
        let o = with_catalog(
            d.path(),
            cat,
            &[
                "run",
                "micro-read",
                "--target",
                &url,
                "--table-size",
                "2000",
                "--results-dir",
                results.to_str().unwrap(),
                "--threads",
                threads,
                "--runs",
                "2",
                "--duration",
                "100ms",
                "--warmup",
                "0",
                "--queries",
                q,
            ],
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(o.stderr.contains("catalog: result #"), "{}", o.stderr);
    };
    run("a", "1,2", "READ_PK_POINT");
    run("b", "1", "READ_KEY_POINT");
    // Every point of both runs, oldest first; then exactly the rows each filter asks for.
    let all = json(&with_catalog(
        d.path(),
        cat,
        &["history", "--format", "json"],
    ));
    assert_eq!(all.len(), 3);
    assert_eq!(all[0]["operation"], "READ_PK_POINT");
    assert_eq!(all[2]["operation"], "READ_KEY_POINT");
    assert_eq!(all[0]["runs"], 2);
    assert!(all[0]["ops_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(count(cat, d.path(), &["--operation", "READ_PK_POINT"]), 2);
    assert_eq!(count(cat, d.path(), &["--threads", "1"]), 2);
    assert_eq!(
        count(
            cat,
            d.path(),
            &["--workload", "micro-read", "--target", "sqlite"]
        ),
        3
    );
    assert_eq!(count(cat, d.path(), &["--workload", "tpcc"]), 0);
    assert_eq!(count(cat, d.path(), &["--last", "1"]), 1);
    assert_eq!(count(cat, d.path(), &["--since", "2000-01-01"]), 3);
    assert_eq!(count(cat, d.path(), &["--since", "2099-01-01"]), 0);
    let host = all[0]["host"].as_str().unwrap().to_string();
    assert_eq!(count(cat, d.path(), &["--host", &host]), 3);
    assert_eq!(count(cat, d.path(), &["--host", "elsewhere"]), 0);
    // The table and CSV say the same rows.
    let t = with_catalog(d.path(), cat, &["history"]);
    assert!(
        t.stdout.contains("3 point(s) of 2 result(s)"),
        "{}",
        t.stdout
    );
    let c = with_catalog(d.path(), cat, &["history", "--format", "csv"]);
    assert_eq!(c.stdout.lines().count(), 4, "{}", c.stdout);
    // Importing the runs' own folders adds nothing: they are the same results.
    let o = with_catalog(
        d.path(),
        cat,
        &[
            "history",
            "import",
            d.path().join("a").to_str().unwrap(),
            d.path().join("b").to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains("imported 0 new result(s)") && o.stderr.contains("2 already there"),
        "{}",
        o.stderr
    );
    // Bad filters: one line, exit 2.
    let bad = with_catalog(d.path(), cat, &["history", "--since", "soonish"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
    let bad = with_catalog(d.path(), "mysql://x@y/z", &["history"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

#[test]
fn import_twice_adds_nothing_and_where_filters_settings() {
    let d = tempdir();
    let base = real_result(d.path());
    let cat = d.path().join("catalog.db");
    let cat = cat.to_str().unwrap();
    let folder = d.path().join("old");
    copies(&base, &folder, "r", 4, 0, steady, |i| {
        if i < 2 { "1G" } else { "2G" }.into()
    });
    // A suite-like folder: result folders below it.
    let o = with_catalog(
        d.path(),
        cat,
        &["history", "import", folder.to_str().unwrap()],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains("imported 4 new result(s)"),
        "{}",
        o.stderr
    );
    let again = with_catalog(
        d.path(),
        cat,
        &["history", "import", folder.to_str().unwrap()],
    );
    assert!(
        again.stderr.contains("imported 0 new result(s)")
            && again.stderr.contains("4 already there"),
        "{}",
        again.stderr
    );
    assert_eq!(count(cat, d.path(), &[]), 8);
    assert_eq!(count(cat, d.path(), &["--where", "buffer=2G"]), 4);
    assert_eq!(
        count(cat, d.path(), &["--where", "buffer=2G", "--threads", "2"]),
        2
    );
    assert_eq!(count(cat, d.path(), &["--where", "buffer=3G"]), 0);
    // A folder that does not exist is bad input.
    let bad = with_catalog(d.path(), cat, &["history", "import", "/nonexistent/x"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

#[test]
fn two_writers_at_once_lose_nothing() {
    let d = tempdir();
    let base = real_result(d.path());
    let cat = d.path().join("catalog.db");
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    copies(&base, &a, "r", 30, 0, steady, |_| "1G".into());
    copies(&base, &b, "r", 30, 100, steady, |_| "1G".into());
    let spawn = |dir: &Path| {
        std::process::Command::new(crate::common::BIN)
            .args(["history", "import", dir.to_str().unwrap()])
            .env("ENGINEBENCH_CATALOG", &cat)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (pa, pb) = (spawn(&a), spawn(&b));
    for p in [pa, pb] {
        let o = p.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("imported 30 new result(s)"), "{err}");
    }
    assert_eq!(count(cat.to_str().unwrap(), d.path(), &[]), 120);
}

#[test]
fn a_catalog_that_cannot_be_opened_costs_the_run_nothing() {
    let d = tempdir();
    // A file where the catalog's folder should be: nothing can be created under it.
    std::fs::write(d.path().join("blocker"), "x").unwrap();
    let cat = d.path().join("blocker/catalog.db");
    let url = format!("sqlite://{}/bench.db", d.path().display());
    let results = d.path().join("res");
    let o = with_catalog(
        d.path(),
        cat.to_str().unwrap(),
        &[
            "run",
            "micro-read",
            "--target",
            &url,
            "--table-size",
            "2000",
            "--results-dir",
            results.to_str().unwrap(),
            "--threads",
            "1",
            "--runs",
            "1",
            "--duration",
            "100ms",
            "--warmup",
            "0",
            "--queries",
            "READ_PK_POINT",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stderr.lines().filter(|l| l.contains("catalog")).collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(
        lines[0].starts_with("catalog skipped (") && lines[0].contains("blocker"),
        "{}",
        lines[0]
    );
    let f = crate::common::result_file(&results);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    assert_eq!(doc["status"], "complete");
    assert!(f.parent().unwrap().join("report.html").exists());
    // --no-catalog: not a word about it.
    let o = with_catalog(
        d.path(),
        cat.to_str().unwrap(),
        &[
            "run",
            "micro-read",
            "--target",
            &url,
            "--table-size",
            "2000",
            "--results-dir",
            d.path().join("res2").to_str().unwrap(),
            "--threads",
            "1",
            "--runs",
            "1",
            "--duration",
            "100ms",
            "--warmup",
            "0",
            "--queries",
            "READ_PK_POINT",
            "--no-catalog",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("catalog"), "{}", o.stderr);
}

#[test]
fn catalog_path_follows_the_flag_the_variable_and_xdg() {
    let d = tempdir();
    let o = eb_env(
        d.path(),
        &["catalog", "path"],
        &[("ENGINEBENCH_CATALOG", ""), ("XDG_DATA_HOME", "/data/x")],
    );
    assert_eq!(
        o.stdout.trim(),
        "/data/x/enginebench/catalog.db",
        "{}",
        o.stderr
    );
    let o = eb_env(
        d.path(),
        &["catalog", "path"],
        &[
            ("ENGINEBENCH_CATALOG", ""),
            ("XDG_DATA_HOME", ""),
            ("HOME", "/home/u"),
        ],
    );
    assert_eq!(
        o.stdout.trim(),
        "/home/u/.local/share/enginebench/catalog.db"
    );
    let o = eb_env(
        d.path(),
        &["catalog", "path"],
        &[("ENGINEBENCH_CATALOG", "/c.db")],
    );
    assert_eq!(o.stdout.trim(), "/c.db");
    let o = eb_env(
        d.path(),
        &["catalog", "path", "--catalog", "postgres://u:sekrit@h/db"],
        &[],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        !o.stdout.contains("sekrit") && o.stdout.contains("postgres://u:***@h/db"),
        "{}",
        o.stdout
    );
}

/// Five nights whose means differ by a few percent (one server start each; sd of their logs
/// 2.5 %), each with steady runs.
fn nightly(i: usize, r: usize) -> f64 {
    steady(i, r) * [1.0, 1.03, 0.97, 1.02, 0.98][i % 5]
}

/// Six results: five nights and a newest one; the gate's baseline is the five, one
/// observation each.
fn gate(newest: impl Fn(usize, usize) -> f64) -> Out {
    let d = tempdir();
    let base = real_result(d.path());
    let cat = d.path().join("catalog.db");
    let cat = cat.to_str().unwrap();
    let old = copies(&base, &d.path().join("old"), "r", 5, 0, nightly, |_| {
        "1G".into()
    });
    let new = copies(&base, &d.path().join("new"), "n", 1, 10, newest, |_| {
        "1G".into()
    });
    for f in old.iter().chain(&new) {
        let o = with_catalog(d.path(), cat, &["history", "import", f.to_str().unwrap()]);
        assert_eq!(o.code, 0, "{}", o.stderr);
    }
    let o = with_catalog(
        d.path(),
        cat,
        &[
            "compare",
            new[0].to_str().unwrap(),
            "--baseline",
            "catalog:last=5",
            "--fail-on",
            "ops_per_s=-5%",
        ],
    );
    assert!(
        o.stderr.contains("baseline: 5 catalogued result(s) pooled"),
        "{}",
        o.stderr
    );
    o
}

/// The baseline's five results are the units: their nights spread by 2.5 %, so the 95 %
/// prediction interval is t(4) · 2.5 % · sqrt(1.2) = 7.8 %. A 20 % drop fails; 6 % is beyond the
/// -5 % bound but within the nights' spread, so it passes (the runs of each night agree to
/// 0.4 %, which pooled as samples would have called it significant); 0.2 % passes.
#[test]
fn catalog_gate_fails_a_planted_slowdown_and_passes_noise() {
    let slow = gate(|i, r| steady(i, r) * 0.8);
    assert_eq!(slow.code, 1, "{}\n{}", slow.stdout, slow.stderr);
    assert!(slow.stdout.contains("ops_per_s"), "{}", slow.stdout);
    assert!(
        slow.stdout.contains("A: 5 result(s), B: 1 result(s)"),
        "{}",
        slow.stdout
    );
    let night = gate(|i, r| steady(i, r) * 0.94);
    assert_eq!(night.code, 0, "{}\n{}", night.stdout, night.stderr);
    assert!(
        night.stdout.contains("beyond -5% but within noise"),
        "{}",
        night.stdout
    );
    let same = gate(|i, r| steady(i, r) * 1.002);
    assert_eq!(same.code, 0, "{}\n{}", same.stdout, same.stderr);
    // Bad baselines: exit 2 with one line.
    let d = tempdir();
    let o = with_catalog(
        d.path(),
        d.path().join("c.db").to_str().unwrap(),
        &["compare", "x.json", "--baseline", "catalog:first=2"],
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
}

#[test]
fn trend_page_of_twenty_results_opens_clean_and_marks_the_setting_change() {
    let Some(bin) = crate::report::chromium() else {
        return;
    };
    let d = tempdir();
    let base = real_result(d.path());
    let cat = d.path().join("catalog.db");
    let cat = cat.to_str().unwrap();
    // The buffer changes from 1G to 4G at the 12th result, and throughput with it.
    let dir = d.path().join("imp");
    copies(
        &base,
        &dir,
        "r",
        20,
        0,
        |i, r| steady(i, r) * if i >= 11 { 1.3 } else { 1.0 },
        |i| if i >= 11 { "4G" } else { "1G" }.into(),
    );
    let o = with_catalog(d.path(), cat, &["history", "import", dir.to_str().unwrap()]);
    assert!(o.stderr.contains("imported 20 new"), "{}", o.stderr);
    let page = d.path().join("trend.html");
    let o = with_catalog(
        d.path(),
        cat,
        &[
            "report",
            "--trend",
            "--workload",
            "micro-read",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"), "the page has no script");
    assert!(
        html.contains("buffer 1G → 4G"),
        "the setting change is annotated"
    );
    for width in [1366, 390] {
        let work = d.path().join(format!("w{width}"));
        std::fs::create_dir_all(&work).unwrap();
        let seen = crate::report::browse_at(&bin, &page, &work, width);
        assert!(
            seen.console.is_empty(),
            "console at {width}: {:?}",
            seen.console
        );
        assert!(
            seen.page_requests.is_empty(),
            "requests at {width}: {:?}",
            seen.page_requests
        );
        // One chart per (operation, threads): READ_PK_POINT at 1 and 2 threads, 20 points each.
        let charts: Vec<&str> = seen
            .dom
            .split("<svg class=\"chart trend\"")
            .skip(1)
            .collect();
        assert_eq!(charts.len(), 2, "charts at {width}");
        for c in charts {
            let body = c.split("</svg>").next().unwrap();
            assert_eq!(body.matches("class=\"pt\"").count(), 20);
            assert!(body.contains("class=\"change\""), "the change is drawn");
        }
        // Two charts of thin lines on white fill a third of a 1366 x 1800 window (1.5 % of
        // its pixels inked, measured; 5 % at 390 px): a blank page has none.
        let ink = crate::report::inked_share(&seen.screenshot);
        assert!(ink > 0.005, "blank screenshot at {width}: {ink}");
    }
}

/// The same catalog on the private PostgreSQL server: runs record, history filters, import
/// is idempotent, two writers at once, and the gate.
#[test]
fn postgres_catalog() {
    let Some(base_url) = server_url("EB_TEST_PG_TCP_URL") else {
        return;
    };
    let url = crate::common::fresh_db(&base_url, "eb_catalog_test");
    let d = tempdir();
    let base = real_result(d.path());
    // A run records into it (the run itself is on SQLite: the catalog is what is tested).
    let results = d.path().join("run");
    let o = with_catalog(
        d.path(),
        &url,
        &[
            "run",
            "micro-read",
            "--target",
            &format!("sqlite://{}/bench.db", d.path().display()),
            "--table-size",
            "2000",
            "--results-dir",
            results.to_str().unwrap(),
            "--threads",
            "1",
            "--runs",
            "2",
            "--duration",
            "100ms",
            "--warmup",
            "0",
            "--queries",
            "READ_PK_POINT",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains("catalog: result #1 in postgres://"),
        "{}",
        o.stderr
    );
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    copies(&base, &a, "r", 20, 0, steady, |i| {
        if i < 10 { "1G" } else { "2G" }.into()
    });
    copies(&base, &b, "r", 20, 100, steady, |_| "1G".into());
    let spawn = |dir: &Path| {
        std::process::Command::new(crate::common::BIN)
            .args(["history", "import", dir.to_str().unwrap()])
            .env("ENGINEBENCH_CATALOG", &url)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (pa, pb) = (spawn(&a), spawn(&b));
    for p in [pa, pb] {
        let o = p.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && err.contains("imported 20 new"),
            "{err}"
        );
    }
    let again = with_catalog(d.path(), &url, &["history", "import", a.to_str().unwrap()]);
    assert!(
        again.stderr.contains("imported 0 new") && again.stderr.contains("20 already"),
        "{}",
        again.stderr
    );
    // 1 run point + 40 results x 2 points.
    assert_eq!(count(&url, d.path(), &[]), 81);
    assert_eq!(count(&url, d.path(), &["--where", "buffer=2G"]), 20);
    assert_eq!(count(&url, d.path(), &["--threads", "2", "--last", "3"]), 3);
    assert_eq!(
        count(
            &url,
            d.path(),
            &["--operation", "READ_PK_POINT", "--since", "2026-10-05"]
        ),
        41
    );
    // The gate on it: the run above is the newest; its baseline is the imported ones.
    let slow = copies(
        &base,
        &d.path().join("slow"),
        "s",
        1,
        600,
        |i, r| steady(i, r) * 0.8,
        |_| "1G".into(),
    );
    let o = with_catalog(
        d.path(),
        &url,
        &[
            "compare",
            slow[0].to_str().unwrap(),
            "--baseline",
            "catalog:last=5",
            "--fail-on",
            "ops_per_s=-5%",
        ],
    );
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
}

/// A 3-shard fleet against the private PostgreSQL, recording into one SQLite catalog at once,
/// then its merge: three shard results and the merged one are catalogued, each marked.
#[test]
fn fleet_shards_and_their_merge_are_recorded() {
    let Some(base) = server_url("EB_TEST_PG_TCP_URL") else {
        return;
    };
    let url = crate::common::fresh_db(&base, "eb_catalog_fleet");
    let d = tempdir();
    let cat = d.path().join("catalog.db");
    let cat = cat.to_str().unwrap();
    let o = with_catalog(
        d.path(),
        cat,
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &url,
            "--table-size",
            "2000",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let kids: Vec<_> = (0..3)
        .map(|i| {
            std::process::Command::new(crate::common::BIN)
                .args([
                    "run",
                    "oltp_point_select",
                    "--target",
                    &url,
                    "--table-size",
                    "2000",
                    "--threads",
                    "1",
                    "--warmup",
                    "0",
                    "--runs",
                    "1",
                    "--duration",
                    "1",
                    "--shard",
                    &format!("{i}/3"),
                    "--run-id",
                    "cat3",
                    "--results-dir",
                    d.path().join(format!("s{i}")).to_str().unwrap(),
                ])
                .current_dir(d.path())
                .env("ENGINEBENCH_CATALOG", cat)
                .env_remove("ENGINEBENCH_RUN_ID")
                .env_remove("ENGINEBENCH_TARGET")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for k in kids {
        let o = k.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && err.contains("catalog: result #"),
            "{err}"
        );
    }
    let files: Vec<String> = (0..3)
        .map(|i| {
            crate::common::result_file(&d.path().join(format!("s{i}")))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", "merged"]);
    let o = with_catalog(d.path(), cat, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("catalog: result #4"), "{}", o.stderr);
    let rows = json(&with_catalog(
        d.path(),
        cat,
        &["history", "--format", "json"],
    ));
    let mut fleets: Vec<String> = rows
        .iter()
        .map(|r| r["fleet"].as_str().unwrap_or("-").to_string())
        .collect();
    fleets.sort();
    assert_eq!(
        fleets,
        ["merge of 3", "shard 0/3", "shard 1/3", "shard 2/3"]
    );
}

/// micro-read on SQLite, READ_PK_POINT at 1 thread on a table of `rows`, recorded in `cat`;
/// its result file.
fn recorded_micro_read(d: &Path, cat: &str, name: &str, rows: &str, extra: &[&str]) -> PathBuf {
    // Start times have whole seconds: one run per second keeps their order in the catalog.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let results = d.join(name);
    let url = format!("sqlite://{}/bench-{rows}.db", d.display());
    let mut args = vec![
        "run",
        "micro-read",
        "--target",
        &url,
        "--table-size",
        rows,
        "--results-dir",
        results.to_str().unwrap(),
        "--threads",
        "1",
        "--runs",
        "2",
        "--duration",
        "100ms",
        "--warmup",
        "0",
        "--queries",
        "READ_PK_POINT",
    ];
    args.extend_from_slice(extra);
    let o = with_catalog(d, cat, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    crate::common::result_file(&results)
}

/// The trend page of `cat`'s micro-read results, checked in headless Chromium (no console
/// errors, no requests) when there is one; its HTML and the charts' bodies.
fn trend_page(d: &Path, cat: &str) -> (String, Vec<String>) {
    let page = d.join("trend.html");
    let o = with_catalog(
        d,
        cat,
        &[
            "report",
            "--trend",
            "--workload",
            "micro-read",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    let mut charts = Vec::new();
    if let Some(bin) = crate::report::chromium() {
        let work = d.join("browse");
        std::fs::create_dir_all(&work).unwrap();
        let seen = crate::report::browse_at(&bin, &page, &work, 1366);
        assert!(seen.console.is_empty(), "console: {:?}", seen.console);
        assert!(seen.page_requests.is_empty(), "{:?}", seen.page_requests);
        charts = seen
            .dom
            .split("<svg class=\"chart trend\"")
            .skip(1)
            .map(|c| c.split("</svg>").next().unwrap().to_string())
            .collect();
    }
    (html, charts)
}

/// Two table sizes of micro-read are two configurations in `cat`: two groups in `history`
/// (80 columns, no JSON), two series on the trend page with nothing "changed", a gate that
/// pools only its own size, and `history --same-as` listing a result's comparable past.
fn two_table_sizes_are_two_configurations(cat: &str) {
    let d = tempdir();
    let d = d.path();
    let small = [
        recorded_micro_read(d, cat, "s1", "2000", &[]),
        recorded_micro_read(d, cat, "s2", "2000", &[]),
    ];
    let big = [
        recorded_micro_read(d, cat, "b1", "20000", &[]),
        recorded_micro_read(d, cat, "b2", "20000", &[]),
    ];
    let rows = json(&with_catalog(d, cat, &["history", "--format", "json"]));
    assert_eq!(rows.len(), 4);
    let id = |i: usize, k: &str| rows[i][k].as_str().unwrap().to_string();
    assert_eq!(id(0, "config_id"), id(1, "config_id"));
    assert_eq!(id(2, "config_id"), id(3, "config_id"));
    assert_ne!(id(0, "config_id"), id(2, "config_id"));
    assert_ne!(id(0, "work_id"), id(2, "work_id"));
    assert_eq!(rows[0]["config"]["work"]["table_size"], "2000");
    assert_eq!(rows[2]["config"]["work"]["table_size"], "20000");
    // The table: one line per point within 80 columns, the sizes named, no JSON.
    let t = with_catalog(d, cat, &["history"]);
    assert_eq!(t.code, 0, "{}", t.stderr);
    for line in t.stdout.lines() {
        assert!(line.chars().count() <= 80, "{line:?}\n{}", t.stdout);
        assert!(!line.contains('{'), "{line:?}");
    }
    assert!(
        t.stdout.contains("table_size=2000\n") && t.stdout.contains("table_size=20000\n"),
        "{}",
        t.stdout
    );
    assert_eq!(t.stdout.matches("\nconfig ").count(), 2, "{}", t.stdout);
    assert!(t
        .stdout
        .contains("4 point(s) of 4 result(s) in 2 configuration(s)"));
    // A result's comparable past: by its file, or by its catalogue id.
    let same = json(&with_catalog(
        d,
        cat,
        &[
            "history",
            "--format",
            "json",
            "--same-as",
            small[0].to_str().unwrap(),
        ],
    ));
    assert_eq!(same.len(), 2);
    assert!(same
        .iter()
        .all(|r| r["config"]["work"]["table_size"] == "2000"));
    let by_id = format!("#{}", rows[3]["id"]);
    let same = json(&with_catalog(
        d,
        cat,
        &["history", "--format", "json", "--same-as", &by_id],
    ));
    assert_eq!(same.len(), 2);
    assert!(same
        .iter()
        .all(|r| r["config"]["work"]["table_size"] == "20000"));
    // The gate pools only the same size, and says how many it found of how many asked.
    for (newest, own) in [(&small[1], &rows[0]), (&big[1], &rows[2])] {
        let o = with_catalog(
            d,
            cat,
            &[
                "compare",
                newest.to_str().unwrap(),
                "--baseline",
                "catalog:last=5",
            ],
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(
            o.stderr.contains(&format!(
                "baseline: 1 catalogued result(s) pooled (#{}; 1 of the 5 asked for found",
                own["id"]
            )),
            "{}",
            o.stderr
        );
    }
    // The first of the big ones has no comparable past: the error says what differs from
    // the newest earlier result of the workload.
    let o = with_catalog(
        d,
        cat,
        &[
            "compare",
            big[0].to_str().unwrap(),
            "--baseline",
            "catalog:last=5",
        ],
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "the newest earlier result of this workload, #{}, differs in: table_size 2000 → 20000",
            rows[1]["id"]
        )),
        "{}",
        o.stderr
    );
    let (html, charts) = trend_page(d, cat);
    assert!(
        html.contains("READ_PK_POINT @1 threads, sqlite, table_size=2000<"),
        "{html}"
    );
    assert!(html.contains("READ_PK_POINT @1 threads, sqlite, table_size=20000<"));
    assert!(
        !html.contains("What changed"),
        "two results of one configuration"
    );
    assert!(!html.contains("class=\"change\""));
    if !charts.is_empty() {
        assert_eq!(charts.len(), 2);
        for c in &charts {
            assert_eq!(c.matches("<circle class=\"pt").count(), 2);
        }
    }
}

#[test]
fn two_table_sizes_are_two_configurations_in_sqlite() {
    let d = tempdir();
    let cat = d.path().join("catalog.db");
    two_table_sizes_are_two_configurations(cat.to_str().unwrap());
}

#[test]
fn two_table_sizes_are_two_configurations_in_postgres() {
    let Some(base_url) = server_url("EB_TEST_PG_TCP_URL") else {
        return;
    };
    let url = crate::common::fresh_db(&base_url, "eb_catalog_sizes");
    two_table_sizes_are_two_configurations(&url);
}

/// A run on a freshly started private server of `kind`, recorded in `cat`.
fn managed_run(d: &Path, cat: &str, kind: &str, name: &str, extra: &[&str]) -> Value {
    let results = d.join(name);
    let mut args = vec![
        "run",
        "micro-read",
        "--server",
        kind,
        "--table-size",
        "2000",
        "--results-dir",
        results.to_str().unwrap(),
        "--threads",
        "1",
        "--runs",
        "1",
        "--duration",
        "200ms",
        "--warmup",
        "0",
        "--queries",
        "READ_PK_POINT",
    ];
    args.extend_from_slice(extra);
    let o = with_catalog(d, cat, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let f = crate::common::result_file(&results);
    serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap()
}

/// The settings that differ between two results, by name.
fn settings_differing(a: &Value, b: &Value) -> Vec<String> {
    let (sa, sb) = (
        a["target"]["settings"].as_object().unwrap(),
        b["target"]["settings"].as_object().unwrap(),
    );
    let mut keys: Vec<&String> = sa.keys().chain(sb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| sa.get(*k) != sb.get(*k))
        .cloned()
        .collect()
}

/// Two starts of one server profile are one configuration: the settings that differ between
/// them (listed by the test: ports, paths, ids) are all left out, and the trend records no
/// change; a `--server-opt` on a third start is a change of setup in the same series, shown
/// in words with the setting it changed.
#[test]
fn two_starts_of_one_profile_are_one_configuration() {
    for kind in ["mariadb", "postgres"] {
        if !crate::servers::have(kind) {
            continue;
        }
        let d = tempdir();
        let d = d.path();
        let cat = d.join("catalog.db");
        let cat = cat.to_str().unwrap();
        let a = managed_run(d, cat, kind, "a", &[]);
        let b = managed_run(d, cat, kind, "b", &[]);
        let differ = settings_differing(&a, &b);
        eprintln!("{kind}: settings that differ between two starts: {differ:?}");
        assert!(
            !differ.is_empty(),
            "two starts differ in ports and paths at least"
        );
        let opt = match kind {
            "mariadb" => "innodb_buffer_pool_size=268435456",
            _ => "work_mem=8MB",
        };
        managed_run(d, cat, kind, "c", &["--server-opt", opt]);
        let rows = json(&with_catalog(d, cat, &["history", "--format", "json"]));
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[0]["config_id"], rows[1]["config_id"],
            "{kind}: {differ:?}"
        );
        assert_ne!(rows[1]["config_id"], rows[2]["config_id"]);
        assert_eq!(rows[1]["work_id"], rows[2]["work_id"]);
        let (html, charts) = trend_page(d, cat);
        assert!(
            html.contains(&format!("server_opts (none) → {opt}")),
            "{kind}: {html}"
        );
        let setting = match kind {
            "mariadb" => "innodb_buffer_pool_size 134217728 → 268435456",
            _ => "work_mem 4096kB → 8192kB",
        };
        assert!(html.contains(setting), "{kind}: {html}");
        assert_eq!(
            html.matches("<li>").count(),
            1,
            "{kind}: one change, at the third"
        );
        if !charts.is_empty() {
            assert_eq!(charts.len(), 1);
            assert_eq!(charts[0].matches("class=\"change\"").count(), 1);
        }
    }
}
