//! tpcc for real on SQLite, MariaDB (InnoDB) and PostgreSQL with 1 warehouse: the load passes
//! `check`, a short run of the mix passes it again, Payment moves the YTD columns, the measured
//! mix is near the configured one, and a broken district makes `check` fail naming it.

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::Conn;

async fn one(c: &mut Conn, sql: &str) -> i64 {
    c.query_one(sql)
        .await
        .unwrap()
        .unwrap()
        .parse::<f64>()
        .unwrap()
        .round() as i64
}

fn ytd_cents(url: &str) -> (i64, i64) {
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        (
            one(&mut c, "SELECT ROUND(SUM(w_ytd) * 100) FROM warehouse").await,
            one(&mut c, "SELECT ROUND(SUM(d_ytd) * 100) FROM district").await,
        )
    })
}

/// The run's TPC-C checks agree with its own per-type figures: a type passes 5.2.5.3 exactly
/// when its p90 is within its limit (5 s; StockLevel 20 s), and `pass` is every verdict and
/// the mix together.
fn assert_constraints_follow_the_run(run: &Json, mix_compliant: bool) {
    let c = &run["sections"]["tpcc"]["constraints"];
    assert_eq!(c["mix_compliant"], Json::Bool(mix_compliant), "{c}");
    let checks = c["response_time"].as_array().unwrap();
    let mut any_fail = false;
    for r in checks {
        let name = r["transaction"].as_str().unwrap();
        let k = &run["by_kind"][name];
        assert_eq!(r["ops"], k["ops"], "{name}");
        let p90 = k["latency_us"]["p90_us"].as_u64().unwrap();
        assert_eq!(r["p90_us"].as_u64().unwrap(), p90, "{name}");
        let limit = if name == "StockLevel" {
            20_000_000
        } else {
            5_000_000
        };
        assert_eq!(r["limit_us"].as_u64().unwrap(), limit, "{name}");
        let want = match (k["ops"].as_u64().unwrap(), p90 <= limit) {
            (0, _) => "no_data",
            (_, true) => "pass",
            (_, false) => "fail",
        };
        assert_eq!(r["verdict"], want, "{name}: {r}");
        any_fail |= want == "fail";
    }
    assert_eq!(c["pass"], Json::Bool(mix_compliant && !any_fail), "{c}");
}

fn whole_cycle(url: &str) {
    let dir = tempdir();
    let d = dir.path();
    let t0 = std::time::Instant::now();
    let out = eb(
        d,
        &["prepare", "tpcc", "--target", url, "--warehouses", "1"],
    );
    assert_eq!(out.code, 0, "prepare failed: {}", out.stderr);
    eprintln!(
        "tpcc load of 1 warehouse on {url}: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(out.stderr.contains("into order_line"), "{}", out.stderr);
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        assert_eq!(one(&mut c, "SELECT count(*) FROM item").await, 100_000);
        assert_eq!(one(&mut c, "SELECT count(*) FROM stock").await, 100_000);
        assert_eq!(one(&mut c, "SELECT count(*) FROM customer").await, 30_000);
        assert_eq!(one(&mut c, "SELECT count(*) FROM new_orders").await, 9_000);
        // Every customer has exactly one order (o_c_id is a permutation).
        assert_eq!(
            one(
                &mut c,
                "SELECT count(DISTINCT o_c_id) FROM orders WHERE o_d_id = 3"
            )
            .await,
            3000
        );
    });
    let out = eb(d, &["check", "tpcc", "--target", url]);
    assert_eq!(
        out.code, 0,
        "check after load: {}{}",
        out.stdout, out.stderr
    );
    assert!(out
        .stdout
        .contains("hold for 1 warehouse(s), 10 district(s)"));

    let (w0, d0) = ytd_cents(url);
    assert_eq!(w0, d0);
    let out = eb(
        d,
        &[
            "run",
            "tpcc",
            "--target",
            url,
            "--threads",
            "2",
            "--warmup",
            "0",
            "--duration",
            "3s",
            "--runs",
            "1",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "run failed: {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    assert_schema_valid(&doc);
    let run = &doc["points"][0]["runs"][0];
    let by_kind = run["by_kind"].as_object().unwrap();
    let ops: Vec<f64> = [
        "NewOrder",
        "Payment",
        "OrderStatus",
        "Delivery",
        "StockLevel",
    ]
    .iter()
    .map(|k| by_kind[*k]["ops"].as_f64().unwrap())
    .collect();
    let total: f64 = ops.iter().sum();
    assert!(total >= 20.0, "too few transactions: {run}");
    assert_eq!(total as u64, run["ops"].as_u64().unwrap());
    // A short run: the bound is the deck's (each of the 2 terminals is at most one partial
    // deck away from the exact shares, plus one pending retry), not 1 point; the 1-point bound
    // over 10,000 transactions is the unit test of the deck in src/workload/tpcc/mod.rs.
    let weights = [45.0, 43.0, 4.0, 4.0, 4.0];
    for (k, w) in weights.iter().enumerate() {
        let expected = total * w / 100.0;
        assert!(
            (ops[k] - expected).abs() <= 2.0 * w + 2.0,
            "kind {k}: {} vs {expected:.1} expected ({run})",
            ops[k]
        );
    }
    let tpmc = run["figures"]["tpm_c"].as_f64().unwrap();
    assert!(tpmc > 0.0);
    assert_constraints_follow_the_run(run, true);
    assert!(out.stderr.contains("constraints "), "{}", out.stderr);
    // NewOrders per interval: the intervals' committed NewOrders add up to the run's, and their
    // tpmC is that count per minute of interval.
    let intervals = run["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 2, "{run}");
    let no_committed: u64 = intervals
        .iter()
        .map(|i| {
            let k = &i["by_kind"]["NewOrder"];
            k["ops"].as_u64().unwrap() - k["rolled_back"].as_u64().unwrap()
        })
        .sum();
    let k = &by_kind["NewOrder"];
    assert_eq!(
        no_committed,
        k["ops"].as_u64().unwrap() - k["rolled_back"].as_u64().unwrap()
    );
    let kind_sum: u64 = intervals
        .iter()
        .flat_map(|i| i["by_kind"].as_object().unwrap().values())
        .map(|k| k["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(kind_sum, run["ops"].as_u64().unwrap());
    assert!(
        intervals.iter().all(|i| i["figures"]["tpm_c"].is_number()),
        "{run}"
    );
    // The workload's own counters are reported (values depend on contention).
    let counters = run["workload_counters"].as_object().unwrap();
    assert!(
        counters.contains_key("retries") && counters.contains_key("delivery_skipped_districts")
    );
    assert!(
        out.stderr.contains("tpmC")
            || doc["points"][0]["runs"][0]["figures"]["tpm_total"].is_number()
    );

    // Payment moved the money, and the money still adds up.
    let (w1, d1) = ytd_cents(url);
    assert!(w1 > w0, "W_YTD did not grow: {w0} -> {w1}");
    assert_eq!(w1, d1);
    let out = eb(d, &["check", "tpcc", "--target", url]);
    assert_eq!(out.code, 0, "check after run: {}{}", out.stdout, out.stderr);

    // A broken district is named.
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        c.execute(
            "UPDATE district SET d_next_o_id = d_next_o_id + 5 WHERE d_w_id = 1 AND d_id = 7",
        )
        .await
        .unwrap();
    });
    let out = eb(d, &["check", "tpcc", "--target", url]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("condition 2 (TPC-C 3.3.2.2) fails for warehouse 1 district 7"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("FAILED").count(), 1, "{}", out.stdout);
}

#[test]
fn tpcc_sqlite_load_run_check() {
    let dir = tempdir();
    let url = format!("sqlite://{}/tpcc.db", dir.path().display());
    whole_cycle(&url);
}

#[test]
fn tpcc_mariadb_load_run_check() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    whole_cycle(&fresh_db(&base, "eb_tpcc"));
}

#[test]
fn tpcc_postgres_load_run_check() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _g = server_lock();
    whole_cycle(&fresh_db(&base, "eb_tpcc"));
}

#[test]
fn tpcc_bad_flags_exit_2() {
    let dir = tempdir();
    let d = dir.path();
    for args in [
        vec!["run", "tpcc", "--weights", "1,2"],
        vec!["run", "micro-read", "--spec-timing"],
        vec!["run", "tpcc", "--isolation", "read-committed"],
        vec!["run", "tpcc", "--table-size", "10"],
        vec!["run", "micro-read", "--warehouses", "2"],
        vec!["check", "micro-read"],
        vec!["run", "tpcc", "--terminals", "0"],
        vec!["run", "tpcc", "--terminals", "10", "--threads", "20"],
        vec!["run", "tpcc", "--terminals", "10", "--threads", "4,16"],
        vec!["run", "micro-read", "--terminals", "10"],
    ] {
        let out = eb(d, &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_eq!(
            out.stderr.trim().lines().count(),
            1,
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"));
    }
}

/// --spec-timing: terminals wait keying and think times (TPC-C 5.2.5) outside the latency.
/// In 3 s each of 10 terminals first keys for at least 2 s and then needs at least 2 s more of
/// keying before a second transaction, so at most one transaction each, and no NewOrder (its
/// keying time is 18 s); the run still ends on time.
#[test]
fn tpcc_spec_timing_paces_terminals() {
    let dir = tempdir();
    let d = dir.path();
    let url = format!("sqlite://{}/tpcc.db", d.display());
    let out = eb(d, &["prepare", "tpcc", "--target", &url]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let t0 = std::time::Instant::now();
    let out = eb(
        d,
        &[
            "run",
            "tpcc",
            "--target",
            &url,
            "--spec-timing",
            "--threads",
            "10",
            "--warmup",
            "0",
            "--duration",
            "3s",
            "--runs",
            "1",
            "--format",
            "json",
        ],
    );
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    assert_schema_valid(&doc);
    let run = &doc["points"][0]["runs"][0];
    let ops = run["ops"].as_u64().unwrap();
    assert!(ops <= 10, "at most one transaction per terminal: {ops}");
    assert_eq!(run["by_kind"]["NewOrder"]["ops"].as_u64().unwrap(), 0);
    // The phase lasts its duration even though terminals mostly wait.
    let elapsed = run["elapsed_s"].as_f64().unwrap();
    assert!((2.9..4.0).contains(&elapsed), "elapsed {elapsed}");
    assert!(wall < 20.0, "the run took {wall:.1} s");
    assert_eq!(
        doc["config"]["workload_options"]["keying_and_think_times"],
        Json::Bool(true)
    );
    // Unpaced, the same terminals run far more than 10 transactions in 3 s.
    let out = eb(
        d,
        &[
            "run",
            "tpcc",
            "--target",
            &url,
            "--threads",
            "10",
            "--warmup",
            "0",
            "--duration",
            "3s",
            "--runs",
            "1",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    assert!(doc["points"][0]["runs"][0]["ops"].as_u64().unwrap() > 10);
}

/// A mix below TPC-C 5.2.3's minimums (Payment 4 %, the others 2 %) runs, and the result says
/// which weights are short; the measured shares follow the configured ones.
#[test]
fn tpcc_non_compliant_mix_is_reported() {
    let dir = tempdir();
    let d = dir.path();
    let url = format!("sqlite://{}/tpcc.db", d.display());
    let out = eb(d, &["prepare", "tpcc", "--target", &url]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = eb(
        d,
        &[
            "run",
            "tpcc",
            "--target",
            &url,
            "--weights",
            "90,4,2,2,2",
            "--threads",
            "1",
            "--warmup",
            "0",
            "--duration",
            "2s",
            "--runs",
            "1",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    assert_schema_valid(&doc);
    let run = &doc["points"][0]["runs"][0];
    assert_constraints_follow_the_run(run, false);
    let c = &run["sections"]["tpcc"]["constraints"];
    assert_eq!(c["pass"], Json::Bool(false));
    let mix = c["mix"].as_array().unwrap();
    let verdicts: Vec<&str> = mix
        .iter()
        .map(|m| m["verdict"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(verdicts, ["-", "fail", "fail", "fail", "fail"]);
    assert_eq!(mix[1]["weight_pct"].as_f64().unwrap(), 4.0);
    let measured_no = mix[0]["measured_pct"].as_f64().unwrap();
    assert!(measured_no > 80.0, "NewOrder share {measured_no}");
    assert!(
        out.stderr
            .contains("constraints FAIL: Payment weight 4.0 % < 43 %"),
        "{}",
        out.stderr
    );
    // The HTML report's TPC-C table says it too.
    let html = d.join("r.html");
    let json = d.join("r.json");
    std::fs::write(&json, &out.stdout).unwrap();
    let out = eb(
        d,
        &[
            "report",
            json.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("mix minimum (5.2.3)"),
        "no constraint columns"
    );
    assert!(
        page.contains("weight 4.0% ≥ 43%: <b>FAIL</b>"),
        "no failed Payment minimum"
    );
}

/// `--terminals 200` over 20 connections with spec timing (issue 25): terminals are not
/// connections. Payment only (keying 3 s, then a think time of 12 s on average and another 3 s
/// of keying), so in 5 s every terminal runs exactly one transaction, at about 3 s, all ten of
/// a connection due at once: nine of them wait for it, and their wait is in their latency.
/// The server never sees more than the 20 connections (plus the harness's admin connection),
/// each home warehouse gets its terminals' payments (terminal k: warehouse k mod 2 + 1), and
/// `check tpcc` passes afterwards.
#[test]
fn tpcc_terminals_share_connections_on_mariadb() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let db = "eb_tpcc_terms";
    let url = fresh_db(&base, db);
    let dir = tempdir();
    let d = dir.path();
    let t0 = std::time::Instant::now();
    let out = eb(
        d,
        &["prepare", "tpcc", "--target", &url, "--warehouses", "2"],
    );
    assert_eq!(out.code, 0, "prepare failed: {}", out.stderr);
    eprintln!(
        "tpcc load of 2 warehouses: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    // Payments so far by home warehouse (h_w_id: the paying warehouse, 2.5.2.2).
    let by_home = |url: &str| {
        block(async {
            let mut c = Conn::connect(&spec(url)).await.unwrap();
            let mut v = Vec::new();
            for w in 1..=2 {
                let sql = format!("SELECT count(*) FROM history WHERE h_w_id = {w}");
                v.push(one(&mut c, &sql).await);
            }
            v
        })
    };
    let before = by_home(&url);
    // Count this database's sessions on the server while the run goes (the sampler's own
    // included, subtracted below).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (stop, url) = (stop.clone(), url.clone());
        std::thread::spawn(move || {
            block(async {
                let mut c = Conn::connect(&spec(&url)).await.unwrap();
                let sql = format!(
                    "SELECT count(*) FROM information_schema.PROCESSLIST WHERE DB = '{db}'"
                );
                let (mut max, mut samples) = (0, 0);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    max = max.max(one(&mut c, &sql).await - 1);
                    samples += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                (max, samples)
            })
        })
    };
    let out = eb(
        d,
        &[
            "run",
            "tpcc",
            "--target",
            &url,
            "--warehouses",
            "2",
            "--spec-timing",
            "--weights",
            "0,1,0,0,0",
            "--terminals",
            "200",
            "--threads",
            "20",
            "--warmup",
            "0",
            // Keying time (3 s) comes first: every terminal's Payment is due at 3 s, and its
            // next cannot start before 6 s (after a second keying time). 5.9 s leaves the 200
            // Payments the most room a loaded host may need: they queue on two warehouse rows
            // and a log flush each.
            "--duration",
            "5.9s",
            "--runs",
            "1",
            "--format",
            "json",
        ],
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (max_sessions, samples) = sampler.join().unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    assert_schema_valid(&doc);
    eprintln!("sessions of {db}: at most {max_sessions} in {samples} samples");
    assert!(samples > 20, "{samples} samples");
    assert!(
        (20..=21).contains(&max_sessions),
        "the server saw {max_sessions} sessions of the run (20 connections + the admin one)"
    );
    let p = &doc["points"][0];
    assert_eq!(p["threads"], 20);
    assert_eq!(p["connect"]["connections"], 20, "{p}");
    assert_eq!(doc["config"]["workload_options"]["terminals"], 200);
    let run = &p["runs"][0];
    assert_eq!(run["sections"]["tpcc"]["terminals"], 200, "{run}");
    assert_eq!(run["sections"]["tpcc"]["connections"], 20, "{run}");
    // Every terminal exactly once.
    assert_eq!(run["by_kind"]["Payment"]["ops"], 200, "{run}");
    assert_eq!(run["ops"], 200, "{run}");
    // Ten terminals per connection due at the same instant: the last nine waited for it.
    let waits = run["workload_counters"]["connection_waits"]
        .as_u64()
        .unwrap();
    assert!((150..=180).contains(&waits), "connection_waits {waits}");
    assert_constraints_follow_the_run(run, false);
    // Terminal k has home warehouse k mod 2 + 1: 100 payments each.
    let after = by_home(&url);
    assert_eq!(
        [after[0] - before[0], after[1] - before[1]],
        [100, 100],
        "{before:?} -> {after:?}"
    );
    let out = eb(d, &["check", "tpcc", "--target", &url]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// Per table of a tpcc database: its row count and a checksum of every column, the load's
/// timestamps (c_since, h_date, o_entry_d, ol_delivery_d) set to one value first, since two
/// loads are made at different times.
fn table_sums(url: &str) -> Vec<(String, i64, String)> {
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        let mysql = c.dbms() == enginebench::db::Dbms::Mysql;
        for (t, col) in [
            ("customer", "c_since"),
            ("history", "h_date"),
            ("orders", "o_entry_d"),
            ("order_line", "ol_delivery_d"),
        ] {
            c.execute(&format!(
                "UPDATE {t} SET {col} = '2001-02-03 04:05:06' WHERE {col} IS NOT NULL"
            ))
            .await
            .unwrap();
        }
        let schema = if mysql {
            "DATABASE()"
        } else {
            "current_schema()"
        };
        let mut out = Vec::new();
        for t in enginebench::workload::tpcc::data::TABLES {
            let cols: Vec<String> = c
                .query(&format!(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = {schema} AND table_name = '{t}' ORDER BY ordinal_position"
                ))
                .await
                .unwrap()
                .into_iter()
                .map(|r| r[0].clone().unwrap())
                .collect();
            assert!(cols.len() >= 3, "{t}: {cols:?}");
            let row = cols
                .iter()
                .map(|c| {
                    format!(
                        "COALESCE(CAST({c} AS {}), '~')",
                        if mysql { "CHAR" } else { "TEXT" }
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = if mysql {
                format!("SELECT COUNT(*), CAST(SUM(CRC32(CONCAT_WS('|', {row}))) AS CHAR) FROM {t}")
            } else {
                format!(
                    "SELECT count(*), sum(hashtext(concat_ws('|', {row}))::bigint)::text FROM {t}"
                )
            };
            let r = c.query(&sql).await.unwrap();
            let n: i64 = r[0][0].as_deref().unwrap().parse().unwrap();
            out.push((t.to_string(), n, r[0][1].clone().unwrap()));
        }
        out
    })
}

/// The server's count of connections closed without a goodbye (MariaDB's `Aborted_clients`).
fn aborted_clients(base: &str) -> i64 {
    block(async {
        let mut c = Conn::connect(&spec(base)).await.unwrap();
        let r = c
            .query("SHOW GLOBAL STATUS LIKE 'Aborted_clients'")
            .await
            .unwrap();
        r[0][1].as_deref().unwrap().parse().unwrap()
    })
}

/// The nine tables loaded at once (each in one transaction, rows written straight into the
/// streamed text form) hold the same rows as the tables loaded one by one.
fn at_once_matches_one_by_one(base: &str) {
    let dir = tempdir();
    let mut sums = Vec::new();
    let mysql = base.starts_with("mysql");
    for order in ["one-by-one", "at-once"] {
        let url = fresh_db(base, &format!("eb_tpcc_{}", order.replace('-', "_")));
        let aborted = mysql.then(|| aborted_clients(base));
        let t0 = std::time::Instant::now();
        let out = eb(
            dir.path(),
            &[
                "prepare",
                "tpcc",
                "--target",
                &url,
                "--warehouses",
                "1",
                "--load-connections",
                "2",
                "--load-tables",
                order,
            ],
        );
        assert_eq!(out.code, 0, "prepare --load-tables {order}: {}", out.stderr);
        // Every loader connection said goodbye (mysql_async's are closed, not dropped).
        if let Some(before) = aborted {
            assert_eq!(
                aborted_clients(base),
                before,
                "Aborted_clients grew during the load ({order})"
            );
        }
        eprintln!(
            "tpcc load of 1 warehouse, tables {order}, on {url}: {:.1} s",
            t0.elapsed().as_secs_f64()
        );
        let check = eb(dir.path(), &["check", "tpcc", "--target", &url]);
        assert_eq!(
            check.code, 0,
            "check after {order}: {}{}",
            check.stdout, check.stderr
        );
        sums.push(table_sums(&url));
    }
    assert_eq!(sums[0][8].1, 100_000, "stock rows");
    assert!(sums[0][7].1 > 290_000, "order lines: {:?}", sums[0][7]);
    assert_eq!(sums[0], sums[1]);
}

#[test]
fn tpcc_mariadb_tables_at_once_match_one_by_one() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    at_once_matches_one_by_one(&base);
}

#[test]
fn tpcc_postgres_tables_at_once_match_one_by_one() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _g = server_lock();
    at_once_matches_one_by_one(&base);
}

/// One warehouse loaded into a fresh database of the MariaDB test server; its URL.
fn mariadb_one_warehouse(base: &str, name: &str, dir: &std::path::Path) -> String {
    let url = fresh_db(base, name);
    let out = eb(
        dir,
        &["prepare", "tpcc", "--target", &url, "--warehouses", "1"],
    );
    assert_eq!(out.code, 0, "prepare failed: {}", out.stderr);
    url
}

fn run_tpcc(dir: &std::path::Path, url: &str, weights: &str, duration: &str) -> Json {
    let out = eb(
        dir,
        &[
            "run",
            "tpcc",
            "--target",
            url,
            "--threads",
            "1",
            "--warmup",
            "0",
            "--duration",
            duration,
            "--runs",
            "1",
            "--weights",
            weights,
            "--format",
            "json",
        ],
    );
    assert!(
        !out.stdout.is_empty(),
        "run printed nothing: {}",
        out.stderr
    );
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    doc["points"][0]["runs"][0].clone()
}

/// NewOrder's writes go to MariaDB without waiting for each other's replies. A statement that
/// fails among them (a duplicate key planted: the order row in districts 1 to 5, which is the
/// second statement sent ahead; an order line in districts 6 to 10, the last one, whose failure
/// shows only when its reply is read before COMMIT) must leave nothing of its transaction
/// behind: the statements after it ran on the server, so COMMIT must not be sent. Every
/// NewOrder then fails with a duplicate key, counted as an error (not retried: it is no
/// transient conflict).
#[test]
fn tpcc_mariadb_pipelined_new_order_failure_commits_nothing() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let dir = tempdir();
    let url = mariadb_one_warehouse(&base, "eb_tpcc_pipe_dup", dir.path());
    let stock_orders = block(async {
        let mut c = Conn::connect(&spec(&url)).await.unwrap();
        for d in 1..=5 {
            c.execute(&format!("INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (3001, {d}, 1, 1, NOW(), 5, 1)")).await.unwrap();
        }
        for d in 6..=10 {
            c.execute(&format!("INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (3001, {d}, 1, 1, 1, 1, 5, 0, 'planted')")).await.unwrap();
        }
        one(&mut c, "SELECT SUM(s_order_cnt) FROM stock").await
    });
    let run = run_tpcc(dir.path(), &url, "1,0,0,0,0", "2s");
    let dup = run["errors"]["duplicate_key"].as_u64().unwrap_or(0);
    assert!(dup >= 5, "duplicate keys: {}", run["errors"]);
    // The only NewOrders that end are the spec's user rollbacks (an unused item, found before
    // the planted duplicate order line is inserted).
    assert_eq!(
        run["by_kind"]["NewOrder"]["ops"], run["by_kind"]["NewOrder"]["rolled_back"],
        "{run}"
    );
    block(async {
        let mut c = Conn::connect(&spec(&url)).await.unwrap();
        // Nothing of any NewOrder is left: not the district's next id (the first statement
        // sent ahead), not the order, new order, stock updates or lines.
        assert_eq!(
            one(
                &mut c,
                "SELECT COUNT(*) FROM district WHERE d_next_o_id <> 3001"
            )
            .await,
            0
        );
        assert_eq!(
            one(&mut c, "SELECT COUNT(*) FROM orders WHERE o_id > 3000").await,
            5
        );
        assert_eq!(
            one(
                &mut c,
                "SELECT COUNT(*) FROM new_orders WHERE no_o_id > 3000"
            )
            .await,
            0
        );
        assert_eq!(
            one(
                &mut c,
                "SELECT COUNT(*) FROM order_line WHERE ol_o_id > 3000"
            )
            .await,
            5
        );
        assert_eq!(
            one(&mut c, "SELECT SUM(s_order_cnt) FROM stock").await,
            stock_orders
        );
    });
}

/// A deadlock inside Payment, whose writes go to MariaDB together with its warehouse row's
/// update last: the transaction is rolled back, counted as a deadlock, retried with the same
/// input, and the money still adds up afterwards (no statement of the failed attempt
/// committed on its own).
#[test]
fn tpcc_mariadb_deadlock_in_pipelined_payment_is_retried() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let dir = tempdir();
    let url = mariadb_one_warehouse(&base, "eb_tpcc_pipe_deadlock", dir.path());
    let (w0, d0) = ytd_cents(&url);
    assert_eq!(w0, d0);
    let run =
        std::thread::scope(|s| {
            // One client loop for the other connection (a connection stays on the loop it was
            // opened on).
            let h =
                block(async {
                    // The other transaction: heavy (so that InnoDB picks the Payment as the victim),
                    // holding the warehouse row that Payment updates last.
                    let mut other = Conn::connect(&spec(&url)).await.unwrap();
                    other.execute("START TRANSACTION").await.unwrap();
                    other
                .execute("UPDATE stock SET s_ytd = s_ytd + 1 WHERE s_w_id = 1 AND s_i_id <= 5000")
                .await
                .unwrap();
                    other
                        .execute("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1")
                        .await
                        .unwrap();
                    let h = s.spawn(|| run_tpcc(dir.path(), &url, "0,1,0,0,0", "4s"));
                    // The Payment holds its district row and waits for the warehouse row.
                    // InnoDB refreshes what information_schema.innodb_trx shows only after the
                    // table has not been read for 100 ms (trx0i_s.cc, CACHE_MIN_IDLE_TIME): a
                    // poll every 20 ms kept showing the moment before the Payment waited, so
                    // the poll waits longer than that between reads.
                    let t0 = std::time::Instant::now();
                    while one(
                &mut other,
                "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'",
            )
            .await
                == 0
            {
                assert!(t0.elapsed().as_secs() < 30, "no Payment waited for the warehouse row");
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
                    // Now wait for a district the Payment holds: a deadlock, the Payment its victim.
                    other
                        .execute("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1")
                        .await
                        .unwrap();
                    other.execute("ROLLBACK").await.unwrap();
                    h
                });
            h.join().unwrap()
        });
    assert!(
        run["errors"]["deadlock"].as_u64().unwrap_or(0) >= 1,
        "no deadlock counted: {}",
        run["errors"]
    );
    assert!(
        run["workload_counters"]["retries"].as_u64().unwrap_or(0) >= 1,
        "{}",
        run["workload_counters"]
    );
    assert!(run["by_kind"]["Payment"]["ops"].as_u64().unwrap() > 0);
    let (w1, d1) = ytd_cents(&url);
    assert!(w1 > w0);
    assert_eq!(w1, d1, "the failed attempt left part of its writes");
    let out = eb(dir.path(), &["check", "tpcc", "--target", &url]);
    assert_eq!(out.code, 0, "check after run: {}{}", out.stdout, out.stderr);
}

/// `--procedures`: each transaction is one CALL of a stored procedure created at prepare time.
/// A short run on MariaDB runs all five types (the result says which mode it was), keeps the
/// consistency conditions and its mix, and fails nothing but what statement mode retries.
#[test]
fn tpcc_mariadb_procedures_run_passes_check_and_mix() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let dir = tempdir();
    let url = fresh_db(&base, "eb_tpcc_procedures");
    let out = eb(
        dir.path(),
        &[
            "run",
            "tpcc",
            "--target",
            &url,
            "--procedures",
            "--threads",
            "2",
            "--warmup",
            "0",
            "--duration",
            "4s",
            "--runs",
            "1",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "run --procedures: {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        doc["config"]["workload_options"]["procedures"],
        Json::Bool(true)
    );
    let run = &doc["points"][0]["runs"][0];
    for k in [
        "NewOrder",
        "Payment",
        "OrderStatus",
        "Delivery",
        "StockLevel",
    ] {
        assert!(
            run["by_kind"][k]["ops"].as_u64().unwrap_or(0) > 0,
            "{k} never finished: {}",
            run["by_kind"]
        );
    }
    // Only the conflicts statement mode retries may fail (each one retried).
    if let Some(errors) = run["errors"].as_object() {
        for (class, n) in errors {
            assert!(
                ["deadlock", "lock_wait_timeout"].contains(&class.as_str()),
                "{class}: {n} ({})",
                out.stderr
            );
        }
    }
    assert_eq!(
        run["sections"]["tpcc"]["constraints"]["mix_compliant"],
        Json::Bool(true),
        "{}",
        run["sections"]["tpcc"]
    );
    assert!(
        out.stderr.contains("(stored procedures)"),
        "the mode is not shown: {}",
        out.stderr
    );
    let check = eb(dir.path(), &["check", "tpcc", "--target", &url]);
    assert_eq!(
        check.code, 0,
        "check after --procedures: {}{}",
        check.stdout, check.stderr
    );
    // The NewOrders the procedures committed are in the tables.
    let orders = block(async {
        let mut c = Conn::connect(&spec(&url)).await.unwrap();
        one(&mut c, "SELECT COUNT(*) FROM orders WHERE o_id > 3000").await
    });
    let committed = run["by_kind"]["NewOrder"]["ops"].as_u64().unwrap()
        - run["by_kind"]["NewOrder"]["rolled_back"].as_u64().unwrap();
    // A NewOrder in flight when the window closed may commit uncounted: one per connection.
    assert!(
        (committed..=committed + 2).contains(&(orders as u64)),
        "{orders} orders for {}",
        run["by_kind"]["NewOrder"]
    );
}
