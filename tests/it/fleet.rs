//! A fleet: shard processes of one run, each in its own network namespace reaching one private
//! MariaDB over TCP on a veth pair, then `merge` (docs/fleet.md).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::Conn;

/// Namespaces ebf<pid>-<i>, each with a veth pair: host side 10.231.<i>.1, namespace side
/// 10.231.<i>.2 and a default route to the host. The server listens on 10.231.0.1 only; the
/// host answers for it on every veth (any local address is reachable from every interface).
struct Netns {
    names: Vec<String>,
}

const SERVER_ADDR: &str = "10.231.0.1";

impl Netns {
    fn create(n: usize) -> Result<Netns, String> {
        let mut ns = Netns { names: Vec::new() };
        let pid = std::process::id() % 100_000;
        for i in 0..n {
            let name = format!("ebf{pid}-{i}");
            let (host, inner) = (format!("ebh{pid}{i}"), format!("ebn{pid}{i}"));
            let steps: Vec<Vec<String>> = vec![
                vec!["netns".into(), "add".into(), name.clone()],
                vec![
                    "link".into(),
                    "add".into(),
                    host.clone(),
                    "type".into(),
                    "veth".into(),
                    "peer".into(),
                    "name".into(),
                    inner.clone(),
                ],
                vec![
                    "link".into(),
                    "set".into(),
                    inner.clone(),
                    "netns".into(),
                    name.clone(),
                ],
                vec![
                    "addr".into(),
                    "add".into(),
                    format!("10.231.{i}.1/24"),
                    "dev".into(),
                    host.clone(),
                ],
                vec!["link".into(), "set".into(), host.clone(), "up".into()],
                vec![
                    "-n".into(),
                    name.clone(),
                    "addr".into(),
                    "add".into(),
                    format!("10.231.{i}.2/24"),
                    "dev".into(),
                    inner.clone(),
                ],
                vec![
                    "-n".into(),
                    name.clone(),
                    "link".into(),
                    "set".into(),
                    inner.clone(),
                    "up".into(),
                ],
                vec![
                    "-n".into(),
                    name.clone(),
                    "link".into(),
                    "set".into(),
                    "lo".into(),
                    "up".into(),
                ],
                vec![
                    "-n".into(),
                    name.clone(),
                    "route".into(),
                    "add".into(),
                    "default".into(),
                    "via".into(),
                    format!("10.231.{i}.1"),
                ],
            ];
            for (k, args) in steps.iter().enumerate() {
                let o = Command::new("ip")
                    .args(args)
                    .output()
                    .map_err(|e| format!("ip: {e}"))?;
                if k == 0 && o.status.success() {
                    ns.names.push(name.clone());
                }
                if !o.status.success() {
                    return Err(format!(
                        "ip {}: {}",
                        args.join(" "),
                        String::from_utf8_lossy(&o.stderr).trim()
                    ));
                }
            }
        }
        Ok(ns)
    }

    /// `ip netns exec NAME` before the command, or nothing on the host.
    fn prefix(&self, i: usize) -> Vec<String> {
        match self.names.get(i) {
            Some(n) => vec!["ip".into(), "netns".into(), "exec".into(), n.clone()],
            None => vec![],
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting a namespace deletes its veth pair too.
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

fn spawn_shard(prefix: &[String], args: &[String], dir: &Path) -> Child {
    let mut all: Vec<String> = prefix.to_vec();
    all.push(BIN.to_string());
    all.extend(args.iter().cloned());
    let mut c = Command::new(&all[0]);
    c.args(&all[1..])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for v in [
        "MYSQL_PWD",
        "PGPASSWORD",
        "ENGINEBENCH_TARGET",
        "ENGINEBENCH_RUN_ID",
    ] {
        c.env_remove(v);
    }
    c.spawn().expect("start a shard")
}

fn wait_ok(mut c: Child, what: &str) {
    let o = c.wait().unwrap();
    let mut err = String::new();
    use std::io::Read;
    c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(o.success(), "{what}: {o}: {err}");
}

/// Run `n` shards of `args` (each in namespace i when there are namespaces); returns their
/// result files.
fn fleet(ns: &Netns, dir: &Path, n: usize, run_id: &str, args: &[&str]) -> Vec<PathBuf> {
    let (kids, dirs) = start_fleet(ns, dir, n, run_id, args);
    for (i, k) in kids.into_iter().enumerate() {
        wait_ok(k, &format!("shard {i}"));
    }
    dirs.iter().map(|d| result_file(d)).collect()
}

/// Start `n` shards of `args`; returns them and their results folders.
fn start_fleet(
    ns: &Netns,
    dir: &Path,
    n: usize,
    run_id: &str,
    args: &[&str],
) -> (Vec<Child>, Vec<PathBuf>) {
    let mut kids = Vec::new();
    let mut dirs = Vec::new();
    for i in 0..n {
        let rd = dir.join(format!("{run_id}-{i}"));
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        a.extend([
            "--shard".into(),
            format!("{i}/{n}"),
            "--run-id".into(),
            run_id.into(),
            "--results-dir".into(),
            rd.to_str().unwrap().into(),
        ]);
        kids.push(spawn_shard(&ns.prefix(i), &a, dir));
        dirs.push(rd);
    }
    (kids, dirs)
}

fn merge(dir: &Path, files: &[PathBuf], out: &str) -> (Out, Json) {
    let mut a = vec!["merge".to_string()];
    a.extend(files.iter().map(|f| f.to_str().unwrap().to_string()));
    a.extend(["-o".into(), out.into()]);
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = eb(dir, &refs);
    let doc = if o.code == 0 {
        let j: Json = serde_json::from_str(
            &std::fs::read_to_string(dir.join(out).join("result.json")).unwrap(),
        )
        .unwrap();
        assert_schema_valid(&j);
        j
    } else {
        Json::Null
    };
    (o, doc)
}

fn read(p: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn run0(doc: &Json) -> &Json {
    &doc["points"][0]["runs"][0]
}

fn hist(b64: &str) -> Histogram<u64> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .unwrap()
}

/// The merged p50/p99 equal those of one histogram fed every shard's samples.
fn assert_exact_percentiles(merged: &Json, shards: &[Json]) {
    let parts: Vec<&Json> = shards.iter().map(run0).collect();
    let n = assert_exact("run", run0(merged), &parts);
    assert_eq!(run0(merged)["ops"].as_u64().unwrap(), n);
}

/// A merged part's (run, kind, node) `latency_us` p50/p99 equal those of one histogram fed
/// every shard part's samples (`histogram_hdr_v2`); returns how many samples.
fn assert_exact(what: &str, merged: &Json, shards: &[&Json]) -> u64 {
    let mut one: Histogram<u64> = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for s in shards {
        let b64 = s["histogram_hdr_v2"].as_str();
        let h = hist(b64.unwrap_or_else(|| panic!("{what}: a shard kept no histogram: {s}")));
        for v in h.iter_recorded() {
            one.record_n(v.value_iterated_to(), v.count_at_value())
                .unwrap();
        }
    }
    let got = |p: &str| merged["latency_us"][p].as_u64().unwrap();
    assert_eq!(got("p50_us"), one.value_at_quantile(0.50), "{what}");
    assert_eq!(got("p99_us"), one.value_at_quantile(0.99), "{what}");
    one.len()
}

/// `key` of every shard's part of the merged first run.
fn per_shard(merged: &Json, key: &str) -> Vec<Json> {
    run0(merged)["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[key].clone())
        .collect()
}

fn ops(doc: &Json) -> u64 {
    run0(doc)["ops"].as_u64().unwrap()
}

/// A connection with the runtime it lives on (a connection cannot move between runtimes).
struct Db {
    rt: tokio::runtime::Runtime,
    conn: Conn,
}

impl Db {
    fn connect(url: &str) -> Db {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let conn = rt
            .block_on(Conn::connect(&spec(url)))
            .expect("connect to the server");
        Db { rt, conn }
    }

    fn execute(&mut self, sql: &str) {
        self.rt
            .block_on(self.conn.execute(sql))
            .unwrap_or_else(|e| panic!("{sql}: {}", e.message));
    }

    /// The first column of the first row (None: no row), or the error.
    fn one(&mut self, sql: &str) -> Result<Option<String>, String> {
        self.rt
            .block_on(self.conn.query_one(sql))
            .map_err(|e| e.message)
    }

    fn num(&mut self, sql: &str) -> u64 {
        self.one(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .unwrap_or_else(|| panic!("{sql}: no row"))
            .parse()
            .unwrap()
    }

    /// The first column of every row.
    fn column(&mut self, sql: &str) -> Vec<Option<String>> {
        self.rt
            .block_on(self.conn.query(sql))
            .unwrap_or_else(|e| panic!("{sql}: {}", e.message))
            .into_iter()
            .map(|r| r.into_iter().next().flatten())
            .collect()
    }

    fn status(&mut self, name: &str) -> u64 {
        self.num(&format!(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '{name}'"
        ))
    }
}

#[test]
fn fleet_mariadb_three_namespaces() {
    if server_url("EB_TEST_MYSQL_URL").is_none() {
        return;
    }
    let t0 = Instant::now();
    let ns = match Netns::create(3) {
        Ok(ns) => ns,
        Err(e) => {
            eprintln!("FALLBACK: network namespaces cannot be made here ({e}); the shards run on the host over 127.0.0.1");
            Netns { names: vec![] }
        }
    };
    let bind = if ns.names.is_empty() {
        "127.0.0.1"
    } else {
        SERVER_ADDR
    };
    let srv = OwnServer::start(Some(bind), &[]);
    let mut admin = Db::connect(&srv.url);
    // root may connect from this machine only; the shards come from the namespaces' addresses
    // (or, without namespaces, from 127.0.0.1, where an anonymous ''@localhost would match
    // before fleet@'%').
    for host in ["'%'", "localhost"] {
        admin.execute(&format!("CREATE USER fleet@{host}"));
        admin.execute(&format!("GRANT ALL ON *.* TO fleet@{host}"));
    }
    let db = url::Url::parse(&srv.url).unwrap().path().to_string();
    let url = format!("mysql://fleet@{bind}:{}{db}", srv.port);
    let dir = tempdir();
    let d = dir.path();
    let common = [
        "--target",
        url.as_str(),
        "--threads",
        "2",
        "--warmup",
        "0",
        "--runs",
        "1",
    ];

    // oltp_point_select: one prepared statement executed per operation.
    let o = eb(
        d,
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &srv.url,
            "--table-size",
            "5000",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let before = admin.status("COM_STMT_EXECUTE");
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--table-size",
        "5000",
        "--duration",
        "3",
    ];
    args.extend(common);
    let files = fleet(&ns, d, 3, "ps1", &args);
    let after = admin.status("COM_STMT_EXECUTE");
    let shards: Vec<Json> = files.iter().map(|f| read(f)).collect();
    let (o, merged) = merge(d, &files, "m1");
    assert_eq!(o.code, 0, "{}", o.stderr);
    let sum: u64 = shards.iter().map(ops).sum();
    assert!(sum > 0);
    assert_eq!(ops(&merged), sum);
    // The server's own count: every operation of every shard, and nothing else executed.
    assert_eq!(
        after - before,
        sum,
        "server statements vs the shards' operations"
    );
    assert_exact_percentiles(&merged, &shards);
    let per: Vec<Json> = shards.iter().map(|s| Json::from(ops(s))).collect();
    assert_eq!(per_shard(&merged, "ops"), per);
    assert!(merged["fleet"]["max_start_skew_s"].as_f64().unwrap() < 0.5);
    assert_eq!(merged["status"], "complete");
    // report and compare read it like any result.
    let m = d.join("m1/result.json");
    let o = eb(d, &["report", m.to_str().unwrap(), "-o", "r.html"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(std::fs::read_to_string(d.join("r.html"))
        .unwrap()
        .contains("Per shard"));
    let o = eb(
        d,
        &["compare", files[0].to_str().unwrap(), m.to_str().unwrap()],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);

    // oltp_insert: every worker of the fleet inserts ids no other worker (of any shard) does:
    // no duplicate key, and every operation is one new row.
    let count = "SELECT COUNT(*) FROM sbtest1";
    let rows0 = admin.num(count);
    let mut args = vec![
        "run",
        "oltp_insert",
        "--table-size",
        "5000",
        "--duration",
        "2",
    ];
    args.extend(common);
    let files = fleet(&ns, d, 3, "ins1", &args);
    let shards: Vec<Json> = files.iter().map(|f| read(f)).collect();
    for s in &shards {
        assert!(ops(s) > 0);
        assert_eq!(run0(s)["errors_total"], 0, "{}", run0(s)["errors"]);
    }
    let sum: u64 = shards.iter().map(ops).sum();
    assert_eq!(admin.num(count) - rows0, sum);

    // TPC-C: each shard's terminals in its own warehouses; the database consistent after.
    let o = eb(
        d,
        &["prepare", "tpcc", "--target", &srv.url, "--warehouses", "3"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut args = vec!["run", "tpcc", "--warehouses", "3", "--duration", "3"];
    args.extend(common);
    let files = fleet(&ns, d, 3, "tpcc1", &args);
    let mut homes: Vec<(u64, u64)> = files
        .iter()
        .map(|f| {
            let doc = read(f);
            let h = &doc["config"]["workload_options"]["shard"]["home_warehouses"];
            (h[0].as_u64().unwrap(), h[1].as_u64().unwrap())
        })
        .collect();
    homes.sort();
    assert_eq!(homes, vec![(1, 1), (2, 2), (3, 3)]);
    let (o, merged) = merge(d, &files, "m2");
    assert_eq!(o.code, 0, "{}", o.stderr);
    let tpm: f64 = files
        .iter()
        .map(|f| run0(&read(f))["figures"]["tpm_c"].as_f64().unwrap())
        .sum();
    assert!((run0(&merged)["figures"]["tpm_c"].as_f64().unwrap() - tpm).abs() < 1e-6);
    // Each transaction kind's percentiles (TPC-C's response-time limits) are exact too.
    let docs: Vec<Json> = files.iter().map(|f| read(f)).collect();
    for kind in TPCC_KINDS {
        let parts: Vec<&Json> = docs.iter().map(|s| &run0(s)["by_kind"][kind]).collect();
        let n = assert_exact(kind, &run0(&merged)["by_kind"][kind], &parts);
        assert_eq!(run0(&merged)["by_kind"][kind]["ops"].as_u64().unwrap(), n);
    }
    let o = eb(d, &["check", "tpcc", "--target", &srv.url]);
    assert_eq!(o.code, 0, "check tpcc: {}{}", o.stdout, o.stderr);

    // A shard killed mid-run: lost in the merge, the others' figures kept.
    let run_id = "kill1";
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--table-size",
        "5000",
        "--duration",
        "4",
    ];
    args.extend(common);
    let (mut kids, dirs) = start_fleet(&ns, d, 3, run_id, &args);
    // Wait for the fleet's start, then kill shard 2 one second into the run.
    let deadline = Instant::now() + Duration::from_secs(30);
    let start_ms: i64 = loop {
        // Until a shard creates the table, the query fails: the fleet has not started either.
        let v = admin
            .one(&format!(
                "SELECT start_ms FROM enginebench_fleet WHERE run_id = '{run_id}' AND point = 0 AND shard = -1"
            ))
            .ok()
            .flatten();
        if let Some(v) = v {
            break v.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "the fleet never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    let now_ms = enginebench::fleet::now_unix_s() * 1000.0;
    std::thread::sleep(Duration::from_millis(
        (start_ms as f64 + 1000.0 - now_ms).max(0.0) as u64,
    ));
    let mut victim = kids.pop().unwrap();
    victim.kill().unwrap();
    let _ = victim.wait();
    for (i, k) in kids.into_iter().enumerate() {
        wait_ok(k, &format!("shard {i}"));
    }
    let files: Vec<PathBuf> = dirs.iter().map(|d| result_file(d)).collect();
    let (o, merged) = merge(d, &files, "m3");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("lost"), "{}", o.stderr);
    assert_eq!(merged["fleet"]["lost"], serde_json::json!([2]));
    assert_eq!(
        per_shard(&merged, "lost"),
        [false, false, true].map(Json::from)
    );
    let two: u64 = files[..2].iter().map(|f| ops(&read(f))).sum();
    assert!(two > 0);
    assert_eq!(ops(&merged), two);
    eprintln!(
        "fleet test on MariaDB took {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

#[test]
fn fleet_postgres_two_shards() {
    let Some(base) = server_url("EB_TEST_PG_TCP_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_fleet");
    let dir = tempdir();
    let d = dir.path();
    let o = eb(
        d,
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
    let none = Netns { names: vec![] };
    let args = [
        "run",
        "oltp_point_select",
        "--target",
        url.as_str(),
        "--table-size",
        "2000",
        "--threads",
        "2",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--duration",
        "2",
    ];
    let files = fleet(&none, d, 2, "pg1", &args);
    let shards: Vec<Json> = files.iter().map(|f| read(f)).collect();
    let (o, merged) = merge(d, &files, "m");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(ops(&merged), shards.iter().map(ops).sum::<u64>());
    assert_exact_percentiles(&merged, &shards);
    assert!(merged["fleet"]["max_start_skew_s"].as_f64().unwrap() < 0.5);
    // They met in the target: both checked in to point 0, and one start row.
    let rows = Db::connect(&url).column(
        "SELECT shard FROM enginebench_fleet WHERE run_id = 'pg1' AND point = 0 ORDER BY shard",
    );
    assert_eq!(
        rows,
        [Some("-1".to_string()), Some("0".into()), Some("1".into())]
    );

    // A shard alone: it waits --fleet-timeout for the other, then names it (exit 1).
    let mut alone: Vec<&str> = args.to_vec();
    alone.extend([
        "--shard",
        "0/2",
        "--run-id",
        "pg-alone",
        "--fleet-timeout",
        "2s",
    ]);
    let t = Instant::now();
    let o = eb(d, &alone);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("shard(s) 1 of 2 did not arrive"),
        "{}",
        o.stderr
    );
    assert!(t.elapsed() >= Duration::from_secs(2));

    // --start-at instead of a meeting: both shards start their run at that time.
    let at = enginebench::fleet::now_unix_s().ceil() + 6.0;
    let at_s = format!("{at}");
    let mut kids = Vec::new();
    let mut dirs = Vec::new();
    for i in 0..2 {
        let rd = d.join(format!("at-{i}"));
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        a.extend([
            "--shard".into(),
            format!("{i}/2"),
            "--start-at".into(),
            at_s.clone(),
            "--results-dir".into(),
            rd.to_str().unwrap().into(),
        ]);
        kids.push(spawn_shard(&[], &a, d));
        dirs.push(rd);
    }
    for (i, k) in kids.into_iter().enumerate() {
        wait_ok(k, &format!("--start-at shard {i}"));
    }
    let files: Vec<PathBuf> = dirs.iter().map(|d| result_file(d)).collect();
    for f in &files {
        let s = run0(&read(f))["started_at_unix_s"].as_f64().unwrap();
        assert!(s >= at && s < at + 0.5, "started {s}, --start-at {at}");
    }
    let (o, merged) = merge(d, &files, "m-at");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(merged["status"], "complete");
    assert!(merged["fleet"]["max_start_skew_s"].as_f64().unwrap() < 0.5);

    // A target of two nodes (the server named twice): the fleet numbers its connections
    // across the shards, so shard 0's one connection goes to node 0 and shard 1's to node 1
    // (numbered within each shard, both would go to node 0); the merge adds the nodes'
    // records, each node's percentiles exactly.
    let two = crate::cluster::two_host_url(&url, "eb_fleet");
    let mut spread = args.to_vec();
    for (flag, value) in [
        ("--target", two.as_str()),
        ("--threads", "1"),
        ("--duration", "1"),
    ] {
        let i = spread.iter().position(|a| *a == flag).unwrap();
        spread[i + 1] = value;
    }
    let files = fleet(&none, d, 2, "pg-nodes", &spread);
    let docs: Vec<Json> = files.iter().map(|f| read(f)).collect();
    for (i, doc) in docs.iter().enumerate() {
        let conns: Vec<u64> = run0(doc)["by_node"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["connections"].as_u64().unwrap())
            .collect();
        let want = if i == 0 { [1, 0] } else { [0, 1] };
        assert_eq!(conns, want, "shard {i}'s connection");
    }
    let (o, merged) = merge(d, &files, "m-nodes");
    assert_eq!(o.code, 0, "{}", o.stderr);
    for k in 0..2 {
        let node = &run0(&merged)["by_node"][k];
        assert_eq!(node["connections"], 1, "{node}");
        let parts: Vec<&Json> = docs.iter().map(|s| &run0(s)["by_node"][k]).collect();
        let n = assert_exact(&format!("node {k}"), node, &parts);
        assert_eq!(node["ops"].as_u64().unwrap(), n);
    }
}

/// A minimal shard result for the merge's refusals.
fn fake_shard(d: &Path, name: &str, shard: &str, run_id: &str) -> PathBuf {
    let (i, n) = shard.split_once('/').unwrap();
    let doc = serde_json::json!({
        "schema_version": 2, "tool": {"name": "enginebench", "version": "0"}, "status": "complete",
        "started_at": "2026-01-01T00:00:00Z",
        "config": {"workload": "oltp_point_select", "target": "x", "operations": ["oltp_point_select"], "workload_options": {},
                   "fleet": {"shard": {"index": i.parse::<u32>().unwrap(), "count": n.parse::<u32>().unwrap()}, "run_id": run_id, "timeout_s": 60.0}},
        "target": {"dbms": "mysql", "url": "x", "server_version": "1", "engine": "InnoDB"},
        "host": {"hostname": "h", "cores": 2, "memory_bytes": 1, "kernel": "k", "os": "o", "cpu_model": "c"},
        "load": [], "points": [], "notes": []
    });
    let p = d.join(name);
    std::fs::write(&p, doc.to_string()).unwrap();
    p
}

#[test]
fn fleet_bad_input_exit_2() {
    let dir = tempdir();
    let d = dir.path();
    let one_line_2 = |o: &Out, has: &str| {
        assert_eq!(o.code, 2, "{}", o.stderr);
        assert_eq!(o.stderr.trim().lines().count(), 1, "{}", o.stderr);
        assert!(o.stderr.contains(has), "{has}: {}", o.stderr);
    };
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "oltp_point_select", "--run-id", "r1"];
        a.extend(extra);
        eb(d, &a)
    };
    one_line_2(&run(&["--shard", "3/2"]), "below COUNT");
    one_line_2(&run(&["--shard", "0/0"]), "at least 1");
    one_line_2(&run(&["--shard", "/2"]), "JOB_COMPLETION_INDEX");
    let o = eb_env(
        d,
        &[
            "run",
            "oltp_point_select",
            "--shard",
            "/2",
            "--run-id",
            "bad id!",
        ],
        &[("JOB_COMPLETION_INDEX", "1")],
    );
    one_line_2(&o, "--run-id");
    one_line_2(
        &eb(d, &["run", "micro-read", "--shard", "0/2", "--run-id", "r"]),
        "cannot be split",
    );
    one_line_2(
        &eb(d, &["run", "oltp_point_select", "--shard", "0/2"]),
        "--run-id",
    );
    one_line_2(
        &eb(
            d,
            &[
                "run",
                "tpcc",
                "--warehouses",
                "2",
                "--shard",
                "0/3",
                "--run-id",
                "r",
            ],
        ),
        "at least one",
    );
    // prepare --shard: a bad shard, a load that cannot be split, no run id.
    let my = "mysql://bench@127.0.0.1:1/bench";
    let prep = |extra: &[&str]| {
        let mut a = vec!["prepare", "oltp_point_select", "--target", my];
        a.extend(extra);
        eb(d, &a)
    };
    one_line_2(&prep(&["--shard", "2/2", "--run-id", "p"]), "below COUNT");
    one_line_2(&prep(&["--shard", "0/2"]), "--run-id");
    one_line_2(
        &eb(
            d,
            &[
                "prepare",
                "bulk_insert",
                "--target",
                my,
                "--shard",
                "0/2",
                "--run-id",
                "p",
            ],
        ),
        "cannot be split",
    );
    one_line_2(
        &eb(
            d,
            &["prepare", "micro-read", "--shard", "0/2", "--run-id", "p"],
        ),
        "SQLite",
    );
    // The fleet's flags without --shard do nothing: refused, on run and prepare.
    one_line_2(
        &eb(d, &["run", "oltp_point_select", "--run-id", "r"]),
        "--run-id goes with --shard",
    );
    one_line_2(
        &eb(d, &["run", "oltp_point_select", "--fleet-timeout", "5s"]),
        "--fleet-timeout goes with --shard",
    );
    one_line_2(
        &eb(d, &["run", "oltp_point_select", "--start-at", "1700000000"]),
        "--start-at goes with --shard",
    );
    one_line_2(&prep(&["--run-id", "p"]), "--run-id goes with --shard");
    one_line_2(
        &prep(&["--fleet-timeout", "5s"]),
        "--fleet-timeout goes with --shard",
    );
    // ENGINEBENCH_RUN_ID alone (a fleet pod's environment) is no flag: ignored.
    let o = eb_env(
        d,
        &["prepare", "oltp_point_select", "--table-size", "100"],
        &[("ENGINEBENCH_RUN_ID", "pod-env")],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // iiBench's deletes would cross the shards' rows.
    one_line_2(
        &eb(
            d,
            &[
                "run",
                "iibench",
                "--max-table-rows",
                "100",
                "--shard",
                "0/2",
                "--run-id",
                "r",
            ],
        ),
        "not supported yet",
    );
    let a = fake_shard(d, "a.json", "0/2", "one");
    let b = fake_shard(d, "b.json", "1/2", "two");
    let c = fake_shard(d, "c.json", "1/3", "one");
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    one_line_2(&eb(d, &["merge", &s(&a), &s(&b)]), "fleet run");
    one_line_2(&eb(d, &["merge", &s(&a), &s(&c)]), "shard counts");
    one_line_2(&eb(d, &["merge", &s(&a), &s(&a)]), "twice");
}

fn yaml(name: &str) -> serde_yaml::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/kubernetes")
        .join(name);
    serde_yaml::from_str(&std::fs::read_to_string(&p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The Kubernetes manifests: an Indexed Job whose N pods run shards /N with the run id and a
/// shared results volume, and a merge Job reading that volume.
#[test]
fn fleet_kubernetes_manifests() {
    use serde_yaml::Value as Y;
    let s = |v: &Y| v.as_str().unwrap_or_default().to_string();
    let job = yaml("shards-job.yaml");
    assert_eq!(s(&job["apiVersion"]), "batch/v1");
    assert_eq!(s(&job["kind"]), "Job");
    let spec = &job["spec"];
    assert_eq!(s(&spec["completionMode"]), "Indexed");
    let n = spec["completions"].as_u64().unwrap();
    assert_eq!(spec["parallelism"].as_u64(), Some(n), "all shards at once");
    assert_eq!(
        spec["backoffLimit"].as_u64(),
        Some(0),
        "a failed shard is lost, not re-run"
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(s(&pod["restartPolicy"]), "Never");
    let c = &pod["containers"][0];
    let args: Vec<String> = c["args"].as_sequence().unwrap().iter().map(s).collect();
    assert_eq!(args[0], "run");
    let flag = |f: &str| {
        args[args
            .iter()
            .position(|a| a == f)
            .unwrap_or_else(|| panic!("{f}"))
            + 1]
        .clone()
    };
    // The index comes from JOB_COMPLETION_INDEX: --shard /N with N = completions.
    assert_eq!(flag("--shard"), format!("/{n}"));
    let env: Vec<&Y> = c["env"].as_sequence().unwrap().iter().collect();
    let env_of = |name: &str| env.iter().find(|e| s(&e["name"]) == name).copied();
    let run_id = env_of("ENGINEBENCH_RUN_ID").expect("the run id from the Job");
    assert!(s(&run_id["valueFrom"]["fieldRef"]["fieldPath"]).contains("controller-uid"));
    let idx = env_of("SHARD_INDEX").expect("the index for the results path");
    assert!(s(&idx["valueFrom"]["fieldRef"]["fieldPath"]).contains("job-completion-index"));
    assert!(flag("--results-dir").contains("$(SHARD_INDEX)"));
    assert!(
        env_of("MYSQL_PWD").is_some_and(|e| !e["valueFrom"]["secretKeyRef"].is_null()),
        "the password from a secret"
    );
    assert!(!args
        .iter()
        .any(|a| a.contains(":secret") || a.contains("password")));
    // Results on the shared volume, which the merge Job mounts too.
    let mount = s(&c["volumeMounts"][0]["mountPath"]);
    assert!(flag("--results-dir").starts_with(&mount));
    let claim = s(&pod["volumes"][0]["persistentVolumeClaim"]["claimName"]);
    let pvc = yaml("results-pvc.yaml");
    assert_eq!(s(&pvc["metadata"]["name"]), claim);
    assert_eq!(s(&pvc["spec"]["accessModes"][0]), "ReadWriteMany");
    let merge = yaml("merge-job.yaml");
    let mpod = &merge["spec"]["template"]["spec"];
    assert_eq!(
        s(&mpod["volumes"][0]["persistentVolumeClaim"]["claimName"]),
        claim
    );
    let cmd: Vec<String> = mpod["containers"][0]["command"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(s)
        .collect();
    assert!(
        cmd.last().unwrap().starts_with("enginebench merge "),
        "{cmd:?}"
    );
    // The image runs the binary.
    let cf = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes/Containerfile"),
    )
    .unwrap();
    assert!(cf.contains("ENTRYPOINT [\"/usr/local/bin/enginebench\"]"));
    // The run's flags are real ones: the binary accepts them (it stops at the target).
    let dir = tempdir();
    accepted_up_to_the_target(dir.path(), &args, "1", "k8s-test");

    // The prepare Job: N pods load by shard, meeting under the Job's uid.
    let prep = yaml("prepare-job.yaml");
    let spec = &prep["spec"];
    assert_eq!(s(&spec["completionMode"]), "Indexed");
    let n = spec["completions"].as_u64().unwrap();
    assert_eq!(spec["parallelism"].as_u64(), Some(n), "all shards at once");
    assert_eq!(spec["backoffLimit"].as_u64(), Some(0));
    let c = &spec["template"]["spec"]["containers"][0];
    let args: Vec<String> = c["args"].as_sequence().unwrap().iter().map(s).collect();
    assert_eq!(args[0], "prepare");
    let at = args.iter().position(|a| a == "--shard").expect("--shard");
    assert_eq!(args[at + 1], format!("/{n}"));
    let env: Vec<&Y> = c["env"].as_sequence().unwrap().iter().collect();
    let run_id = env
        .iter()
        .find(|e| s(&e["name"]) == "ENGINEBENCH_RUN_ID")
        .expect("the run id from the Job");
    assert!(s(&run_id["valueFrom"]["fieldRef"]["fieldPath"]).contains("controller-uid"));
    accepted_up_to_the_target(dir.path(), &args, "3", "k8s-prepare");
}

/// A manifest's container args, as a pod of index `index` runs them, are accepted by the
/// binary: it stops only at the target (a closed port here), exit 2.
fn accepted_up_to_the_target(dir: &Path, args: &[String], index: &str, run_id: &str) {
    let mut a = args.to_vec();
    let t = a.iter().position(|x| x == "--target").unwrap();
    a[t + 1] = "mysql://bench@127.0.0.1:1/bench".into();
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    let env = [
        ("JOB_COMPLETION_INDEX", index),
        ("ENGINEBENCH_RUN_ID", run_id),
    ];
    let o = eb_env(dir, &refs, &env);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("cannot connect"), "{}", o.stderr);
}

/// Row count and a checksum of every column of `table` but `skip` (load timestamps, which
/// differ between two prepares run at different times), order-independent.
fn checksum(db: &mut Db, table: &str, skip: &[&str]) -> (u64, String) {
    let cols: Vec<String> = db
        .column(&format!(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '{table}' ORDER BY ordinal_position"
        ))
        .into_iter()
        .flatten()
        .filter(|c| !skip.contains(&c.as_str()))
        .collect();
    assert!(!cols.is_empty(), "{table} has columns");
    let n = db.num(&format!("SELECT COUNT(*) FROM {table}"));
    let sum = db
        .one(&format!(
            "SELECT SUM(CRC32(CONCAT_WS('|', {}))) FROM {table}",
            cols.join(", ")
        ))
        .unwrap()
        .unwrap_or_default();
    (n, sum)
}

/// The index names of `table`.
fn indexes(db: &mut Db, table: &str) -> Vec<Option<String>> {
    db.column(&format!(
        "SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = '{table}' ORDER BY index_name"
    ))
}

/// `prepare` by `n` shard processes at once (run id `id`); returns their stderr.
fn prepare_fleet(dir: &Path, n: usize, id: &str, args: &[&str]) -> Vec<String> {
    let kids: Vec<Child> = (0..n)
        .map(|i| {
            let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            a.extend([
                "--shard".into(),
                format!("{i}/{n}"),
                "--run-id".into(),
                id.into(),
            ]);
            spawn_shard(&[], &a, dir)
        })
        .collect();
    kids.into_iter()
        .enumerate()
        .map(|(i, mut c)| {
            let st = c.wait().unwrap();
            let mut err = String::new();
            use std::io::Read;
            c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            assert!(st.success(), "prepare shard {i}: {st}: {err}");
            err
        })
        .collect()
}

/// `prepare --shard` by three processes gives the tables, indexes and metadata of one
/// `prepare` (rows, values); TPC-C by two shards passes `check tpcc`; LinkBench's and iiBench's
/// shards write disjoint keys, and their results merge.
#[test]
fn fleet_prepare_by_shards_mariadb() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let t0 = Instant::now();
    let one = fresh_db(&base, "eb_fp_one");
    let three = fresh_db(&base, "eb_fp_three");
    let dir = tempdir();
    let d = dir.path();
    let (mut db1, mut db3) = (Db::connect(&one), Db::connect(&three));
    // (workload and size flags, tables, columns left out of the checksum)
    let cases: [(&[&str], &[&str], &[&str]); 3] = [
        (
            &["oltp_read_write", "--tables", "2", "--table-size", "3000"],
            &["sbtest1", "sbtest2"],
            &[],
        ),
        (
            &["linkbench", "--maxid1", "2001"],
            &["nodetable", "linktable", "counttable"],
            &["time"],
        ),
        (&["micro-read", "--table-size", "3000"], &["normal"], &[]),
    ];
    for (k, (w, tables, skip)) in cases.iter().enumerate() {
        let mut a = vec!["prepare"];
        a.extend(*w);
        let mut alone = a.clone();
        alone.extend(["--target", one.as_str()]);
        let o = eb(d, &alone);
        assert_eq!(o.code, 0, "{}", o.stderr);
        a.extend(["--target", three.as_str(), "--load-connections", "2"]);
        let id = format!("fp-{k}");
        let errs = prepare_fleet(d, 3, &id, &a);
        assert!(errs[1].contains("waiting for shard 0"), "{}", errs[1]);
        for t in *tables {
            let c1 = checksum(&mut db1, t, skip);
            assert!(c1.0 > 0, "{t}");
            assert_eq!(checksum(&mut db3, t, skip), c1, "{t}: rows and values");
            assert_eq!(indexes(&mut db3, t), indexes(&mut db1, t), "{t}: indexes");
        }
        let meta = "SELECT info FROM enginebench_meta ORDER BY workload";
        assert_eq!(db3.column(meta), db1.column(meta), "metadata");
        // Every shard checked in and loaded; shard 0 finished.
        let loaded = db3.column(&format!(
            "SELECT shard FROM enginebench_fleet WHERE run_id = '{id}' AND point = -3 ORDER BY shard"
        ));
        assert_eq!(loaded.len(), 3, "{loaded:?}");
        // Prepared again by a new fleet: nothing to do, nothing dropped.
        let errs = prepare_fleet(d, 3, &format!("fp-again-{k}"), &a);
        assert!(errs[0].contains("already prepared"), "{}", errs[0]);
        let t = tables[0];
        assert_eq!(checksum(&mut db3, t, skip), checksum(&mut db1, t, skip));
    }
    // A reused run id is refused before anything is dropped.
    let mut a = vec!["prepare", "micro-read", "--table-size", "3000"];
    a.extend([
        "--target",
        three.as_str(),
        "--shard",
        "0/1",
        "--run-id",
        "fp-2",
    ]);
    let o = eb(d, &a);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("used by an earlier fleet"),
        "{}",
        o.stderr
    );

    // LinkBench's shards keep to their id1 blocks: run them one after the other (same
    // --start-at, in the past: no wait) and look at what each wrote.
    let nodes = 2000u64;
    let at = format!("{}", enginebench::fleet::now_unix_s().floor());
    let mut files = Vec::new();
    for i in 0..2u64 {
        let since_ms = (enginebench::fleet::now_unix_s() * 1000.0) as u64;
        let rd = d.join(format!("lb-{i}"));
        let o = eb(
            d,
            &[
                "run",
                "linkbench",
                "--maxid1",
                "2001",
                "--target",
                &three,
                "--threads",
                "2",
                "--warmup",
                "0",
                "--duration",
                "2",
                "--shard",
                &format!("{i}/2"),
                "--start-at",
                &at,
                "--results-dir",
                rd.to_str().unwrap(),
            ],
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        let (lo, hi) = (i * nodes / 2 + 1, (i + 1) * nodes / 2);
        let written = db3.num(&format!(
            "SELECT COUNT(*) FROM linktable WHERE time >= {since_ms}"
        ));
        assert!(written > 0, "shard {i} wrote links");
        let outside = format!("(id1 < {lo} OR id1 > {hi})");
        assert_eq!(
            db3.num(&format!(
                "SELECT COUNT(*) FROM linktable WHERE time >= {since_ms} AND {outside}"
            )),
            0,
            "shard {i}'s links outside {lo}..{hi}"
        );
        assert_eq!(
            db3.num(&format!(
                "SELECT COUNT(*) FROM counttable WHERE time >= {since_ms} AND (id < {lo} OR id > {hi})"
            )),
            0,
            "shard {i}'s counts outside {lo}..{hi}"
        );
        // Updated nodes in the block; added ones past the loaded ids (the server's).
        assert_eq!(
            db3.num(&format!(
                "SELECT COUNT(*) FROM nodetable WHERE time >= {} AND id <= {nodes} AND (id < {lo} OR id > {hi})",
                since_ms / 1000 + 1
            )),
            0,
            "shard {i}'s nodes outside {lo}..{hi}"
        );
        files.push(result_file(&rd));
    }
    let (o, merged) = merge(d, &files, "m-lb");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        ops(&merged),
        files.iter().map(|f| ops(&read(f))).sum::<u64>()
    );
    let o = eb(d, &["check", "linkbench", "--target", &three]);
    assert_eq!(o.code, 0, "check linkbench: {}{}", o.stdout, o.stderr);

    // iiBench: two shards (they meet to make the table) insert the rows one process would,
    // none twice; the server numbers them.
    let ii = [
        "run",
        "iibench",
        "--max-rows",
        "2000",
        "--rows-per-commit",
        "100",
        "--threads",
        "1",
    ];
    let mut a: Vec<&str> = ii.to_vec();
    a.extend(["--target", one.as_str(), "--results-dir", "ii-one"]);
    let o = eb(d, &a);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut a: Vec<&str> = ii.to_vec();
    a.extend(["--target", three.as_str()]);
    let none = Netns { names: vec![] };
    let files = fleet(&none, d, 2, "ii1", &a);
    for f in &files {
        assert_eq!(run0(&read(f))["rows"], 1000);
    }
    let cols = &["transactionid", "dateandtime"];
    let c1 = checksum(&mut db1, "purchases_index", cols);
    assert_eq!(c1.0, 2000);
    assert_eq!(checksum(&mut db3, "purchases_index", cols), c1);
    assert_eq!(
        db3.num("SELECT COUNT(DISTINCT transactionid) FROM purchases_index"),
        2000
    );
    let (o, merged) = merge(d, &files, "m-ii");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(run0(&merged)["rows"], 2000);

    // TPC-C by two shards: whole warehouses each, consistent afterwards.
    let tpcc = fresh_db(&base, "eb_fp_tpcc");
    let errs = prepare_fleet(
        d,
        2,
        "fp-tpcc",
        &["prepare", "tpcc", "--warehouses", "2", "--target", &tpcc],
    );
    for e in &errs {
        assert!(e.contains("loaded 100000 rows into stock"), "{e}");
    }
    let mut db = Db::connect(&tpcc);
    assert_eq!(db.num("SELECT COUNT(*) FROM stock"), 200_000);
    assert_eq!(db.num("SELECT COUNT(DISTINCT w_id) FROM warehouse"), 2);
    let o = eb(d, &["check", "tpcc", "--target", &tpcc]);
    assert_eq!(o.code, 0, "check tpcc: {}{}", o.stdout, o.stderr);
    eprintln!(
        "fleet prepare test on MariaDB took {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}
