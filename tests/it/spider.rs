//! Spider shards: a head (MariaDB with the Spider engine) and two backends, three private
//! servers the test starts with `enginebench server start`; the target names the head and its
//! backends (`?spider=`). TPC-C with one warehouse per backend is prepared (each backend gets
//! only its warehouse), run and checked through the head; oltp_point_select runs through the
//! head; a workload without a sharding key is refused.

use std::path::Path;

use enginebench::db::Conn;
use serde_json::Value as Json;

use crate::common::*;

fn have_spider() -> bool {
    let ok = Path::new("/usr/lib/mysql/plugin/ha_spider.so").exists()
        && (Path::new("/usr/sbin/mariadbd").exists() || Path::new("/usr/bin/mariadbd").exists());
    if !ok {
        if std::env::var("EB_REQUIRE_SERVERS").as_deref() == Ok("1") {
            panic!("mariadbd or ha_spider.so missing but EB_REQUIRE_SERVERS=1 (package mariadb-plugin-spider)");
        }
        eprintln!("skipped: mariadbd or the Spider plugin not installed");
    }
    ok
}

/// A head and two backends, started at the same time.
fn cluster() -> (OwnServer, Vec<OwnServer>, String) {
    let (head, b0, b1) = std::thread::scope(|s| {
        let h = s.spawn(|| OwnServer::start(None, &["plugin_load_add=ha_spider"]));
        let b0 = s.spawn(OwnServer::mariadb);
        let b1 = s.spawn(OwnServer::mariadb);
        (h.join().unwrap(), b0.join().unwrap(), b1.join().unwrap())
    });
    let target = format!("{}&spider={},{}", head.url, b0.socket(), b1.socket());
    (head, vec![b0, b1], target)
}

fn ints(url: &str, sql: &str) -> Vec<i64> {
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        c.query(sql)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r[0].as_deref().unwrap_or("0").parse().unwrap())
            .collect()
    })
}

fn run_json(dir: &Path, args: &[&str]) -> Json {
    let out = eb(dir, args);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    doc
}

/// The run's nodes: the head with every connection, then each backend with the statements the
/// head sent it (its Com_select moved).
fn check_spider_nodes(doc: &Json, threads: u64) {
    let notes = doc["notes"].to_string();
    assert!(notes.contains("Spider target"), "{notes}");
    let run = &doc["points"][0]["runs"][0];
    let nodes = run["by_node"]
        .as_array()
        .expect("by_node on a Spider target");
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    assert_eq!(nodes[0]["connections"].as_u64(), Some(threads));
    assert_eq!(nodes[0]["ops"], run["ops"]);
    for b in &nodes[1..] {
        assert!(
            b["node"].as_str().unwrap().starts_with("spider backend "),
            "{b}"
        );
        assert_eq!(b["connections"].as_u64(), Some(0), "{b}");
        let selects = b["server_counters"]["Com_select"].as_f64().unwrap_or(0.0);
        assert!(selects > 0.0, "a backend served no SELECT: {b}");
    }
    // Every node's version and settings, read at the start: the head, then the backends,
    // named as in by_node; each backend is a server of its own (its own socket).
    let infos = doc["target"]["nodes"].as_array().expect("target.nodes");
    let names = |v: &[Json]| -> Vec<String> { v.iter().map(|n| n["node"].to_string()).collect() };
    assert_eq!(names(infos), names(nodes));
    for b in &infos[1..] {
        assert!(!b["server_version"].as_str().unwrap().is_empty(), "{b}");
        assert!(b["settings_differ"]["socket"].is_string(), "{b}");
    }
}

#[test]
fn spider_tpcc_and_point_select_through_the_head() {
    if !have_spider() {
        return;
    }
    let (head, backends, target) = cluster();
    let dir = tempdir();
    let d = dir.path();

    // TPC-C, one warehouse per backend: warehouse w lives on backend w mod 2.
    let t0 = std::time::Instant::now();
    let out = eb(
        d,
        &["prepare", "tpcc", "--target", &target, "--warehouses", "2"],
    );
    assert_eq!(out.code, 0, "prepare: {}", out.stderr);
    eprintln!("spider tpcc prepare: {:.1} s", t0.elapsed().as_secs_f64());
    let per_backend = [2, 1];
    for (b, w) in backends.iter().zip(per_backend) {
        for sql in [
            "SELECT DISTINCT w_id FROM warehouse",
            "SELECT DISTINCT s_w_id FROM stock",
            "SELECT DISTINCT ol_w_id FROM order_line",
        ] {
            assert_eq!(ints(&b.url, sql), vec![w], "{sql} on {}", b.url);
        }
        assert_eq!(
            ints(&b.url, "SELECT count(*) FROM stock"),
            vec![100_000],
            "{}",
            b.url
        );
        // item stays on the head.
        assert_eq!(
            ints(
                &b.url,
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'item'"
            ),
            vec![0]
        );
    }
    assert_eq!(ints(&head.url, "SELECT count(*) FROM item"), vec![100_000]);
    assert_eq!(ints(&head.url, "SELECT count(*) FROM stock"), vec![200_000]);

    let doc = run_json(
        d,
        &[
            "run",
            "tpcc",
            "--target",
            &target,
            "--warehouses",
            "2",
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
    assert!(doc["points"][0]["runs"][0]["ops"].as_u64().unwrap() > 0);
    assert_eq!(
        doc["target"]["engine"].as_str(),
        Some("SPIDER"),
        "{}",
        doc["target"]
    );
    check_spider_nodes(&doc, 2);
    let out = eb(
        d,
        &["check", "tpcc", "--target", &target, "--warehouses", "2"],
    );
    assert_eq!(out.code, 0, "check: {}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("hold for 2 warehouse(s)"),
        "{}",
        out.stdout
    );
    // The run's new orders went where their warehouse lives.
    for (b, w) in backends.iter().zip(per_backend) {
        assert_eq!(ints(&b.url, "SELECT DISTINCT o_w_id FROM orders"), vec![w]);
    }

    // Point selects through the head: rows come back, nothing fails.
    let doc = run_json(
        d,
        &[
            "run",
            "oltp_point_select",
            "--target",
            &target,
            "--table-size",
            "1000",
            "--threads",
            "2",
            "--warmup",
            "0",
            "--duration",
            "1s",
            "--runs",
            "1",
            "--format",
            "json",
        ],
    );
    let run = &doc["points"][0]["runs"][0];
    assert!(run["ops"].as_u64().unwrap() > 0, "{run}");
    assert_eq!(run["errors_total"].as_u64(), Some(0), "{}", run["errors"]);
    assert!(run["rows_per_op"].as_f64().unwrap() >= 0.99, "{run}");
    check_spider_nodes(&doc, 2);
    let split: Vec<i64> = backends
        .iter()
        .map(|b| ints(&b.url, "SELECT count(*) FROM sbtest1")[0])
        .collect();
    assert_eq!(split, vec![500, 500]);
    assert_eq!(
        ints(
            &backends[0].url,
            "SELECT count(*) FROM sbtest1 WHERE id % 2 = 1"
        ),
        vec![0]
    );

    // cleanup drops the tables on the backends too.
    let out = eb(d, &["cleanup", "oltp_point_select", "--target", &target]);
    assert_eq!(out.code, 0, "cleanup: {}", out.stderr);
    for b in &backends {
        assert_eq!(
            ints(
                &b.url,
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'sbtest1'"
            ),
            vec![0]
        );
    }
}

/// `--server mariadb-spider:2`: the tool starts a head and two backends, the run goes through
/// the head to both backends, and every node and folder is gone afterwards.
#[test]
fn spider_managed_cluster_runs_and_leaves_nothing() {
    if !have_spider() {
        return;
    }
    let dir = tempdir();
    let out = eb(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--server",
            "mariadb-spider:2:small",
            "--table-size",
            "1000",
            "--threads",
            "2",
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
    let (pids, folder) = crate::cluster::managed_pids_and_folder(&out.stderr);
    assert_eq!(pids.len(), 3, "{}", out.stderr);
    for pid in &pids {
        assert!(
            crate::servers::wait_gone(*pid, std::time::Duration::from_secs(5)),
            "node {pid} still running"
        );
    }
    assert!(!Path::new(&folder).exists(), "{folder} kept");
    assert!(crate::servers::processes_mentioning(&folder).is_empty());
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    assert_eq!(doc["target"]["engine"].as_str(), Some("SPIDER"));
    let run = &doc["points"][0]["runs"][0];
    assert!(run["ops"].as_u64().unwrap() > 0, "{run}");
    assert_eq!(run["errors_total"].as_u64(), Some(0), "{}", run["errors"]);
    check_spider_nodes(&doc, 2);
}

#[test]
fn spider_refuses_workloads_without_a_sharding_key_and_bad_urls() {
    let dir = tempdir();
    let d = dir.path();
    // Refused before any connection: nothing listens on these ports.
    let target = "mysql://root:hunter2@127.0.0.1:1/eb?spider=127.0.0.1:2,127.0.0.1:3";
    for args in [
        vec!["run", "iibench", "--target", target],
        vec!["run", "bulk_insert", "--target", target],
        vec!["prepare", "iibench", "--target", target],
    ] {
        let out = eb(d, &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("no sharding key") && out.stderr.trim().lines().count() == 1,
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("hunter2"));
    }
    for bad in [
        "mysql://root:hunter2@127.0.0.1:1/eb?spider=",
        "mysql://root:hunter2@127.0.0.1:1/eb?spider=127.0.0.1:1",
        "postgres://pg:hunter2@127.0.0.1:1/eb?spider=127.0.0.1:2",
    ] {
        let out = eb(d, &["run", "micro-read", "--target", bad]);
        assert_eq!(out.code, 2, "{bad}: {}", out.stderr);
        assert!(
            out.stderr.contains("invalid target") && !out.stderr.contains("hunter2"),
            "{bad}: {}",
            out.stderr
        );
    }
}
