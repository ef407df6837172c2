//! The sysbench OLTP workloads for real: statements per event equal sysbench's (checked with
//! MariaDB's own counters), row counts after insert/delete/read-write, the k index and sum(k)
//! after updates, deadlocks retried and counted, MyISAM running through duplicate keys, and
//! the sysbench-style flags.

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::Conn;

/// Run the binary with `args` plus short-run flags; returns the result document.
fn run(dir: &std::path::Path, url: &str, workload: &str, threads: &str, extra: &[&str]) -> Json {
    let mut args = vec![
        "run",
        workload,
        "--target",
        url,
        "--threads",
        threads,
        "--runs",
        "1",
        "--warmup",
        "0",
        "--format",
        "json",
    ];
    if !extra.iter().any(|a| *a == "--duration" || *a == "--time") {
        args.extend(["--duration", "400ms"]);
    }
    args.extend_from_slice(extra);
    let out = eb(dir, &args);
    assert_eq!(out.code, 0, "{workload} {extra:?}: {}", out.stderr);
    serde_json::from_str(&out.stdout).expect("json result")
}

fn prepare(dir: &std::path::Path, url: &str, extra: &[&str]) {
    let mut args = vec!["prepare", "oltp_read_write", "--target", url];
    args.extend_from_slice(extra);
    let out = eb(dir, &args);
    assert_eq!(out.code, 0, "prepare: {}", out.stderr);
}

fn first_run(doc: &Json) -> &Json {
    &doc["points"][0]["runs"][0]
}

/// A connection with the runtime it lives on (a connection cannot move between runtimes).
struct Db {
    rt: tokio::runtime::Runtime,
    conn: Conn,
}

fn num(c: &mut Db, sql: &str) -> i64 {
    c.rt.block_on(c.conn.query_one(sql))
        .unwrap()
        .map(|s| s.parse::<f64>().unwrap() as i64)
        .unwrap_or(0)
}

fn conn(url: &str) -> Db {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let conn = rt.block_on(Conn::connect(&spec(url))).unwrap();
    Db { rt, conn }
}

/// sysbench 1.0.20's queries per event (oltp_*.lua), BEGIN/COMMIT included, and whether the
/// event is a transaction.
const EXPECTED: [(&str, u64, bool); 10] = [
    ("oltp_read_write", 20, true),
    ("oltp_read_only", 16, true),
    ("oltp_write_only", 6, true),
    ("oltp_point_select", 1, false),
    ("oltp_update_index", 1, false),
    ("oltp_update_non_index", 1, false),
    ("oltp_delete", 1, false),
    ("oltp_insert", 1, false),
    ("select_random_points", 1, false),
    ("select_random_ranges", 1, false),
];

#[test]
fn mariadb_queries_per_event_match_sysbench() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _lock = server_lock();
    let url = fresh_db(&base, "eb_it_oltp_counts");
    let dir = tempdir();
    prepare(dir.path(), &url, &["--table-size", "2000"]);
    for (w, queries, trx) in EXPECTED {
        let doc = run(dir.path(), &url, w, "1", &["--table-size", "2000"]);
        let r = first_run(&doc);
        let ops = r["ops"].as_u64().unwrap();
        assert!(ops > 0, "{w}: no events");
        assert_eq!(r["errors_total"].as_u64().unwrap(), 0, "{w}: {r}");
        assert_eq!(r["statements"].as_u64().unwrap(), ops * queries, "{w}");
        let sc = &r["server_counters"];
        let get = |k: &str| sc[k].as_f64().unwrap_or(0.0) as u64;
        let (begins, prepared) = if trx {
            (ops, queries - 2)
        } else {
            (0, queries)
        };
        assert_eq!(get("Com_stmt_execute"), ops * prepared, "{w}: {sc}");
        assert_eq!(get("Com_begin"), begins, "{w}: {sc}");
        assert_eq!(get("Com_commit"), begins, "{w}: {sc}");
    }
}

/// Rows after oltp_insert = before + events; after oltp_read_write unchanged; after
/// oltp_delete at most `events` fewer; and sum(k) grows by exactly one per oltp_update_index.
fn row_counts(url: &str) {
    let dir = tempdir();
    let size = "1000";
    prepare(dir.path(), url, &["--table-size", size]);
    let mut c = conn(url);
    let before = num(&mut c, "SELECT count(*) FROM sbtest1");
    assert_eq!(before, 1000);

    let doc = run(dir.path(), url, "oltp_insert", "2", &["--table-size", size]);
    let ops = first_run(&doc)["ops"].as_i64().unwrap();
    assert_eq!(num(&mut c, "SELECT count(*) FROM sbtest1"), before + ops);
    let after_insert = before + ops;

    let doc = run(
        dir.path(),
        url,
        "oltp_read_write",
        "2",
        &["--table-size", size],
    );
    assert!(first_run(&doc)["ops"].as_i64().unwrap() > 0);
    assert_eq!(
        num(&mut c, "SELECT count(*) FROM sbtest1"),
        after_insert,
        "delete + insert of one id keeps the row count"
    );

    let sum0 = num(&mut c, "SELECT sum(k) FROM sbtest1");
    let doc = run(
        dir.path(),
        url,
        "oltp_update_index",
        "2",
        &["--table-size", size],
    );
    let ops = first_run(&doc)["ops"].as_i64().unwrap();
    // Every id in 1..=1000 exists (read_write re-inserts what it deletes): each event adds 1.
    assert_eq!(num(&mut c, "SELECT sum(k) FROM sbtest1"), sum0 + ops);

    let doc = run(dir.path(), url, "oltp_delete", "2", &["--table-size", size]);
    let ops = first_run(&doc)["ops"].as_i64().unwrap();
    let left = num(&mut c, "SELECT count(*) FROM sbtest1");
    assert!(left < after_insert && left >= after_insert - ops, "{left}");
}

#[test]
fn sqlite_row_counts() {
    let dir = tempdir();
    let url = format!("sqlite://{}/oltp.db", dir.path().display());
    row_counts(&url);
}

#[test]
fn mariadb_row_counts_and_k_index() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _lock = server_lock();
    let url = fresh_db(&base, "eb_it_oltp_rows");
    row_counts(&url);
    let mut c = conn(&url);
    // The k index agrees with the table after the updates.
    let via_index = num(
        &mut c,
        "SELECT sum(k) + count(*) FROM sbtest1 FORCE INDEX (k_1) WHERE k > -1",
    );
    let via_table = num(
        &mut c,
        "SELECT sum(k) + count(*) FROM sbtest1 IGNORE INDEX (k_1)",
    );
    assert_eq!(via_index, via_table);
}

#[test]
fn postgres_row_counts() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_it_oltp_pg");
    row_counts(&url);
}

/// Two index updates per transaction on 4 rows from 8 threads: InnoDB deadlocks often. Each
/// committed transaction adds exactly 2 to sum(k), so the sum proves that rolled-back
/// attempts were retried once and not counted twice.
#[test]
fn mariadb_deadlocks_are_retried_and_counted() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _lock = server_lock();
    let url = fresh_db(&base, "eb_it_oltp_deadlock");
    let dir = tempdir();
    let flags = [
        "--table-size",
        "4",
        "--rand-type",
        "uniform",
        "--index-updates",
        "2",
        "--non-index-updates",
        "0",
        "--delete-inserts",
        "0",
    ];
    let mut args = vec!["--engine", "InnoDB"];
    args.extend_from_slice(&flags);
    prepare(dir.path(), &url, &args);
    let mut c = conn(&url);
    let sum0 = num(&mut c, "SELECT sum(k) FROM sbtest1");
    let mut run_args = vec!["--duration", "1s"];
    run_args.extend_from_slice(&flags);
    let doc = run(dir.path(), &url, "oltp_write_only", "8", &run_args);
    let r = first_run(&doc);
    let ops = r["ops"].as_i64().unwrap();
    let deadlocks = r["errors"]["deadlock"].as_i64().unwrap_or(0);
    assert!(ops > 0);
    assert!(deadlocks > 0, "no deadlock provoked: {r}");
    assert_eq!(num(&mut c, "SELECT sum(k) FROM sbtest1"), sum0 + 2 * ops);
}

/// MyISAM has no transactions: no BEGIN/COMMIT is sent, and a duplicate key from racing
/// delete-insert pairs is counted, never fatal; no row is lost.
#[test]
fn mariadb_myisam_runs_through_duplicate_keys() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _lock = server_lock();
    let url = fresh_db(&base, "eb_it_oltp_myisam");
    let dir = tempdir();
    let flags = [
        "--engine",
        "MyISAM",
        "--table-size",
        "20",
        "--rand-type",
        "uniform",
    ];
    prepare(dir.path(), &url, &flags);
    let doc = run(dir.path(), &url, "oltp_write_only", "4", &flags);
    assert_eq!(doc["target"]["engine"], "MyISAM");
    let r = first_run(&doc);
    assert!(r["ops"].as_i64().unwrap() > 0);
    assert_eq!(
        r["server_counters"]["Com_begin"].as_f64().unwrap_or(0.0),
        0.0
    );
    let errors = r["errors"].as_object().unwrap();
    assert!(
        errors.keys().all(|k| k == "duplicate_key"),
        "only duplicate keys expected: {r}"
    );
    let mut c = conn(&url);
    assert_eq!(num(&mut c, "SELECT count(*) FROM sbtest1"), 20);
}

#[test]
fn sysbench_flags() {
    let dir = tempdir();
    let url = format!("sqlite://{}/flags.db", dir.path().display());
    // sysbench spellings: --time, --rand-seed, --skip-trx=on, --range-selects=off, --percentile 95.
    let doc = run(
        dir.path(),
        &url,
        "oltp_read_only",
        "1",
        &[
            "--time",
            "1",
            "--rand-seed",
            "7",
            "--skip-trx=on",
            "--range-selects=off",
            "--percentile",
            "95",
            "--table-size",
            "500",
            "--tables",
            "2",
        ],
    );
    assert_eq!(doc["config"]["duration_s"], 1.0);
    assert_eq!(doc["config"]["seed"], 7);
    let r = first_run(&doc);
    // 10 point selects, no ranges, no BEGIN/COMMIT.
    assert_eq!(
        r["statements"].as_u64().unwrap(),
        10 * r["ops"].as_u64().unwrap()
    );
    assert_schema_valid(&doc);
    let mut c = conn(&url);
    assert_eq!(num(&mut c, "SELECT count(*) FROM sbtest2"), 500);
    // Table output: tps row and queries/s row.
    let out = eb(
        dir.path(),
        &[
            "run",
            "oltp_read_only",
            "--target",
            &url,
            "--threads",
            "1",
            "--runs",
            "1",
            "--duration",
            "200ms",
            "--warmup",
            "0",
            "--table-size",
            "500",
            "--tables",
            "2",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("queries/s"), "{}", out.stdout);
    for (args, code) in [
        (vec!["--time", "0"], 2),
        (vec!["--percentile", "101"], 2),
        (vec!["--rand-type", "zipf"], 2),
        (vec!["--tables", "0"], 2),
        (vec!["--skip-trx=maybe"], 2),
    ] {
        let mut a = vec!["run", "oltp_read_only", "--target", &url];
        a.extend(args.iter().copied());
        let out = eb(dir.path(), &a);
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

/// A checksum of every row of sbtest1, computed by the server.
fn checksum(c: &mut Db, postgres: bool) -> String {
    let sql = if postgres {
        "SELECT md5(string_agg(id || ':' || k || ':' || c || ':' || pad, ',' ORDER BY id)) FROM sbtest1"
    } else {
        "SELECT concat(count(*), ':', sum(k), ':', sum(crc32(concat(id, ':', c, ':', pad)))) FROM sbtest1"
    };
    c.rt.block_on(c.conn.query_one(sql)).unwrap().unwrap()
}

/// The same rows whatever the load method (INSERT, streamed or prepared INSERT), number of
/// connections, and whether the tables load one by one or at once.
fn load_methods_give_the_same_rows(base: &str, postgres: bool, prefix: &str) {
    let dir = tempdir();
    let mut sums = Vec::new();
    for (i, (method, conns)) in [
        ("insert", "1"),
        ("stream", "3"),
        ("stream", "1"),
        ("prepared", "2"),
    ]
    .iter()
    .enumerate()
    {
        let url = fresh_db(base, &format!("{prefix}_{i}"));
        prepare(
            dir.path(),
            &url,
            &[
                "--table-size",
                "25000",
                "--load-method",
                method,
                "--load-connections",
                conns,
            ],
        );
        sums.push(checksum(&mut conn(&url), postgres));
    }
    // Three tables loaded at once, each by one connection in one transaction.
    let url = fresh_db(base, &format!("{prefix}_at_once"));
    prepare(
        dir.path(),
        &url,
        &[
            "--table-size",
            "25000",
            "--tables",
            "3",
            "--load-connections",
            "2",
        ],
    );
    let mut c = conn(&url);
    sums.push(checksum(&mut c, postgres));
    for t in ["sbtest2", "sbtest3"] {
        assert_eq!(
            num(&mut c, &format!("SELECT count(*) FROM {t}")),
            25_000,
            "{t}"
        );
    }
    assert!(sums.windows(2).all(|w| w[0] == w[1]), "{sums:?}");
}

#[test]
fn mariadb_load_methods_give_the_same_rows() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _lock = server_lock();
    load_methods_give_the_same_rows(&base, false, "eb_it_oltp_load");
}

#[test]
fn postgres_load_methods_give_the_same_rows() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    load_methods_give_the_same_rows(&base, true, "eb_it_oltp_pgload");
}
