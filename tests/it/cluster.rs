//! Clustered targets: several hosts in one URL (connections spread round robin, figures per
//! node), and the clusters the tool starts itself (`--server mariadb-galera:N`).

use serde_json::Value as Json;

use crate::common::*;

/// The test server's TCP URL with its one host written twice (`127.0.0.1:P,localhost:P`): two
/// "nodes" that are the same server, so that the spreading and the per-node figures can be
/// checked without a cluster.
fn two_host_url(tcp: &str, db: &str) -> String {
    let u = url::Url::parse(tcp).unwrap();
    let port = u.port().unwrap();
    format!(
        "{}://{}@127.0.0.1:{port},localhost:{port}/{db}",
        u.scheme(),
        u.username()
    )
}

fn run_json(dir: &std::path::Path, args: &[&str]) -> Json {
    let out = eb(dir, args);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    doc
}

/// Every node's figures add up to the run's, and connections alternate between the nodes.
fn check_nodes(doc: &Json, threads: u64, labels: &[String]) {
    let run = &doc["points"][0]["runs"][0];
    let nodes = run["by_node"].as_array().expect("by_node with two hosts");
    let got: Vec<&str> = nodes.iter().map(|n| n["node"].as_str().unwrap()).collect();
    assert_eq!(got, labels.iter().map(String::as_str).collect::<Vec<_>>());
    let sum = |k: &str| nodes.iter().map(|n| n[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("ops"), run["ops"].as_u64().unwrap());
    assert_eq!(sum("errors_total"), run["errors_total"].as_u64().unwrap());
    assert_eq!(sum("connections"), threads);
    for n in nodes {
        assert_eq!(n["connections"].as_u64().unwrap(), threads / 2, "{n}");
        assert!(n["ops"].as_u64().unwrap() > 0, "{n}");
        assert!(n["latency_us"]["p99_us"].as_u64().unwrap() > 0, "{n}");
    }
}

/// Run `workload` over the test server of `var` named twice in one URL; check the per-node
/// figures.
fn spread_over_two_hosts(var: &str, db: &str, workload: &str, threads: u64) {
    let Some(tcp) = server_url(var) else {
        return;
    };
    let base = fresh_db(&tcp, db);
    let url = two_host_url(&base, db);
    let port = url::Url::parse(&tcp).unwrap().port().unwrap();
    let dir = tempdir();
    let t = threads.to_string();
    let doc = run_json(
        dir.path(),
        &[
            "run",
            workload,
            "--target",
            &url,
            "--table-size",
            "200",
            "--threads",
            &t,
            "--runs",
            "1",
            "--warmup",
            "0",
            "--duration",
            "400ms",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        doc["target"]["url"].as_str().unwrap(),
        url,
        "every host is shown"
    );
    check_nodes(
        &doc,
        threads,
        &[format!("127.0.0.1:{port}"), format!("localhost:{port}")],
    );
}

#[test]
fn cluster_multi_host_mariadb_spreads_connections() {
    let _lock = server_lock();
    spread_over_two_hosts(
        "EB_TEST_MYSQL_TCP_URL",
        "eb_it_cluster_hosts",
        "oltp_point_select",
        4,
    );
}

#[test]
fn cluster_multi_host_postgres_spreads_connections() {
    spread_over_two_hosts(
        "EB_TEST_PG_TCP_URL",
        "eb_it_cluster_hosts_pg",
        "micro-read",
        2,
    );
}

#[test]
fn cluster_bad_host_lists_exit_2() {
    let dir = tempdir();
    for url in [
        "mysql://root:hunter2@a:1,b:x/db",
        "mysql://root@a,b/db?socket=/tmp/s",
        "postgres://pg@a,b:99999/db",
    ] {
        let out = eb(dir.path(), &["run", "micro-read", "--target", url]);
        assert_eq!(out.code, 2, "{url}: {}", out.stderr);
        assert!(out.stderr.contains("invalid target"), "{}", out.stderr);
        assert!(!out.stderr.contains("hunter2"));
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    }
}
