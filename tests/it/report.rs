//! The report: a real run's results rendered to HTML and opened in headless Chromium (no console
//! errors, no network requests, every chart present and non-empty, a non-blank screenshot);
//! CSV and table output pinned by snapshots; compare flags exactly the known differences.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

use crate::common::*;

/// Two tiny SQLite results with the same points (2 operations × threads 1,2 × 3 runs).
fn two_results(dir: &Path) -> (PathBuf, PathBuf) {
    let run = |name| {
        micro_read_sqlite(
            dir,
            name,
            &[
                "--threads",
                "1,2",
                "--runs",
                "3",
                "--duration",
                "150ms",
                "--warmup",
                "0",
                "--queries",
                "READ_PK_POINT,READ_KEY_RANGE",
            ],
        )
    };
    (run("a"), run("b"))
}

pub(crate) fn chromium() -> Option<String> {
    let bin = std::env::var("EB_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    if Command::new(&bin)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
    {
        return Some(bin);
    }
    if std::env::var("EB_REQUIRE_SERVERS").as_deref() == Ok("1") {
        panic!("chromium not found but EB_REQUIRE_SERVERS=1: scripts/test.sh installs it");
    }
    eprintln!("skipped: chromium not installed");
    None
}

pub(crate) struct Browsed {
    pub dom: String,
    pub console: Vec<String>,
    pub page_requests: Vec<String>,
    pub screenshot: PathBuf,
}

/// Open `page` in headless Chromium: its DOM, console messages, requests made by the page (not
/// the browser's own background requests, whose initiator is "not an origin"), a screenshot.
pub(crate) fn browse(bin: &str, page: &Path, work: &Path) -> Browsed {
    browse_at(bin, page, work, 1300)
}

/// `browse` with a window `width` px wide (the DOM is read at that width too).
pub(crate) fn browse_at(bin: &str, page: &Path, work: &Path, width: u32) -> Browsed {
    let net = work.join("net.json");
    let shot = work.join("shot.png");
    let url = format!("file://{}", page.display());
    let common = |ud: &str| {
        let mut c = Command::new(bin);
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ]);
        c.arg(format!("--user-data-dir={}", work.join(ud).display()));
        c
    };
    let o = common("ud1")
        .arg(format!("--log-net-log={}", net.display()))
        .arg(format!("--window-size={width},1800"))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&o.stdout).into_owned();
    let console = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(String::from)
        .collect();
    let log: Json = serde_json::from_str(&std::fs::read_to_string(&net).unwrap()).unwrap();
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        .as_u64()
        .unwrap();
    let page_requests = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_u64() == Some(start_job) && e["params"]["url"].is_string())
        .filter(|e| e["params"]["initiator"].as_str() != Some("not an origin"))
        .map(|e| e["params"]["url"].as_str().unwrap().to_string())
        .collect();
    let s = common("ud2")
        .args([
            &format!("--window-size={width},1800"),
            &format!("--screenshot={}", shot.display()),
            &url,
        ])
        .output()
        .unwrap();
    assert!(
        s.status.success(),
        "screenshot failed: {}",
        String::from_utf8_lossy(&s.stderr)
    );
    Browsed {
        dom,
        console,
        page_requests,
        screenshot: shot,
    }
}

/// Share of pixels that are not (nearly) white.
pub(crate) fn inked_share(png_path: &Path) -> f64 {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let total = pixels.len() / px;
    let inked = pixels
        .chunks(px)
        .filter(|p| p.iter().take(3).any(|&c| c < 200))
        .count();
    inked as f64 / total as f64
}

#[test]
fn html_report_in_headless_chromium() {
    let dir = tempdir();
    let (a, b) = two_results(dir.path());
    let page = dir.path().join("report.html");
    let r = eb(
        dir.path(),
        &[
            "report",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.len() < 200_000,
        "the report should be light enough to e-mail: {} bytes",
        html.len()
    );
    assert!(
        !html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http")
    );
    // The run wrote its own single-result report too.
    assert!(a.parent().unwrap().join("report.html").exists());

    let Some(bin) = chromium() else { return };
    let work = tempdir();
    let seen = browse(&bin, &page, work.path());
    assert!(
        seen.console.is_empty(),
        "console messages: {:?}",
        seen.console
    );
    assert!(
        seen.page_requests.is_empty(),
        "the page made requests: {:?}",
        seen.page_requests
    );
    // Every chart is present and non-empty: 2 throughput, 2 latency, 2 ops x 2 results time series.
    let charts: Vec<&str> = seen.dom.split("<svg class=\"chart\"").skip(1).collect();
    assert_eq!(charts.len(), 8, "charts in the DOM");
    for (i, c) in charts.iter().enumerate() {
        let body = c.split("</svg>").next().unwrap();
        let points = body.matches("class=\"pt\"").count();
        assert!(points > 0, "chart {i} has no plotted points");
    }
    assert!(seen.dom.contains("Throughput vs threads") && seen.dom.contains("Comparison:"));
    let ink = inked_share(&seen.screenshot);
    assert!(
        ink > 0.02,
        "screenshot looks blank ({:.1} % inked)",
        ink * 100.0
    );

    // Negative control: the same checks catch a page with a console error and a request.
    let bad = work.path().join("bad.html");
    std::fs::write(&bad, "<!DOCTYPE html><html><body><img src=\"http://127.0.0.1:9/x.png\"><script>console.error('boom')</script></body></html>").unwrap();
    let ctl = browse(&bin, &bad, &work.path().join("ctl"));
    assert!(
        !ctl.console.is_empty(),
        "the console check must see console.error"
    );
    assert!(
        ctl.page_requests.iter().any(|u| u.contains("127.0.0.1:9")),
        "the request check must see the image load: {:?}",
        ctl.page_requests
    );
}

/// Compare flags exactly the differences put in: B is A with READ_KEY_RANGE at 2 threads 1.5x
/// faster; every other metric and point is identical up to tiny noise. Each result is one
/// server start: without a between-start spread nothing is called significant (significance
/// unknown); with a calibrated one (ops_per_s) exactly the planted difference is, and a single
/// run per side changes nothing.
#[test]
fn compare_flags_exactly_the_known_differences() {
    let dir = tempdir();
    let (a, _) = two_results(dir.path());
    let mut doc: Json = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    // Make A's runs differ a little from run to run so that noise is measurable.
    for p in doc["points"].as_array_mut().unwrap() {
        for (i, r) in p["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
            r["ops_per_s"] = Json::from(1000.0 + 10.0 * i as f64);
        }
    }
    let mut b = doc.clone();
    for p in b["points"].as_array_mut().unwrap() {
        let boost = p["operation"] == "READ_KEY_RANGE" && p["threads"] == 2;
        for (i, r) in p["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
            let base = 1000.0 + 10.0 * ((i + 1) % 3) as f64; // same values, other order
            r["ops_per_s"] = Json::from(if boost { base * 1.5 } else { base });
        }
    }
    let (pa, pb) = (dir.path().join("A.json"), dir.path().join("B.json"));
    std::fs::write(&pa, doc.to_string()).unwrap();
    std::fs::write(&pb, b.to_string()).unwrap();
    let cal = dir.path().join("calibration.json");
    std::fs::write(&cal, r#"{"pooled_start_sd": 0.05, "pooled_df": 8}"#).unwrap();
    let cal = cal.to_str().unwrap();
    let json_rows = |extra: &[&str]| -> Json {
        let mut args = vec![
            "compare",
            pa.to_str().unwrap(),
            pb.to_str().unwrap(),
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let out = eb(dir.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    };
    let rows = json_rows(&[]);
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| r["verdict"] == "unknown" && r["starts"] == serde_json::json!([1, 1])),
        "{rows}"
    );
    let rows = json_rows(&["--between-start", cal]);
    let significant: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "significant")
        .map(|r| {
            format!(
                "{} {} {}",
                r["operation"].as_str().unwrap(),
                r["threads"],
                r["metric"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(significant, vec!["READ_KEY_RANGE 2 ops_per_s"]);
    let table = eb(
        dir.path(),
        &[
            "compare",
            pa.to_str().unwrap(),
            pb.to_str().unwrap(),
            "--between-start",
            cal,
        ],
    );
    assert!(
        table.stdout.contains("1.500  significant"),
        "{}",
        table.stdout
    );
    let table = eb(
        dir.path(),
        &["compare", pa.to_str().unwrap(), pb.to_str().unwrap()],
    );
    assert!(
        table.stdout.contains("1.500  significance unknown")
            && table.stdout.contains("(each side is one server start; give --between-start calibration.json or a catalog baseline)"),
        "{}",
        table.stdout
    );

    // One run per side is still one server start per side: the same verdicts.
    let mut single = doc.clone();
    for p in single["points"].as_array_mut().unwrap() {
        p["runs"].as_array_mut().unwrap().truncate(1);
    }
    std::fs::write(&pa, single.to_string()).unwrap();
    let out = eb(
        dir.path(),
        &[
            "compare",
            pa.to_str().unwrap(),
            pb.to_str().unwrap(),
            "--between-start",
            cal,
        ],
    );
    // A's single run is 1000 against B's mean of 1515.
    assert!(out.stdout.contains("1.515  significant"), "{}", out.stdout);
}

/// CSV and the terminal table are pinned for a fixed synthetic result (no timestamps in them).
#[test]
fn csv_and_table_snapshots() {
    let dir = tempdir();
    let (a, _) = two_results(dir.path());
    let mut doc: Json = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    doc["points"].as_array_mut().unwrap().truncate(1);
    let p = &mut doc["points"][0];
    p["aggregate"]["ops_per_s_max"] = Json::from(12345.6);
    p["runs"].as_array_mut().unwrap().truncate(1);
    let r = &mut p["runs"][0];
    for (k, v) in [
        ("ops", 100.0),
        ("rows", 100.0),
        ("elapsed_s", 0.5),
        ("ops_per_s", 200.0),
        ("errors_total", 0.0),
    ] {
        r[k] = if k == "elapsed_s" || k == "ops_per_s" {
            Json::from(v)
        } else {
            Json::from(v as u64)
        };
    }
    r["latency_us"] = serde_json::json!({"min_us":1,"mean_us":2.5,"p50_us":2,"p90_us":3,"p95_us":4,"p99_us":5,"p99_9_us":6,"max_us":7});
    r["client_cpu"]["us_per_op"] = Json::from(3.25);
    r["client_cpu"]["voluntary_cs_per_op"] = Json::from(0.125);
    r["host_cpu"] = serde_json::json!({"busy_s": 1.0, "others_s": 0.125, "others_cpus": 0.25});
    r["disturbed"] = Json::from(true);
    doc["target"]["engine"] = Json::from("sqlite-btree");
    let f = dir.path().join("snap.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    let csv = eb(
        dir.path(),
        &["report", f.to_str().unwrap(), "--format", "csv", "-o", "-"],
    );
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    assert_eq!(
        csv.stdout,
        "workload,operation,threads,run,ops,rows,elapsed_s,ops_per_s,errors,p50_us,p90_us,p95_us,p99_us,p99_9_us,max_us,mean_us,client_cpu_us_per_op,server_cpu_us_per_op,client_cpu_share,written_bytes_per_op,others_cpus,disturbed,client_sleeps_per_op,server_sleeps_per_op\n\
         micro-read,READ_PK_POINT,1,1,100,100,0.500,200.0,0,2,3,4,5,6,7,2.5,3.25,,,,0.250,true,0.125,\n"
    );
    // Without -o the CSV goes to a file named for it, not to report.html.
    let to_file = eb(
        dir.path(),
        &["report", f.to_str().unwrap(), "--format", "csv"],
    );
    assert_eq!(to_file.code, 0, "{}", to_file.stderr);
    let written = std::fs::read_to_string(dir.path().join("report.csv")).expect("report.csv");
    assert_eq!(written, csv.stdout);
    assert!(!dir.path().join("report.html").exists());
}

/// `--format hgrm`: one HdrHistogram percentile file per point whose rows at 50, 99 and 99.9 %
/// (and 100 %) are the result's own p50, p99, p99.9 (and max) of the merged runs; bad input is
/// one line and exit 2.
#[test]
fn hgrm_files_hold_the_results_percentiles() {
    let dir = tempdir();
    let d = dir.path();
    let result = micro_read_sqlite(
        d,
        "r",
        &[
            "--threads",
            "1,2",
            "--runs",
            "2",
            "--duration",
            "200ms",
            "--warmup",
            "0",
            "--queries",
            "READ_PK_POINT,READ_KEY_RANGE",
        ],
    );
    let res = result.to_str().unwrap();
    let out = d.join("hgrm");
    let r = eb(
        d,
        &[
            "report",
            res,
            "--format",
            "hgrm",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = json(&result);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        let name = format!("{}@{}.hgrm", p["operation"].as_str().unwrap(), p["threads"]);
        let text = std::fs::read_to_string(out.join(&name)).expect(&name);
        assert!(
            text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)\n\n"),
            "{text}"
        );
        let l = &p["aggregate"]["latency_us"];
        for (percent, key) in [
            (50.0, "p50_us"),
            (99.0, "p99_us"),
            (99.9, "p99_9_us"),
            (100.0, "max_us"),
        ] {
            assert_eq!(
                Some(hgrm_value_at(&text, percent)),
                l[key].as_u64(),
                "{name} at {percent}: {text}"
            );
        }
        let ops: u64 = p["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["ops"].as_u64().unwrap())
            .sum();
        assert!(
            text.contains(&format!("Total count    = {ops:>12}]")),
            "{name}: {ops} ops: {text}"
        );
    }
    // Two results: each file named for its result too.
    let two = d.join("two");
    let r = eb(
        d,
        &[
            "report",
            res,
            res,
            "--format",
            "hgrm",
            "-o",
            two.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        two.join("sqlite_micro-read_1-READ_PK_POINT@1.hgrm")
            .exists(),
        "{}",
        r.stderr
    );
    assert!(
        two.join("sqlite_micro-read_2-READ_KEY_RANGE@2.hgrm")
            .exists(),
        "{}",
        r.stderr
    );

    // Bad input: one line on stderr, exit 2, nothing half written.
    let file = d.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let mut no_hist = doc.clone();
    no_hist["points"][0]["runs"][0]["histogram_hdr_v2"] = Json::from("");
    let no_hist_file = d.join("no-hist.json");
    std::fs::write(&no_hist_file, no_hist.to_string()).unwrap();
    let fresh = d.join("fresh");
    for (args, says) in [
        (vec![res, "-o", file.to_str().unwrap()], "is not a folder"),
        (vec![res, "-o", "-"], "not stdout"),
        (
            vec![
                no_hist_file.to_str().unwrap(),
                "-o",
                fresh.to_str().unwrap(),
            ],
            "has no latency histogram",
        ),
    ] {
        let mut a = vec!["report", "--format", "hgrm"];
        a.extend(args);
        let r = eb(d, &a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{a:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(says) && !r.stderr.contains("panicked"),
            "{}",
            r.stderr
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    assert!(!fresh.exists());
}

/// The value of the first row of a .hgrm file at or above `percent` (its Percentile column has
/// 12 decimals: 0.999000000000 is the level 99.9 %).
fn hgrm_value_at(text: &str, percent: f64) -> u64 {
    text.lines()
        .skip(2)
        .take_while(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|c| c[1].parse::<f64>().unwrap() >= percent / 100.0 - 1e-12)
        .map(|c| c[0].parse::<f64>().unwrap() as u64)
        .expect("a row at or above the level")
}

/// A TPC-C result shows tpmC vs threads, NewOrders over time and the per-transaction table,
/// rendered in a real browser with every chart plotted.
#[test]
fn tpcc_report_in_headless_chromium() {
    let dir = tempdir();
    let d = dir.path();
    let url = format!("sqlite://{}/tpcc.db", d.display());
    let results = d.join("r");
    let r = eb(
        d,
        &[
            "run",
            "tpcc",
            "--target",
            &url,
            "--warehouses",
            "1",
            "--threads",
            "1,2",
            "--warmup",
            "0",
            "--duration",
            "2s",
            "--runs",
            "2",
            "--report-interval",
            "500ms",
            "--results-dir",
            results.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = result_file(&results).parent().unwrap().join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2>TPC-C</h2>") && html.contains("delivery_skipped_districts"));
    for kind in TPCC_KINDS {
        assert!(
            html.contains(&format!("<td class=l>{kind}</td>")),
            "{kind} row"
        );
    }
    let Some(bin) = chromium() else { return };
    let work = tempdir();
    let seen = browse(&bin, &page, work.path());
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(seen.page_requests.is_empty(), "{:?}", seen.page_requests);
    let charts: Vec<&str> = seen.dom.split("<svg class=\"chart\"").skip(1).collect();
    let tpcc: Vec<&&str> = charts
        .iter()
        .filter(|c| c.contains("tpmC vs threads") || c.contains("NewOrders over time"))
        .collect();
    assert_eq!(tpcc.len(), 2, "tpmC vs threads + NewOrders over time");
    for c in tpcc {
        let body = c.split("</svg>").next().unwrap();
        // Two thread counts; two runs of about four intervals each.
        assert!(body.matches("class=\"pt\"").count() >= 2, "{body}");
    }
}

/// Charts in a browsed DOM whose title contains `title`: the number of plotted points or bars
/// of each.
fn plotted(dom: &str, title: &str) -> Vec<usize> {
    dom.split("<svg class=\"chart\"")
        .skip(1)
        .map(|c| c.split("</svg>").next().unwrap())
        .filter(|c| c.contains(title))
        .map(|c| c.matches("class=\"pt\"").count())
        .collect()
}

fn run_to(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let results = dir.join(name);
    let mut a = args.to_vec();
    a.extend(["--results-dir", results.to_str().unwrap()]);
    let r = eb(dir, &a);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    result_file(&results)
}

fn json(path: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Intervals of a run the time-series charts draw (a short last one left out).
fn full_intervals(run: &Json) -> usize {
    let iv = run["intervals"].as_array().unwrap();
    let nominal = iv[0]["t_s"].as_f64().unwrap();
    let mut prev = 0.0;
    iv.iter()
        .filter(|i| {
            let t = i["t_s"].as_f64().unwrap();
            let len = t - prev;
            prev = t;
            len >= 0.5 * nominal
        })
        .count()
}

fn csv_table(dir: &Path, results: &[&Path], table: &str) -> Out {
    let mut a = vec!["report"];
    a.extend(results.iter().map(|p| p.to_str().unwrap()));
    a.extend(["--format", "csv", "--table", table, "-o", "-"]);
    eb(dir, &a)
}

/// iiBench, compression, sql-bench and LinkBench results (short SQLite runs) in one report:
/// every new chart is plotted with the expected number of points or bars, in a real browser,
/// and every new table comes out as CSV from the same rows.
#[test]
fn write_path_report_in_headless_chromium() {
    let dir = tempdir();
    let d = dir.path();
    let db = |f: &str| format!("sqlite://{}/{f}", d.display());
    let ii = run_to(
        d,
        "ii",
        &[
            "run",
            "iibench",
            "--target",
            &db("ii.db"),
            "--max-rows",
            "3000",
            "--rows-per-commit",
            "200",
            "--window-rows",
            "500",
        ],
    );
    let comp = run_to(
        d,
        "comp",
        &[
            "run",
            "compression",
            "--target",
            &db("comp.db"),
            "--table-size",
            "2000",
            "--threads",
            "2",
            "--warmup",
            "0",
            "--duration",
            "300ms",
            "--runs",
            "1",
        ],
    );
    let sb = run_to(
        d,
        "sb",
        &[
            "run",
            "sqlbench",
            "--target",
            &db("sb.db"),
            "--scale",
            "0.001",
        ],
    );
    let lb_url = db("lb.db");
    let p = eb(
        d,
        &[
            "prepare",
            "linkbench",
            "--target",
            &lb_url,
            "--maxid1",
            "2001",
        ],
    );
    assert_eq!(p.code, 0, "{}", p.stderr);
    let lb = run_to(
        d,
        "lb",
        &[
            "run",
            "linkbench",
            "--target",
            &lb_url,
            "--maxid1",
            "2001",
            "--requesters",
            "2",
            "--warmup",
            "0",
            "--maxtime",
            "2s",
            "--runs",
            "1",
            "--report-interval",
            "500ms",
        ],
    );
    let all = [ii.as_path(), comp.as_path(), sb.as_path(), lb.as_path()];
    let page = d.join("write.html");
    let mut a = vec!["report"];
    a.extend(all.iter().map(|p| p.to_str().unwrap()));
    a.extend(["-o", page.to_str().unwrap()]);
    let r = eb(d, &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    for h in [
        "iiBench: insert rate vs rows inserted",
        "<h2>Compression</h2>",
        "<h2>sql-bench</h2>",
        "<h2>Operations by kind</h2>",
        "Where the CPU went",
    ] {
        assert!(html.contains(h), "{h} missing");
    }

    // What the result files say the charts must hold.
    let iid = json(&ii);
    let windows = iid["points"][0]["sections"]["iibench"]["windows"]
        .as_array()
        .unwrap();
    let full = windows.iter().filter(|w| w["partial"] == false).count();
    assert!(full >= 5, "{windows:?}");
    let sbd = json(&sb);
    let ops = sbd["sections"]["sqlbench"]["engines"][0]["ops"]
        .as_array()
        .unwrap();
    let mut groups: Vec<&str> = ops
        .iter()
        .filter(|o| o["tests"].as_u64().unwrap() > 0)
        .map(|o| o["group"].as_str().unwrap())
        .collect();
    groups.sort();
    groups.dedup();
    let lbd = json(&lb);
    let run = &lbd["points"][0]["runs"][0];
    let kinds = run["by_kind"].as_object().unwrap().len();
    assert_eq!(kinds, 10);
    let intervals = full_intervals(run);
    assert!(intervals >= 3, "{}", run["intervals"]);

    let points: usize = all
        .iter()
        .map(|p| json(p)["points"].as_array().unwrap().len())
        .sum();
    // Every run here is the only one of its point: one row per kind of each point's run
    // (LinkBench's ten request types, the compression run's reads and writes).
    let kind_rows: usize = all
        .iter()
        .flat_map(|p| json(p)["points"].as_array().unwrap().clone())
        .map(|p| p["runs"][0]["by_kind"].as_object().map_or(0, |k| k.len()))
        .sum();
    assert!(kind_rows >= kinds);
    // CSV of every new table, from the same rows as the page's tables.
    let t = csv_table(d, &all, "sqlbench");
    assert_eq!(t.code, 0, "{}", t.stderr);
    let lines: Vec<&str> = t.stdout.lines().collect();
    assert_eq!(lines[0], "operation,group,seconds_sqlite,tests");
    assert_eq!(lines.len(), ops.len() + 2, "{}", t.stdout);
    assert!(
        lines.last().unwrap().starts_with("TOTALS,,"),
        "{}",
        t.stdout
    );
    let total: f64 = lines
        .last()
        .unwrap()
        .split(',')
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    let expect = sbd["sections"]["sqlbench"]["engines"][0]["totals"]["wall_s"]
        .as_f64()
        .unwrap();
    assert!((total - expect).abs() < 1e-9, "{total} vs {expect}");
    assert!(html.contains("<table data-table=\"sqlbench\">") && html.contains(">TOTALS</th>"));
    for (table, rows) in [
        ("iibench", 1),
        ("iibench-windows", windows.len()),
        ("compression", 1),
        ("kinds", kind_rows),
        ("sqlbench-ops", ops.len()),
        ("cpu", points),
    ] {
        let t = csv_table(d, &all, table);
        assert_eq!(t.code, 0, "{table}: {}", t.stderr);
        assert_eq!(t.stdout.lines().count(), rows + 1, "{table}: {}", t.stdout);
        assert!(
            html.contains(&format!("<table data-table=\"{table}\">")),
            "{table} is not on the page"
        );
    }
    // Bad table names and a table without CSV are one-line usage errors.
    let t = csv_table(d, &all, "nope");
    assert_eq!(t.code, 2, "{}", t.stderr);
    assert_eq!(t.stderr.trim().lines().count(), 1, "{}", t.stderr);
    assert!(t.stderr.contains("iibench-windows"), "{}", t.stderr);
    let t = eb(
        d,
        &[
            "report",
            ii.to_str().unwrap(),
            "--table",
            "iibench",
            "-o",
            "-",
        ],
    );
    assert_eq!(t.code, 2, "{}", t.stderr);

    let Some(bin) = chromium() else { return };
    let work = tempdir();
    let seen = browse(&bin, &page, work.path());
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(seen.page_requests.is_empty(), "{:?}", seen.page_requests);
    assert_eq!(
        plotted(&seen.dom, "Insert rate vs rows inserted"),
        vec![full]
    );
    // SQLite has one format; the server-side writes are not sampled for SQLite.
    assert_eq!(
        plotted(&seen.dom, "On-disk size ÷ raw size per format"),
        vec![1]
    );
    assert_eq!(plotted(&seen.dom, "Load speed per format"), vec![1]);
    assert_eq!(plotted(&seen.dom, "Read/write run per format"), vec![1]);
    assert!(plotted(&seen.dom, "Bytes written per row").is_empty());
    assert_eq!(
        plotted(&seen.dom, "sql-bench seconds per test group"),
        vec![groups.len()]
    );
    assert_eq!(
        plotted(&seen.dom, "linkbench requests by kind"),
        vec![kinds * intervals],
        "one point per kind and interval"
    );
    let ink = inked_share(&seen.screenshot);
    assert!(
        ink > 0.02,
        "screenshot looks blank ({:.1} % inked)",
        ink * 100.0
    );
}

/// On MariaDB the server's writes are sampled: iiBench's bytes written per row is plotted per
/// window, and several compression formats make one bar each; the servers' settings diff is
/// shown for the two results.
#[test]
fn mariadb_write_amplification_and_formats_in_the_report() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let Some(pid) = std::env::var("EB_TEST_MYSQL_PID").ok() else {
        return;
    };
    let _g = server_lock();
    let dir = tempdir();
    let d = dir.path();
    let url = fresh_db(&base, "eb_it_report");
    let ii = run_to(
        d,
        "ii",
        &[
            "run",
            "iibench",
            "--target",
            &url,
            "--max-rows",
            "3000",
            "--rows-per-commit",
            "200",
            "--window-rows",
            "500",
            "--server-pid",
            &pid,
        ],
    );
    let comp = run_to(
        d,
        "comp",
        &[
            "run",
            "compression",
            "--target",
            &url,
            "--table-size",
            "3000",
            "--threads",
            "2",
            "--warmup",
            "0",
            "--duration",
            "300ms",
            "--runs",
            "1",
            "--queries",
            "innodb,innodb-page-zlib,rocksdb-zstd",
        ],
    );
    let page = d.join("m.html");
    let r = eb(
        d,
        &[
            "report",
            ii.to_str().unwrap(),
            comp.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    let iid = json(&ii);
    let windows = iid["points"][0]["sections"]["iibench"]["windows"]
        .as_array()
        .unwrap();
    let with_bytes = windows
        .iter()
        .filter(|w| w["partial"] == false && w["server_written_bytes"].is_u64())
        .count();
    assert!(with_bytes >= 5, "{windows:?}");
    let formats = json(&comp)["sections"]["compression"]["formats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["available"] == true)
        .count();
    assert_eq!(formats, 3);
    let t = csv_table(d, &[ii.as_path(), comp.as_path()], "compression");
    assert_eq!(t.stdout.lines().count(), 4, "{}", t.stdout);
    let Some(bin) = chromium() else { return };
    let work = tempdir();
    let seen = browse(&bin, &page, work.path());
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(seen.page_requests.is_empty(), "{:?}", seen.page_requests);
    assert_eq!(
        plotted(&seen.dom, "Bytes written per row"),
        vec![with_bytes]
    );
    assert_eq!(
        plotted(&seen.dom, "On-disk size ÷ raw size per format"),
        vec![3]
    );
    assert!(html.contains("Server settings that differ"));
}

/// A long run is drawn with consecutive intervals merged (at most 150 points per run) and the
/// merged points keep the exact rate: 400 one-second intervals of 100 operations each.
#[test]
fn long_time_series_are_merged_exactly() {
    let dir = tempdir();
    let (a, _) = two_results(dir.path());
    let mut doc = json(&a);
    doc["points"].as_array_mut().unwrap().truncate(1);
    let p = &mut doc["points"][0];
    p["runs"].as_array_mut().unwrap().truncate(1);
    let run = &mut p["runs"][0];
    let first = run["intervals"][0].clone();
    run["intervals"] = Json::from(
        (0..400)
            .map(|i| {
                let mut x = first.clone();
                x["t_s"] = Json::from((i + 1) as f64);
                x["ops"] = Json::from(100u64);
                x["ops_per_s"] = Json::from(100.0);
                x
            })
            .collect::<Vec<_>>(),
    );
    let f = dir.path().join("long.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    let out = eb(dir.path(), &["report", f.to_str().unwrap(), "-o", "-"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let counts = plotted(&out.stdout, " at 1 threads");
    assert_eq!(counts.len(), 1, "one time-series chart");
    // 400 intervals in groups of 3: 134 points.
    assert_eq!(counts[0], 134);
    let chart = out
        .stdout
        .split("<svg class=\"chart\"")
        .find(|c| c.contains(" at 1 threads"))
        .unwrap();
    let chart = chart.split("</svg>").next().unwrap();
    assert_eq!(
        chart.matches("ops/s = 100<").count(),
        134,
        "every merged point has the exact rate"
    );
}

/// Results written before schema v2 (tests/data/v1, made by the build before it) are read
/// as v2: the HTML report shows their TPC-C, iiBench and compression sections, their tables
/// come out as CSV, and `compare` puts a v1 result next to a v2 one.
#[test]
fn v1_results_are_read() {
    let dir = tempdir();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1");
    let (tpcc, ii, comp) = (
        data.join("tpcc.json"),
        data.join("iibench.json"),
        data.join("compression.json"),
    );
    let v1 = json(&tpcc);
    assert_eq!(v1["schema_version"], 1);
    let tpm_c = v1["points"][0]["runs"][0]["tpm_c"].as_f64().unwrap();

    let page = dir.path().join("v1.html");
    let out = eb(
        dir.path(),
        &[
            "report",
            tpcc.to_str().unwrap(),
            ii.to_str().unwrap(),
            comp.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    for h in ["<h2>TPC-C</h2>", "<h2>iiBench", "<h2>Compression</h2>"] {
        assert!(html.contains(h), "no {h} in the page");
    }
    assert!(html.contains("tpmC vs threads"), "no tpmC chart");
    // The per-transaction table gives the run's tpmC; the constraints columns are filled.
    assert!(
        html.contains(&format!("<td>{tpm_c:.0}</td>")),
        "no tpmC {tpm_c:.0}"
    );
    assert!(html.contains("≤ 5 s: pass"), "no constraints verdict");
    for (file, table) in [(&ii, "iibench"), (&comp, "compression")] {
        let csv = csv_table(dir.path(), &[file], table);
        assert_eq!(csv.code, 0, "{table}: {}", csv.stderr);
        assert!(csv.stdout.lines().count() >= 2, "{table}: {}", csv.stdout);
    }

    // A v2 result of the same workload compares with the v1 one.
    let url = format!("sqlite://{}/tpcc.db", dir.path().display());
    let v2 = run_to(
        dir.path(),
        "v2",
        &[
            "run",
            "tpcc",
            "--target",
            &url,
            "--warehouses",
            "1",
            "--threads",
            "1",
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--runs",
            "1",
        ],
    );
    let doc = json(&v2);
    assert_eq!(doc["schema_version"], 2);
    assert_schema_valid(&doc);
    let out = eb(
        dir.path(),
        &[
            "compare",
            tpcc.to_str().unwrap(),
            v2.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows: Json = serde_json::from_str(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["operation"] == "mix" && r["metric"] == "ops_per_s"),
        "{rows:?}"
    );

    // Another version is refused with a clear usage error.
    let mut v3 = v1.clone();
    v3["schema_version"] = Json::from(3);
    let f = dir.path().join("v3.json");
    std::fs::write(&f, v3.to_string()).unwrap();
    let out = eb(dir.path(), &["report", f.to_str().unwrap(), "-o", "-"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("schema_version 3"), "{}", out.stderr);
}

/// The page at a width in headless Chromium: a screenshot of the first screen (below 500 px:
/// the left `w` pixels of a 500 px window), and the layout
/// measured by a test-only copy of the page (its CSP lifted, a script added that opens every
/// `<details>` and writes the widths into the DOM). An element inside a horizontal scroll box
/// (a wide table scrolls in its own box) is not measured: it does not widen the page.
struct Layout {
    viewport: f64,
    scroll_width: f64,
    /// The rightmost edge of any element outside a scroll box, and which element.
    right: f64,
    widest: String,
    screenshot: PathBuf,
}

const MEASURE: &str = r#"<script>(function(){
document.querySelectorAll('details').forEach(function(d){d.open=true;});
var vw=document.documentElement.clientWidth,right=0,who='';
function boxed(e){for(var p=e.parentElement;p;p=p.parentElement){var o=getComputedStyle(p).overflowX;if(o!=='visible')return true;}return false;}
document.querySelectorAll('body *').forEach(function(e){var r=e.getBoundingClientRect();
if(r.width>0&&r.right>right&&!boxed(e)){right=r.right;who=e.tagName+' '+(e.getAttribute('class')||'')+' '+(e.getAttribute('data-op')||'');}});
var p=document.createElement('pre');p.id='layout';
p.textContent=JSON.stringify({vw:vw,sw:document.documentElement.scrollWidth,right:right,who:who});
document.body.appendChild(p);})();</script>"#;

fn layout(bin: &str, page: &Path, work: &Path, w: u32, h: u32) -> Layout {
    let html = std::fs::read_to_string(page).unwrap();
    let csp_end = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let csp_len = html[csp_end..].find('>').unwrap() + 1;
    let measured = format!(
        "{}{}",
        &html[..csp_end],
        &html[csp_end + csp_len..].replace("</body>", &format!("{MEASURE}</body>"))
    );
    let copy = work.join(format!("measure-{w}.html"));
    std::fs::write(&copy, measured).unwrap();
    // Chromium's window is at least 500 px wide: a narrower viewport is an iframe of that
    // width in a wrapper page, which takes the measurement out of the frame.
    let framed = |name: &str, inner: &Path, take: bool| -> PathBuf {
        let f = work.join(format!("{name}-{w}.html"));
        let script = if take {
            "<script>window.onload=function(){var f=document.getElementById('f');document.body.appendChild(f.contentDocument.getElementById('layout').cloneNode(true));};</script>"
        } else {
            ""
        };
        std::fs::write(
            &f,
            format!(
                "<!DOCTYPE html><html><body style=\"margin:0\"><iframe id=f src=\"file://{}\" style=\"border:0;display:block;width:{w}px;height:{h}px\"></iframe>{script}</body></html>",
                inner.display()
            ),
        )
        .unwrap();
        f
    };
    let narrow = w < 500;
    let (measure_url, shot_url) = if narrow {
        (
            framed("frame-measure", &copy, true),
            framed("frame-page", page, false),
        )
    } else {
        (copy.clone(), page.to_path_buf())
    };
    let shot = work.join(format!("page-{w}x{h}.png"));
    let run = |extra: &[String], url: &Path, ud: &str| {
        std::process::Command::new(bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--hide-scrollbars",
                "--disable-background-networking",
                "--disable-component-update",
            ])
            .arg(format!("--user-data-dir={}", work.join(ud).display()))
            .arg(format!("--window-size={},{h}", w.max(500)))
            .arg("--allow-file-access-from-files")
            .args(extra)
            .arg(format!("file://{}", url.display()))
            .output()
            .unwrap()
    };
    let o = run(&["--dump-dom".into()], &measure_url, &format!("ud-m{w}"));
    let dom = String::from_utf8_lossy(&o.stdout);
    let json = dom
        .split("<pre id=\"layout\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| {
            panic!(
                "no layout in the DOM: {}",
                String::from_utf8_lossy(&o.stderr)
            )
        });
    let m: Json =
        serde_json::from_str(&json.replace("&quot;", "\"").replace("&amp;", "&")).unwrap();
    let s = run(
        &[format!("--screenshot={}", shot.display())],
        &shot_url,
        &format!("ud-s{w}"),
    );
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    if let Ok(keep) = std::env::var("EB_KEEP_SCREENSHOTS") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&shot, Path::new(&keep).join(shot.file_name().unwrap())).unwrap();
    }
    Layout {
        viewport: m["vw"].as_f64().unwrap(),
        scroll_width: m["sw"].as_f64().unwrap(),
        right: m["right"].as_f64().unwrap(),
        widest: m["who"].as_str().unwrap().to_string(),
        screenshot: shot,
    }
}

/// The summary table's rows: (operation, the best result's label, the others' cell).
fn summary_rows(html: &str) -> Vec<(String, String, String)> {
    let table = html
        .split("<table data-table=\"summary\"")
        .nth(1)
        .expect("a summary table")
        .split("</table>")
        .next()
        .unwrap();
    table
        .split("<tr>")
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row
                .split("<td")
                .skip(1)
                .map(|c| c.split_once('>').unwrap().1.split("</td>").next().unwrap())
                .collect();
            (
                cells[0].to_string(),
                cells[1].replace("<b>", "").replace("</b>", ""),
                cells.get(3).map(|c| c.to_string()).unwrap_or_default(),
            )
        })
        .collect()
}

/// A short real micro-read run (all 13 queries) and a copy of it where some queries are 1.5x
/// faster and the rest 0.6x: the page opens with the summary naming the right best result per
/// operation with its ratio and verdict, and the settings that differ; in Chromium at 1366x768
/// and at 390 px wide nothing is wider than the window, every chart is drawn, and the first
/// screen of the laptop view is the summary.
#[test]
fn micro_read_page_leads_with_the_answer_at_laptop_and_phone_widths() {
    let dir = tempdir();
    let d = dir.path();
    let a = micro_read_sqlite(
        d,
        "a",
        &[
            "--threads",
            "1,2",
            "--runs",
            "2",
            "--duration",
            "100ms",
            "--warmup",
            "0",
        ],
    );
    let mut da = json(&a);
    let mut db = da.clone();
    let ops: Vec<String> = da["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["operation"].as_str().unwrap().to_string())
        .fold(Vec::new(), |mut v, o| {
            if !v.contains(&o) {
                v.push(o);
            }
            v
        });
    assert_eq!(ops.len(), 13, "{ops:?}");
    // Every third query is faster in B; the others slower. Runs and aggregates move together.
    let b_leads = |op: &str| ops.iter().position(|o| o == op).unwrap() % 3 == 0;
    for p in db["points"].as_array_mut().unwrap() {
        let f = if b_leads(p["operation"].as_str().unwrap()) {
            1.5
        } else {
            0.6
        };
        for r in p["runs"].as_array_mut().unwrap() {
            r["ops_per_s"] = Json::from(r["ops_per_s"].as_f64().unwrap() * f);
        }
        for k in ["ops_per_s_max", "ops_per_s_median", "ops_per_s_min"] {
            p["aggregate"][k] = Json::from(p["aggregate"][k].as_f64().unwrap() * f);
        }
    }
    // Server settings as a server would report them: one differs, one is the same.
    da["target"]["settings"] = serde_json::json!({"cache_size": "-2000", "page_size": "4096"});
    db["target"]["settings"] = serde_json::json!({"cache_size": "-64000", "page_size": "4096"});
    db["target"]["engine"] = Json::from("tuned-btree");
    let (fa, fb) = (d.join("A.json"), d.join("B.json"));
    std::fs::write(&fa, da.to_string()).unwrap();
    std::fs::write(&fb, db.to_string()).unwrap();
    let page = d.join("page.html");
    let r = eb(
        d,
        &[
            "report",
            fa.to_str().unwrap(),
            fb.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"));
    // The summary comes first, before what was run and every chart.
    let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("<h2 id=summary>") < at("<h2>What was run</h2>"));
    assert!(at("<h2>What was run</h2>") < at("<svg class=\"chart\""));
    let rows = summary_rows(&html);
    assert_eq!(
        rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ops.iter().map(String::as_str).collect::<Vec<_>>()
    );
    for (op, best, others) in &rows {
        let (winner, other, ratio) = if b_leads(op) {
            ("sqlite tuned-btree", "sqlite:", "0.667×")
        } else {
            ("sqlite", "sqlite tuned-btree:", "0.600×")
        };
        assert_eq!(best, winner, "{op}");
        assert!(
            others.contains(&format!("{other} {ratio} ")),
            "{op}: {others}"
        );
        // Each result is one server start and a page has no between-start spread: the
        // verdict claims nothing, however far apart the two runs per point are.
        assert!(
            others.contains(&format!("{other} {ratio} significance unknown")),
            "{op}: {others}"
        );
    }
    assert!(
        html.contains("<b>Server settings that differ</b> (* not at its default): <code>cache_size</code> -2000 / -64000</p>"),
        "settings line"
    );
    // Each throughput and latency chart has its numbers folded under it.
    assert_eq!(html.matches("<div class=cell data-op=").count(), 26);
    assert_eq!(html.matches("<details><summary>ops/s of ").count(), 13);

    let Some(bin) = chromium() else { return };
    let work = tempdir();
    for (w, h) in [(1366, 768), (390, 844)] {
        let l = layout(&bin, &page, work.path(), w, h);
        assert_eq!(l.viewport, w as f64, "the window is {w} wide");
        assert!(
            l.scroll_width <= l.viewport && l.right <= l.viewport + 0.5,
            "at {w} px the page is {} wide, {} reaches {}",
            l.scroll_width,
            l.widest,
            l.right
        );
        let ink = inked_share(&l.screenshot);
        assert!(
            ink > 0.02,
            "{w} px screenshot looks blank ({:.1} %)",
            ink * 100.0
        );
    }
    // Every chart still drawn: 13 throughput + 13 latency + 13 x 2 time series.
    let seen = browse(&bin, &page, work.path());
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(seen.page_requests.is_empty(), "{:?}", seen.page_requests);
    let charts: Vec<&str> = seen.dom.split("<svg class=\"chart\"").skip(1).collect();
    assert_eq!(charts.len(), 13 * 4);
    assert!(charts
        .iter()
        .all(|c| c.split("</svg>").next().unwrap().contains("class=\"pt\"")));
}
