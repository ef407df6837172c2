//! Clustered targets: several hosts in one URL (connections spread round robin, figures per
//! node), and the clusters the tool starts itself (`--server mariadb-galera:N`).

use enginebench::db::Conn;
use serde_json::Value as Json;

use crate::common::*;

/// The test server's TCP URL with its one host written twice (`127.0.0.1:P,localhost:P`): two
/// "nodes" that are the same server, so that the spreading and the per-node figures can be
/// checked without a cluster.
pub(crate) fn two_host_url(tcp: &str, db: &str) -> String {
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

/// `target.nodes`: one entry per node of the runs' `by_node`, in the same order, each with its
/// server version; node 0 differs from itself in nothing, every other node in `setting` (a
/// setting that names the node: it differs by nature).
fn check_node_infos(doc: &Json, setting: &str) {
    let infos = doc["target"]["nodes"].as_array().expect("target.nodes");
    let by_node = doc["points"][0]["runs"][0]["by_node"].as_array().unwrap();
    let names = |v: &Vec<Json>| -> Vec<String> {
        v.iter()
            .map(|n| n["node"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(infos), names(by_node));
    for (i, n) in infos.iter().enumerate() {
        assert!(n.get("error").is_none(), "{n}");
        assert!(!n["server_version"].as_str().unwrap().is_empty(), "{n}");
        let differ = n.get("settings_differ");
        if i == 0 {
            assert!(differ.is_none(), "{n}");
        } else {
            let v = differ.and_then(|d| d[setting].as_str());
            assert!(v.is_some(), "{setting} does not differ: {n}");
            assert_ne!(v, doc["target"]["settings"][setting].as_str(), "{n}");
        }
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

/// The nodes of a multi-host URL, each as a URL of its own.
fn node_urls(url: &str) -> Vec<String> {
    let (head, rest) = url.split_once('@').unwrap();
    let (hosts, path) = rest.split_once('/').unwrap();
    hosts
        .split(',')
        .map(|h| format!("{head}@{h}/{path}"))
        .collect()
}

/// Each node's answers to `sql` (one row), after waiting for the node to apply everything the
/// cluster committed before (causal read).
fn per_node(urls: &[String], sql: &str) -> Vec<Vec<Option<String>>> {
    urls.iter()
        .map(|u| {
            block(async {
                let mut c = Conn::connect(&spec(u))
                    .await
                    .expect("connect to a Galera node");
                c.execute("SET SESSION wsrep_sync_wait = 1").await.unwrap();
                c.query(sql).await.unwrap().remove(0)
            })
        })
        .collect()
}

/// The conflicts Galera counted on all nodes so far (certification failures and transactions
/// aborted by a replicated write).
fn galera_conflicts(urls: &[String]) -> u64 {
    per_node(
        urls,
        "SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS \
         WHERE VARIABLE_NAME IN ('WSREP_LOCAL_CERT_FAILURES', 'WSREP_LOCAL_BF_ABORTS')",
    )
    .iter()
    .map(|r| r[0].as_deref().unwrap_or("0").parse::<u64>().unwrap())
    .sum()
}

/// oltp_read_write over the three nodes of the test Galera cluster on 100 hot rows: every node
/// serves its connections, the cluster's conflicts come back as deadlock errors that are
/// counted and not fatal, and afterwards every node holds the same rows and the same sum of
/// `k`.
/// The Galera tests share one cluster, and one of them kills a node: one at a time.
static GALERA: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The test cluster's URL; None (skipped) when scripts/db-servers.sh started none
/// (EB_GALERA_NODES=0 writes the variable empty).
fn galera_url() -> Option<String> {
    if std::env::var("EB_TEST_GALERA_URL").as_deref() == Ok("") {
        eprintln!("skipped: EB_GALERA_NODES=0 started no Galera cluster");
        return None;
    }
    server_url("EB_TEST_GALERA_URL")
}

/// A fresh database `db` on the cluster of `base` (made on the first node; DDL replicates)
/// with oltp_read_write's 100 rows prepared: its multi-host URL and its nodes' own URLs.
fn galera_db(base: &str, db: &str, dir: &std::path::Path) -> (String, Vec<String>) {
    let first = node_urls(base).remove(0);
    let one = fresh_db(&first, db);
    let hosts = base.split_once('@').unwrap().1.split_once('/').unwrap().0;
    let url = format!("{}@{hosts}/{db}", one.split_once('@').unwrap().0);
    let nodes = node_urls(&url);
    assert_eq!(nodes.len(), 3, "{url}");
    let prep = eb(
        dir,
        &[
            "prepare",
            "oltp_read_write",
            "--target",
            &url,
            "--table-size",
            "100",
        ],
    );
    assert_eq!(prep.code, 0, "{}", prep.stderr);
    (url, nodes)
}

/// `run oltp_read_write` on `target` (`--target URL` or `--server CLUSTER`), 100 rows with 6
/// connections, one run of `duration`, JSON on stdout, then `extra`.
fn galera_run(dir: &std::path::Path, target: [&str; 2], duration: &str, extra: &[&str]) -> Out {
    let mut args = vec![
        "run",
        "oltp_read_write",
        target[0],
        target[1],
        "--table-size",
        "100",
        "--threads",
        "6",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--duration",
        duration,
        "--format",
        "json",
    ];
    args.extend(extra);
    eb(dir, &args)
}

#[test]
fn cluster_galera_oltp_read_write_over_three_nodes() {
    let Some(base) = galera_url() else {
        return;
    };
    let _one = GALERA.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let (url, nodes) = galera_db(&base, "eb_it_galera", dir.path());
    let conflicts0 = galera_conflicts(&nodes);
    let out = galera_run(dir.path(), ["--target", &url], "2s", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    let conflicts = galera_conflicts(&nodes) - conflicts0;
    let run = &doc["points"][0]["runs"][0];
    let by_node = run["by_node"].as_array().unwrap();
    assert_eq!(by_node.len(), 3);
    // Each node's own counters, read over a connection of its own around the run: its
    // commits, and together the conflicts the cluster counted.
    let mut node_conflicts = 0.0;
    for n in by_node {
        assert_eq!(n["connections"].as_u64().unwrap(), 2, "{n}");
        assert!(n["ops"].as_u64().unwrap() > 0, "{n}");
        let c = &n["server_counters"];
        assert!(c["Com_commit"].as_f64().unwrap() > 0.0, "{n}");
        for k in ["wsrep_local_cert_failures", "wsrep_local_bf_aborts"] {
            node_conflicts += c[k].as_f64().unwrap_or(0.0);
        }
    }
    assert_eq!(node_conflicts as u64, conflicts, "{by_node:?}");
    check_node_infos(&doc, "port");
    // The page's node table (CSV here): a row per node, its conflicts adding up the same.
    let path = dir.path().join("galera.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let p = path.to_str().unwrap();
    let out = eb(
        dir.path(),
        &[
            "report", p, "--format", "csv", "--table", "nodes", "-o", "-",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut lines = out.stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "conflicts").unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "{}", out.stdout);
    let csv_conflicts: f64 = rows.iter().map(|r| r[col].parse::<f64>().unwrap()).sum();
    assert_eq!(csv_conflicts as u64, conflicts, "{}", out.stdout);
    // The node settings table: the other nodes' ports, beside node 0's.
    let out = eb(
        dir.path(),
        &[
            "report",
            p,
            "--format",
            "csv",
            "--table",
            "node_settings",
            "-o",
            "-",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let named = out.stdout.lines().filter(|l| l.contains(",port,")).count();
    assert_eq!(named, 2, "{}", out.stdout);
    // Conflicts are counted by class, never fatal, and come from the cluster: the server
    // reports a certification failure or a brute-force abort as error 1213 (deadlock).
    let errors = run["errors"].as_object().cloned().unwrap_or_default();
    assert!(
        errors.keys().all(|k| k == "deadlock"),
        "only conflicts expected: {errors:?}"
    );
    let deadlocks = errors.get("deadlock").and_then(|v| v.as_u64()).unwrap_or(0);
    assert!(
        deadlocks == 0 || conflicts > 0,
        "{deadlocks} deadlocks but Galera counted no conflict"
    );
    // Every node ends with the same table.
    let state = per_node(&nodes, "SELECT COUNT(*), SUM(k) FROM sbtest1");
    assert_eq!(state[0][0].as_deref(), Some("100"), "{state:?}");
    assert!(
        state.iter().all(|s| *s == state[0]),
        "nodes differ: {state:?}"
    );
    eprintln!("galera: {deadlocks} conflicts counted by the run, {conflicts} by the cluster");
}

/// The mariadbd listening on `port` of this machine, and its command line.
fn mariadbd_on(port: u16) -> Option<(i32, Vec<String>)> {
    let want = format!("--port={port}");
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.trim() != "mariadbd" {
            continue;
        }
        let raw = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args.contains(&want) {
            return Some((pid, args));
        }
    }
    None
}

/// Wait (bounded) until the Galera node behind `url` is synced with its cluster again.
fn wait_synced(url: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        let state = block(async {
            let mut c = Conn::connect(&spec(url)).await.ok()?;
            c.query("SHOW STATUS LIKE 'wsrep_local_state_comment'")
                .await
                .ok()?
                .first()?
                .get(1)?
                .clone()
        });
        if state.as_deref() == Some("Synced") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the restarted node is not synced after 90 s: {state:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// One node of the cluster killed mid-run: with --reconnect the run goes on against the other
/// nodes and ends on time, and the lost node's connections are reported on that node. The
/// node is started again afterwards (it rejoins by state transfer).
#[test]
fn cluster_galera_node_killed_mid_run_goes_on_with_reconnect() {
    let Some(base) = galera_url() else {
        return;
    };
    let _one = GALERA.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let (url, nodes) = galera_db(&base, "eb_it_galera_kill", dir.path());
    let victim_port = url::Url::parse(&nodes[2]).unwrap().port().unwrap();
    let (pid, args) = mariadbd_on(victim_port).expect("the third node's mariadbd");
    let killer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        // SAFETY: a plain kill(2) of a process this test found by its command line.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let started = std::time::Instant::now();
    let out = galera_run(
        dir.path(),
        ["--target", &url],
        "4s",
        &["--reconnect", "--connect-timeout", "2s"],
    );
    let took = started.elapsed();
    killer.join().unwrap();
    // Start the node again whatever happened, so the cluster is whole for the other tests.
    let mut restart = std::process::Command::new("setsid");
    restart
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // The node must outlive this test (the other tests use it), so nobody waits for it here.
    #[allow(clippy::zombie_processes)]
    restart.spawn().expect("restart the killed node");
    wait_synced(&nodes[2]);

    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(took.as_secs() < 40, "the run took {took:?}");
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    let by_node = doc["points"][0]["runs"][0]["by_node"]
        .as_array()
        .unwrap()
        .clone();
    let lost = by_node[2]["errors"]["connection_lost"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        lost > 0,
        "the killed node's connections are reported: {by_node:?}"
    );
    for n in &by_node[..2] {
        assert!(n["ops"].as_u64().unwrap() > 0, "{n}");
        assert!(n["errors"].get("connection_lost").is_none(), "{n}");
    }
}

// ------------------------------------------------- clusters started by the tool ---

/// The clusters the tests start themselves: one at a time (six servers at once would crowd
/// this small machine and slow every other test).
static MANAGED: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether Galera (galera-4, rsync) is installed next to MariaDB; a skip otherwise (a failure
/// under EB_REQUIRE_SERVERS=1).
fn have_galera() -> bool {
    if !crate::servers::have("mariadb") {
        return false;
    }
    let ok = std::path::Path::new("/usr/lib/galera/libgalera_smm.so").exists()
        && std::path::Path::new("/usr/bin/rsync").exists();
    if !ok {
        assert!(
            std::env::var("EB_REQUIRE_SERVERS").as_deref() != Ok("1"),
            "galera-4 or rsync missing but EB_REQUIRE_SERVERS=1"
        );
        eprintln!("skipped: galera-4 or rsync not installed");
    }
    ok
}

/// The pids and folder a managed run names on stderr ("... server pid A,B,C on ..., folder F").
pub(crate) fn managed_pids_and_folder(stderr: &str) -> (Vec<u32>, String) {
    let line = stderr
        .lines()
        .find(|l| l.contains(" server pid ") && l.contains(", folder "))
        .unwrap_or_else(|| panic!("no server line in: {stderr}"));
    let pids = line.split(" server pid ").nth(1).unwrap();
    let pids = pids.split_whitespace().next().unwrap();
    let pids = pids.split(',').map(|p| p.parse().unwrap()).collect();
    let folder = line.split(", folder ").nth(1).unwrap();
    let folder = folder.split(" (").next().unwrap().to_string();
    (pids, folder)
}

/// `run oltp_read_write --server mariadb-galera:3`: the tool bootstraps the cluster, the run's
/// connections spread over its three nodes (each node's counters in by_node, its queues
/// sampled), and afterwards every node is stopped and the cluster's folder is gone.
#[test]
fn cluster_managed_galera_run_stops_every_node() {
    if !have_galera() {
        return;
    }
    let _one = MANAGED.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let out = galera_run(dir.path(), ["--server", "mariadb-galera:3"], "3s", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (pids, folder) = managed_pids_and_folder(&out.stderr);
    assert_eq!(pids.len(), 3, "{}", out.stderr);
    for pid in &pids {
        assert!(
            crate::servers::wait_gone(*pid, std::time::Duration::from_secs(5)),
            "node {pid} still running"
        );
    }
    assert!(!std::path::Path::new(&folder).exists(), "{folder} kept");
    assert!(crate::servers::processes_mentioning(&folder).is_empty());
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    assert_eq!(
        doc["target"]["server"]["profile"].as_str(),
        Some("mariadb-galera:3:galera")
    );
    let run = &doc["points"][0]["runs"][0];
    let by_node = run["by_node"].as_array().unwrap();
    assert_eq!(by_node.len(), 3, "{by_node:?}");
    for n in by_node {
        assert_eq!(n["connections"].as_u64(), Some(2), "{n}");
        assert!(n["ops"].as_u64().unwrap() > 0, "{n}");
        let c = &n["server_counters"];
        assert!(c["Com_commit"].as_f64().unwrap() > 0.0, "{n}");
        // Every node applied the others' write sets.
        assert!(c["wsrep_received"].as_f64().unwrap_or(0.0) > 0.0, "{n}");
        let r = &n["replication"];
        assert!(r["samples"].as_u64().unwrap() >= 2, "{n}");
        assert!(r["recv_queue_mean"].as_f64().is_some(), "{n}");
    }
    let errors = run["errors"].as_object().cloned().unwrap_or_default();
    assert!(
        errors.keys().all(|k| k == "deadlock"),
        "only conflicts expected: {errors:?}"
    );
}

/// `server start mariadb-galera:3` keeps a cluster for the test: oltp_read_write over its
/// nodes, then every node holds the same rows and the same sum of k; `server status` and
/// `server stop` act on every node.
#[test]
fn cluster_server_start_galera_nodes_agree_after_a_run() {
    if !have_galera() {
        return;
    }
    let _one = MANAGED.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let data = dir.path().join("gal");
    let data_s = data.to_str().unwrap();
    let start = eb(
        dir.path(),
        &["server", "start", "mariadb-galera:3", "--datadir", data_s],
    );
    assert_eq!(start.code, 0, "{}", start.stderr);
    let url = start.stdout.trim().to_string();
    let stop = || {
        eb(
            dir.path(),
            &["server", "stop", "mariadb-galera:3", "--datadir", data_s],
        )
    };
    let checked = std::panic::catch_unwind(|| {
        let nodes = node_urls(&url);
        assert_eq!(nodes.len(), 3, "{url}");
        let st = eb(
            dir.path(),
            &["server", "status", "mariadb-galera", "--datadir", data_s],
        );
        assert_eq!(st.code, 0, "{}", st.stderr);
        assert_eq!(st.stdout.trim(), url);
        let out = galera_run(dir.path(), ["--target", &url], "2s", &[]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
        assert_eq!(
            doc["points"][0]["runs"][0]["by_node"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        let state = per_node(&nodes, "SELECT COUNT(*), SUM(k) FROM sbtest1");
        assert_eq!(state[0][0].as_deref(), Some("100"), "{state:?}");
        assert!(
            state.iter().all(|s| *s == state[0]),
            "nodes differ: {state:?}"
        );
    });
    let stopped = stop();
    assert_eq!(stopped.code, 0, "{}", stopped.stderr);
    assert!(crate::servers::processes_mentioning(data_s).is_empty());
    let st = eb(
        dir.path(),
        &["server", "status", "mariadb-galera:3", "--datadir", data_s],
    );
    assert_eq!(st.code, 1, "{}", st.stderr);
    if let Err(p) = checked {
        std::panic::resume_unwind(p);
    }
}

/// `server start postgres-replicas:1`, then `oltp_write_only` and `oltp_read_only` at the same
/// time on `?read=replicas`: the writes go to the primary, the reads to the replica, and both
/// results record the replica's lag.
#[test]
fn cluster_postgres_replica_serves_reads_while_primary_writes() {
    if !crate::servers::have("postgres") {
        return;
    }
    let _one = MANAGED.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let data = dir.path().join("pg");
    let data_s = data.to_str().unwrap();
    let start = eb(
        dir.path(),
        &[
            "server",
            "start",
            "postgres-replicas:1",
            "--profile",
            "small",
            "--datadir",
            data_s,
        ],
    );
    assert_eq!(start.code, 0, "{}", start.stderr);
    // The cluster's URL sends reads to the replica and the rest to the primary.
    let url = start.stdout.trim().to_string();
    let base = url
        .strip_suffix("?read=replicas")
        .unwrap_or_else(|| panic!("{url}"))
        .to_string();
    let checked = std::panic::catch_unwind(|| {
        assert_eq!(node_urls(&base).len(), 2, "{base}");
        let prep = eb(
            dir.path(),
            &[
                "prepare",
                "oltp_read_only",
                "--target",
                &url,
                "--table-size",
                "1000",
            ],
        );
        assert_eq!(prep.code, 0, "{}", prep.stderr);
        let run = |w: &'static str, url: String, out: std::path::PathBuf| {
            std::thread::spawn(move || {
                std::fs::create_dir_all(&out).unwrap();
                eb(
                    &out,
                    &[
                        "run",
                        w,
                        "--target",
                        &url,
                        "--table-size",
                        "1000",
                        "--threads",
                        "2",
                        "--runs",
                        "1",
                        "--warmup",
                        "0",
                        "--duration",
                        "3s",
                        "--format",
                        "json",
                    ],
                )
            })
        };
        let writes = run("oltp_write_only", url.clone(), dir.path().join("w"));
        let reads = run("oltp_read_only", url.clone(), dir.path().join("r"));
        let (writes, reads) = (writes.join().unwrap(), reads.join().unwrap());
        for (what, out, served_by) in [("writes", &writes, 0), ("reads", &reads, 1)] {
            assert_eq!(out.code, 0, "{what}: {}", out.stderr);
            let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
            assert_schema_valid(&doc);
            let run = &doc["points"][0]["runs"][0];
            // sysbench's write events race on the same rows: deadlocks and duplicate keys
            // are counted, nothing else; the reads on the replica have no error.
            let errors = run["errors"].as_object().cloned().unwrap_or_default();
            assert!(
                errors
                    .keys()
                    .all(|k| served_by == 0 && (k == "deadlock" || k == "duplicate_key")),
                "{what}: {errors:?}"
            );
            let nodes = run["by_node"].as_array().unwrap();
            assert_eq!(nodes.len(), 2);
            assert_eq!(nodes[served_by]["connections"].as_u64(), Some(2), "{what}");
            assert!(nodes[served_by]["ops"].as_u64().unwrap() > 0, "{what}");
            assert_eq!(nodes[1 - served_by]["ops"].as_u64(), Some(0), "{what}");
            // The replica's lag, sampled every second and at the end.
            let lag = &nodes[1]["replication"];
            assert!(lag["samples"].as_u64().unwrap() >= 2, "{what}: {lag}");
            assert!(lag["lag_bytes_max"].as_u64().is_some(), "{what}: {lag}");
            assert!(lag["lag_s_max"].as_f64().is_some(), "{what}: {lag}");
            assert!(
                nodes[0].get("replication").is_none(),
                "{what}: the primary has no lag"
            );
            // PostgreSQL 14 and later say which server is a standby; older ones differ in
            // their port (the nodes of one machine).
            let hot = doc["target"]["settings"].get("in_hot_standby").is_some();
            check_node_infos(&doc, if hot { "in_hot_standby" } else { "port" });
        }
        // The replica's own count of transactions: the reads were served there.
        let replica = node_urls(&base).remove(1);
        let xacts: u64 = block(async {
            let mut c = Conn::connect(&spec(&replica)).await.unwrap();
            c.query_one(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
            )
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap()
        });
        assert!(xacts > 100, "replica committed {xacts} transactions");

        // A run right after a load whose tables the replica has not replayed yet (its replay
        // paused here): the run waits for the replica instead of failing on a missing table.
        let on_replica = |sql: &'static str| {
            let replica = replica.clone();
            block(async move {
                let mut c = Conn::connect(&spec(&replica)).await.unwrap();
                c.query(sql).await.unwrap();
            })
        };
        on_replica("SELECT pg_wal_replay_pause()");
        let rdir = dir.path().join("behind");
        std::fs::create_dir_all(&rdir).unwrap();
        let (u, d) = (url.clone(), rdir.clone());
        let behind = std::thread::spawn(move || {
            let args = ["run", "micro-read", "--target", &u, "--table-size", "300"];
            let mut args = args.to_vec();
            args.extend(["--runs", "1", "--warmup", "0", "--duration", "300ms"]);
            eb(&d, &args)
        });
        // Time for the run to start, load and find the replica behind (it waits up to 60 s).
        std::thread::sleep(std::time::Duration::from_secs(6));
        on_replica("SELECT pg_wal_replay_resume()");
        let out = behind.join().unwrap();
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stderr.contains("waiting for the replicas to replay"),
            "{}",
            out.stderr
        );
    });
    let stop = eb(
        dir.path(),
        &["server", "stop", "postgres-replicas:1", "--datadir", data_s],
    );
    assert_eq!(stop.code, 0, "{}", stop.stderr);
    assert!(crate::servers::processes_mentioning(data_s).is_empty());
    if let Err(p) = checked {
        std::panic::resume_unwind(p);
    }
}

/// Clusters that cannot be: exit 2 with one line, nothing started.
#[test]
fn cluster_bad_cluster_flags_exit_2() {
    let dir = tempdir();
    for args in [
        vec!["run", "oltp_read_write", "--server", "mariadb-galera:2"],
        vec!["run", "oltp_read_write", "--server", "postgres-replicas:0"],
        vec!["run", "oltp_read_write", "--server", "mariadb:galera"],
        vec!["run", "oltp_point_select", "--server", "mariadb-spider:0"],
        vec!["server", "start", "mariadb-spider:0"],
        vec!["server", "start", "mariadb-galera:1"],
        vec![
            "run",
            "oltp_read_only",
            "--target",
            "postgres://pg:hunter2@127.0.0.1:1/db?read=replicas",
        ],
    ] {
        let out = eb(dir.path(), &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_eq!(
            out.stderr.trim().lines().count(),
            1,
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
    }
}
