//! linkbench for real on SQLite, MariaDB (InnoDB) and PostgreSQL with a small graph:
//! counttable equals the visible links per (id1, link_type) after the load and after a
//! request run (checked by `check linkbench` and by the test's own SQL), every request type
//! ran, and a broken count is named by `check`.

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::Conn;

/// (id1, link_type) pairs whose count differs from the visible links, by the test's own SQL.
fn wrong_counts(url: &str) -> (i64, i64, i64) {
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        let n = |v: Option<String>| v.unwrap().parse::<f64>().unwrap() as i64;
        let wrong = c
            .query_one(
                "SELECT COUNT(*) FROM counttable c WHERE c.count <> \
                 (SELECT COUNT(*) FROM linktable l WHERE l.id1 = c.id AND l.link_type = c.link_type AND l.visibility = 1)",
            )
            .await
            .unwrap();
        let missing = c
            .query_one(
                "SELECT COUNT(*) FROM linktable l WHERE l.visibility = 1 AND NOT EXISTS \
                 (SELECT 1 FROM counttable c WHERE c.id = l.id1 AND c.link_type = l.link_type)",
            )
            .await
            .unwrap();
        let visible = c
            .query_one("SELECT COUNT(*) FROM linktable WHERE visibility = 1")
            .await
            .unwrap();
        (n(wrong), n(missing), n(visible))
    })
}

fn whole_cycle(url: &str) {
    let dir = tempdir();
    let d = dir.path();
    let out = eb(
        d,
        &["prepare", "linkbench", "--target", url, "--maxid1", "3001"],
    );
    assert_eq!(out.code, 0, "prepare failed: {}", out.stderr);
    assert!(out.stderr.contains("into linktable"), "{}", out.stderr);
    let (wrong, missing, loaded) = wrong_counts(url);
    assert_eq!((wrong, missing), (0, 0), "after load");
    // Every link of the generated graph was loaded (3000 nodes miss the distribution's far
    // tail, so the mean is below the 4.06 of large graphs).
    let expect = enginebench::workload::linkbench::dist::mean_out_degree(3000) * 3000.0;
    assert_eq!(loaded, expect.round() as i64);
    let out = eb(d, &["check", "linkbench", "--target", url]);
    assert_eq!(
        out.code, 0,
        "check after load: {}{}",
        out.stdout, out.stderr
    );
    assert!(
        out.stdout.contains(&format!("({loaded} visible links)")),
        "{}",
        out.stdout
    );

    let out = eb(
        d,
        &[
            "run",
            "linkbench",
            "--target",
            url,
            "--maxid1",
            "3001",
            "--requesters",
            "3",
            "--warmup",
            "0",
            "--maxtime",
            "2s",
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
    assert_eq!(doc["points"][0]["threads"], 3);
    let by_kind = run["by_kind"].as_object().unwrap();
    assert_eq!(by_kind.len(), 10, "{run}");
    let total: u64 = by_kind.values().map(|k| k["ops"].as_u64().unwrap()).sum();
    assert_eq!(total, run["ops"].as_u64().unwrap());
    assert!(total >= 100, "too few requests: {total}");
    for k in [
        "addlink",
        "updatelink",
        "deletelink",
        "getlinklist",
        "getnode",
    ] {
        assert!(by_kind[k]["ops"].as_u64().unwrap() > 0, "no {k}: {run}");
    }
    assert!(run["intervals"].as_array().unwrap().len() >= 2);

    let (wrong, missing, visible) = wrong_counts(url);
    assert_eq!((wrong, missing), (0, 0), "after the request run");
    assert_ne!(visible, loaded, "the run changed no link");
    let out = eb(d, &["check", "linkbench", "--target", url]);
    assert_eq!(out.code, 0, "check after run: {}{}", out.stdout, out.stderr);

    // A broken count is named.
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        let id = c
            .query_one("SELECT MIN(id) FROM counttable WHERE count > 0")
            .await
            .unwrap()
            .unwrap();
        c.execute(&format!(
            "UPDATE counttable SET count = count + 1 WHERE id = {id} AND link_type = 123456789"
        ))
        .await
        .unwrap();
    });
    let out = eb(d, &["check", "linkbench", "--target", url]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stdout.matches("FAILED").count(), 1, "{}", out.stdout);
}

#[test]
fn linkbench_sqlite_load_run_check() {
    let dir = tempdir();
    let url = format!("sqlite://{}/lb.db", dir.path().display());
    whole_cycle(&url);
}

#[test]
fn linkbench_mariadb_load_run_check() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    whole_cycle(&fresh_db(&base, "eb_linkbench"));
}

#[test]
fn linkbench_postgres_load_run_check() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _g = server_lock();
    whole_cycle(&fresh_db(&base, "eb_linkbench"));
}

#[test]
fn linkbench_config_file_and_bad_input_exit_2() {
    let dir = tempdir();
    let d = dir.path();
    let bad_sum = d.join("sum.properties");
    std::fs::write(&bad_sum, "addlink = 50\n").unwrap();
    let unknown = d.join("unknown.properties");
    std::fs::write(&unknown, "frobnicate = 1\n").unwrap();
    let requests = d.join("requests.properties");
    std::fs::write(&requests, "requests = 1000\n").unwrap();
    let (bad_sum, unknown, requests) = (
        bad_sum.display().to_string(),
        unknown.display().to_string(),
        requests.display().to_string(),
    );
    for args in [
        vec!["run", "micro-read", "--maxid1", "100"],
        vec!["run", "tpcc", "--requesters", "4"],
        vec!["run", "linkbench", "--table-size", "10"],
        vec!["run", "linkbench", "--maxid1", "2"],
        vec!["run", "linkbench", "--requesters", "4", "--threads", "1,2"],
        vec!["run", "linkbench", "--linkbench-config", "/nonexistent/x"],
        vec!["run", "linkbench", "--linkbench-config", &bad_sum],
        vec!["run", "linkbench", "--linkbench-config", &unknown],
        vec!["run", "linkbench", "--linkbench-config", &requests],
    ] {
        let out = eb(d, &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{args:?}: {}", out.stderr);
    }

    // A LinkBench-style file changes the mix and the size: no getnode at all, 500 nodes.
    let f = d.join("w.properties");
    std::fs::write(
        &f,
        "# LinkBench workload\nmaxid1 = 501\nrequesters = 2\nmaxtime = 1\n\
         getnode = 0\ngetlinklist = 63.6445828\n\
         node_read_function = com.facebook.LinkBench.distributions.ZipfDistribution\n",
    )
    .unwrap();
    let url = format!("sqlite://{}/w.db", d.display());
    let f = f.display().to_string();
    let out = eb(
        d,
        &[
            "run",
            "linkbench",
            "--target",
            &url,
            "--linkbench-config",
            &f,
            "--warmup",
            "0",
            "--runs",
            "1",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    let run = &doc["points"][0]["runs"][0];
    assert_eq!(doc["points"][0]["threads"], 2);
    assert_eq!(run["by_kind"]["getnode"]["ops"], 0);
    assert!(run["by_kind"]["getlinklist"]["ops"].as_u64().unwrap() > 0);
    assert_eq!(doc["config"]["workload_options"]["maxid1"], 501);
    assert_eq!(doc["load"][0]["rows"], 500);
}
