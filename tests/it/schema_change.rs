//! schema-change for real: ADD/DROP COLUMN while oltp_insert runs, on SQLite, MariaDB
//! (InnoDB with ALGORITHM=COPY and INSTANT, MyRocks) and PostgreSQL. The timeline marks each
//! DDL's start and end; a COPY on InnoDB lowers the insert rate while it runs.

use serde_json::Value as Json;

use crate::common::*;

fn run(url: &str, extra: &[&str]) -> Json {
    let dir = tempdir();
    let d = dir.path();
    let mut args = vec![
        "run",
        "schema-change",
        "--target",
        url,
        "--threads",
        "2",
        "--before",
        "1500ms",
        "--after",
        "1s",
        "--report-interval",
        "200ms",
    ];
    args.extend(extra);
    let out = eb(d, &args);
    assert_eq!(out.code, 0, "schema-change run failed: {}", out.stderr);
    assert!(
        out.stdout.contains("schema-change timelines"),
        "{}",
        out.stdout
    );
    let doc: Json = serde_json::from_str(
        &std::fs::read_to_string(result_file(&d.join("enginebench-results"))).unwrap(),
    )
    .unwrap();
    assert_schema_valid(&doc);
    // The HTML report renders it (with the DDL boxes on the throughput chart).
    let html = d.join("r.html");
    let folder = result_file(&d.join("enginebench-results"));
    let out = eb(
        d,
        &[
            "report",
            folder.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("ADD COLUMN"));
    doc
}

fn timeline<'a>(doc: &'a Json, alg: &str) -> &'a Json {
    doc["sections"]["schema-change"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["algorithm"] == alg)
        .unwrap_or_else(|| panic!("no timeline {alg}"))
}

/// The ADD starts after T1, ends after it starts, the DROP follows T2 after it, and the
/// throughput series covers the whole timeline.
fn check_marks(doc: &Json, alg: &str) -> (Json, Json) {
    let t = timeline(doc, alg);
    assert_eq!(t["status"], "complete", "{t}");
    let ddl = t["ddl"].as_array().unwrap();
    assert_eq!(ddl.len(), 2, "{t}");
    let (add, drop) = (&ddl[0], &ddl[1]);
    assert!(add["statement"].as_str().unwrap().contains("ADD COLUMN"));
    assert!(drop["statement"].as_str().unwrap().contains("DROP COLUMN"));
    assert_eq!(add["ok"], true, "{add}");
    assert_eq!(drop["ok"], true, "{drop}");
    let f = |v: &Json, k: &str| v[k].as_f64().unwrap();
    assert!(f(add, "start_s") >= 1.5 && f(add, "start_s") < 3.0, "{add}");
    assert!(f(add, "end_s") >= f(add, "start_s"));
    assert!(f(drop, "start_s") >= f(add, "end_s") + 1.0, "{t}");
    assert!(f(add, "baseline_ops_per_s") > 0.0, "{add}");
    let p = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["operation"] == alg)
        .unwrap();
    let iv = p["runs"][0]["intervals"].as_array().unwrap();
    let last = iv.last().unwrap()["t_s"].as_f64().unwrap();
    assert!(last >= f(drop, "end_s") + 0.9, "series ends at {last}: {t}");
    (add.clone(), drop.clone())
}

#[test]
fn sqlite_add_and_drop() {
    let dir = tempdir();
    let url = format!("sqlite://{}/sc.db", dir.path().display());
    let doc = run(&url, &["--table-size", "20000"]);
    check_marks(&doc, "add-drop");
}

#[test]
fn mariadb_innodb_copy_slows_inserts() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_schema_change");
    // 50k rows: a COPY of about a second here (several 200 ms intervals), a short test.
    let doc = run(
        &url,
        &[
            "--engine",
            "InnoDB",
            "--table-size",
            "100000",
            "--queries",
            "copy,instant",
        ],
    );
    let (add, _) = check_marks(&doc, "copy");
    let before = add["baseline_ops_per_s"].as_f64().unwrap();
    let during = add["during_ops_per_s"].as_f64().unwrap();
    assert!(
        during < before,
        "COPY: {during} ops/s during vs {before} before: {add}"
    );
    // INSTANT: marked the same way (its duration depends on the metadata lock it waits for,
    // so on a busy machine it is not compared with the COPY's).
    check_marks(&doc, "instant");
    assert_eq!(timeline(&doc, "copy")["engine"], "InnoDB");
}

#[test]
fn mariadb_rocksdb_copy_and_refusals_reported() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_schema_change");
    let doc = run(
        &url,
        &[
            "--engine",
            "ROCKSDB",
            "--table-size",
            "20000",
            "--queries",
            "instant,copy",
        ],
    );
    check_marks(&doc, "copy");
    assert_eq!(timeline(&doc, "copy")["engine"], "ROCKSDB");
    // MyRocks has no instant ADD COLUMN: the refusal is reported, not a failure.
    let i = timeline(&doc, "instant");
    if i["status"] == "rejected" {
        assert_eq!(i["ddl"][0]["ok"], false);
        assert!(!i["ddl"][0]["error"].as_str().unwrap().is_empty());
    }
}

#[test]
fn postgres_defaults() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_schema_change");
    let doc = run(
        &url,
        &[
            "--table-size",
            "20000",
            "--queries",
            "add-default,add-volatile-default",
        ],
    );
    check_marks(&doc, "add-default");
    check_marks(&doc, "add-volatile-default");
}

#[test]
fn flags_of_other_workloads_are_refused() {
    let dir = tempdir();
    let out = eb(
        dir.path(),
        &[
            "run",
            "oltp_insert",
            "--target",
            "sqlite://x.db",
            "--before",
            "2s",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("schema-change workload only"),
        "{}",
        out.stderr
    );
    let out = eb(
        dir.path(),
        &[
            "run",
            "schema-change",
            "--target",
            "sqlite://x.db",
            "--during",
            "tpcc",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--during"), "{}", out.stderr);
}
