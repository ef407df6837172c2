//! Workload files for real: a two-table file with a foreign key and a captured value runs on
//! SQLite, MariaDB and PostgreSQL and leaves the expected rows; every malformed file of the
//! corpus (tests/data/workload-errors) gets its line-and-key error and exit 2; the built-in
//! YCSB and TPC-B files run briefly on SQLite; init-workload writes a file that runs, with
//! its phases as points (own length and rate).

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::Conn;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn run(dir: &Path, args: &[&str]) -> Json {
    let mut all = vec![
        "run",
        "--threads",
        "2",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--format",
        "json",
    ];
    if !args.contains(&"--duration") {
        all.extend(["--duration", "500ms"]);
    }
    all.extend_from_slice(args);
    let out = eb(dir, &all);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    doc
}

fn count(url: &str, sql: &str) -> i64 {
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        c.query_one(sql).await.unwrap().unwrap().parse().unwrap()
    })
}

/// Two tables, a foreign key, and a transaction passing captured values (integer, text,
/// float) to an insert.
fn shop(url: &str) {
    let dir = tempdir();
    let file = data("workload-shop.toml");
    let doc = run(
        dir.path(),
        &["--workload-file", file.to_str().unwrap(), "--target", url],
    );
    assert_eq!(doc["config"]["workload"], "shop-test");
    let r = &doc["points"][0]["runs"][0];
    assert_eq!(r["errors_total"], 0, "{}", r["error_samples"]);
    let orders_run = r["by_kind"]["order"]["ops"].as_i64().unwrap();
    assert!(orders_run > 0 && r["by_kind"]["lookup"]["ops"].as_i64().unwrap() > 0);
    // Each order transaction: BEGIN, SELECT, INSERT, COMMIT.
    let stmts = r["statements"].as_i64().unwrap();
    let lookups = r["by_kind"]["lookup"]["ops"].as_i64().unwrap();
    assert_eq!(stmts, orders_run * 4 + lookups);
    assert_eq!(count(url, "SELECT count(*) FROM customers"), 50);
    // 200 loaded orders plus one per committed order transaction.
    assert_eq!(count(url, "SELECT count(*) FROM orders"), 200 + orders_run);
    // Every order (loaded by the fk generator, or inserted with the captured id) belongs to
    // a customer.
    assert_eq!(
        count(
            url,
            "SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id"
        ),
        200 + orders_run
    );
    // The captured text (region) and float (id x 1.5) went into the new orders as they were.
    assert_eq!(
        count(
            url,
            "SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.note = c.region AND o.price = c.id * 1.5"
        ),
        orders_run
    );
    // A second run reuses the tables and continues the new keys after the first run's.
    let doc = run(
        dir.path(),
        &["--workload-file", file.to_str().unwrap(), "--target", url],
    );
    let r = &doc["points"][0]["runs"][0];
    assert_eq!(r["errors_total"], 0, "{}", r["error_samples"]);
    assert!(doc["load"].as_array().unwrap().is_empty(), "reloaded");
    let more = r["by_kind"]["order"]["ops"].as_i64().unwrap();
    assert_eq!(
        count(url, "SELECT count(*) FROM orders"),
        200 + orders_run + more
    );
    let out = eb(
        dir.path(),
        &[
            "cleanup",
            "--workload-file",
            file.to_str().unwrap(),
            "--target",
            url,
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn shop_on_sqlite() {
    let dir = tempdir();
    let url = format!("sqlite://{}/shop.db", dir.path().display());
    shop(&url);
}

#[test]
fn shop_on_mariadb() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    shop(&fresh_db(&base, "eb_custom_shop"));
}

#[test]
fn shop_on_postgres() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _g = server_lock();
    shop(&fresh_db(&base, "eb_custom_shop"));
}

/// Pipelined transactions on PostgreSQL: the statements of `good` are sent without waiting
/// and all land; `bad` fails in its second statement and leaves nothing (its first insert is
/// rolled back, its third is refused), counted once per transaction under the error's class.
/// With `?pipeline=off` the same file gives the same rows. Then tpcb (pipelined) conserves
/// money as pgbench's does.
#[test]
fn pipelined_transactions_on_postgres() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _g = server_lock();
    let file = data("workload-pipeline.toml");
    for (db, extra) in [
        ("eb_custom_pipe", ""),
        ("eb_custom_nopipe", "&pipeline=off"),
    ] {
        let url = fresh_db(&base, db);
        let url = if url.contains('?') {
            format!("{url}{extra}")
        } else {
            format!("{url}?{}", extra.trim_start_matches('&'))
        };
        let dir = tempdir();
        let doc = run(
            dir.path(),
            &["--workload-file", file.to_str().unwrap(), "--target", &url],
        );
        let r = &doc["points"][0]["runs"][0];
        let good = r["by_kind"]["good"]["ops"].as_i64().unwrap();
        let bad_errors = r["by_kind"]["bad"]["errors"].as_i64().unwrap();
        assert!(good > 0 && bad_errors > 0, "{extra}: {r}");
        assert_eq!(r["errors_total"].as_i64().unwrap(), bad_errors, "{extra}");
        assert_eq!(count(&url, "SELECT count(*) FROM pl_ok"), good, "{extra}");
        assert_eq!(count(&url, "SELECT count(*) FROM pl_bad"), 0, "{extra}");
        // Every good transaction returned its two SELECTs' rows, pipelined or not.
        assert_eq!(r["rows"].as_i64().unwrap(), 2 * good, "{extra}");
        let errs = r["errors"].as_object().unwrap();
        assert_eq!(errs.len(), 1, "one class: {errs:?}");
        let note = doc["notes"].as_array().unwrap().iter().any(|n| {
            n.as_str().unwrap().contains(if extra.is_empty() {
                "without waiting for the previous reply"
            } else {
                "one at a time"
            })
        });
        assert!(note, "{extra}: {}", doc["notes"]);
    }
    let url = fresh_db(&base, "eb_custom_tpcb");
    let dir = tempdir();
    let doc = run(dir.path(), &["tpcb", "--target", &url]);
    let r = &doc["points"][0]["runs"][0];
    assert_eq!(r["errors_total"], 0, "{}", r["error_samples"]);
    let ops = r["ops"].as_i64().unwrap();
    assert_eq!(r["statements"].as_i64().unwrap(), ops * 7);
    assert_eq!(
        r["rows"].as_i64().unwrap(),
        ops,
        "one abalance per transaction"
    );
    assert_eq!(count(&url, "SELECT count(*) FROM pgbench_history"), ops);
    let sum = |t: &str, c: &str| count(&url, &format!("SELECT sum({c}) FROM {t}"));
    let h = sum("pgbench_history", "delta");
    assert_eq!(sum("pgbench_accounts", "abalance"), h);
    assert_eq!(sum("pgbench_tellers", "tbalance"), h);
    assert_eq!(sum("pgbench_branches", "bbalance"), h);
}

/// Every file of the corpus names its expected error on its first line:
/// `# expect: LINE: KEY.PATH: message`.
#[test]
fn malformed_files_get_line_and_key() {
    let dir = tempdir();
    let mut n = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(data("workload-errors"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{}: no `# expect:` line", f.display()));
        let path = f.to_str().unwrap();
        let out = eb(dir.path(), &["run", "--workload-file", path]);
        assert_eq!(out.code, 2, "{path}: {}", out.stderr);
        let want = format!("enginebench: {path}:{expect}");
        assert!(
            out.stderr.trim_end().starts_with(&want),
            "{path}:\n got  {}\n want {want}",
            out.stderr.trim_end()
        );
        assert_eq!(out.stderr.trim_end().lines().count(), 1, "{}", out.stderr);
        // The line number leads to a line of the file.
        let line: usize = expect.split(':').next().unwrap().parse().unwrap();
        assert!(line >= 1 && line <= text.lines().count(), "{path}");
        n += 1;
    }
    assert!(n >= 15, "only {n} cases");
}

#[test]
fn builtins_run_briefly_on_sqlite() {
    let dir = tempdir();
    let url = format!("sqlite://{}/b.db", dir.path().display());
    for w in ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-f", "ycsb-d", "ycsb-e"] {
        let doc = run(
            dir.path(),
            &[w, "--target", &url, "--var", "recordcount=300"],
        );
        let r = &doc["points"][0]["runs"][0];
        assert!(r["ops"].as_u64().unwrap() > 0, "{w}");
        // SQLite has one writer: a busy insert or update is counted and retried.
        let errs = r["errors"].as_object().unwrap();
        assert!(errs.keys().all(|k| k == "busy"), "{w}: {errs:?}");
    }
    assert_eq!(
        count(
            &url,
            "SELECT count(*) FROM usertable WHERE ycsb_key = 'user6284781860667377211'"
        ),
        1,
        "YCSB's key name for key number 0"
    );
    let doc = run(dir.path(), &["tpcb", "--target", &url]);
    let r = &doc["points"][0]["runs"][0];
    assert_eq!(r["errors_total"], 0, "{}", r["error_samples"]);
    let ops = r["ops"].as_i64().unwrap();
    // pgbench's 7 statements per transaction.
    assert_eq!(r["statements"].as_i64().unwrap(), ops * 7);
    assert_eq!(
        count(&url, "SELECT count(*) FROM pgbench_accounts"),
        100_000
    );
    assert_eq!(
        count(&url, "SELECT count(*) FROM pgbench_tellers WHERE bid = 1"),
        10
    );
    assert_eq!(count(&url, "SELECT count(*) FROM pgbench_history"), ops);
    // Money is conserved across the three balances, as in pgbench.
    let sum = |t: &str, c: &str| count(&url, &format!("SELECT sum({c}) FROM {t}"));
    let h = sum("pgbench_history", "delta");
    assert_eq!(sum("pgbench_accounts", "abalance"), h);
    assert_eq!(sum("pgbench_tellers", "tbalance"), h);
    assert_eq!(sum("pgbench_branches", "bbalance"), h);
}

#[test]
fn init_workload_writes_a_file_that_runs_with_its_phases() {
    let dir = tempdir();
    let d = dir.path();
    let out = eb(d, &["init-workload", "shop.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let again = eb(d, &["init-workload", "shop.toml"]);
    assert_eq!(again.code, 2, "overwrote without --force");
    let url = format!("sqlite://{}/i.db", d.display());
    let doc = run(
        d,
        &[
            "--workload-file",
            "shop.toml",
            "--target",
            &url,
            "--var",
            "customers=200",
            "--duration",
            "300ms",
        ],
    );
    let points = doc["points"].as_array().unwrap();
    let names: Vec<&str> = points
        .iter()
        .map(|p| p["operation"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["orders", "browse"]);
    // browse: 2 s at 200 transactions per second (its own length and rate), lookups only.
    let b = &points[1]["runs"][0];
    let el = b["elapsed_s"].as_f64().unwrap();
    assert!((1.9..3.0).contains(&el), "{el}");
    assert_eq!(b["open_loop"]["rate_ops_per_s"], 200.0);
    assert_eq!(b["by_kind"]["new_order"]["ops"], 0);
    let o = &points[0]["runs"][0];
    assert!(o["elapsed_s"].as_f64().unwrap() < 1.5);
    assert!(o["by_kind"]["new_order"]["ops"].as_u64().unwrap() > 0);
}

#[test]
fn flags_of_other_workloads_are_refused() {
    let dir = tempdir();
    for (args, msg) in [
        (
            vec!["run", "tpcb", "--table-size", "10"],
            "--table-size does not apply",
        ),
        (vec!["run", "tpcb", "--var", "scal=2"], "no variable `scal`"),
        (
            vec!["run", "oltp_point_select", "--var", "scale=2"],
            "--var applies to workload files",
        ),
        (vec!["run"], "give a workload name"),
        (vec!["run", "tpcb", "--workload-file", "x.toml"], "not both"),
        (
            vec!["run", "--workload-file", "missing.toml"],
            "cannot read missing.toml",
        ),
    ] {
        let out = eb(dir.path(), &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(msg), "{args:?}: {}", out.stderr);
    }
}

/// The shipped files and the test file match schema/workload-v1.schema.json (TOML read as
/// JSON), and the schema rejects a file with an unknown key.
#[test]
fn workload_files_match_their_schema() {
    let schema: Json =
        serde_json::from_str(include_str!("../../schema/workload-v1.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("workloads"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.push(data("workload-shop.toml"));
    for f in files {
        let t: toml::Value = toml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let j = serde_json::to_value(t).unwrap();
        let errors: Vec<String> = v
            .iter_errors(&j)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", f.display());
    }
    let bad: Json = serde_json::json!({"name": "x", "transactions": {"t": {"statements": [{"sql": "SELECT 1"}]}}, "tabels": {}});
    assert!(!v.is_valid(&bad));
}
