//! Every run against a server on this machine records the server's CPU per operation, without
//! `--server-pid`: the server is found from the admin connection's Unix socket peer or from the
//! socket listening on the target's loopback port, and `compare` shows the server's CPU per
//! operation next to the client's.

use serde_json::Value as Json;

use crate::common::*;

/// Run oltp_point_select briefly against `url` (no --server-pid); returns the document and
/// the file it was saved to.
fn run(dir: &std::path::Path, url: &str, name: &str) -> (Json, std::path::PathBuf) {
    let out = eb(
        dir,
        &[
            "run",
            "oltp_point_select",
            "--target",
            url,
            "--threads",
            "2",
            "--warmup",
            "0",
            "--duration",
            "1s",
            "--runs",
            "1",
            "--table-size",
            "1000",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{url}: {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).expect("json result");
    assert_schema_valid(&doc);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, &out.stdout).unwrap();
    (doc, path)
}

/// Two runs against `base` (in a fresh database `db`) record the server's CPU found by
/// `found_by`, and compare prints it.
fn server_cpu_recorded(base_var: &str, db: &str, query: &str, found_by: &str) {
    let Some(base) = server_url(base_var) else {
        return;
    };
    let _g = server_lock();
    let mut url = fresh_db(&base, db);
    if !query.is_empty() {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(query);
    }
    let dir = tempdir();
    let (a, pa) = run(dir.path(), &url, "A");
    let (_, pb) = run(dir.path(), &url, "B");
    let server = &a["target"]["server"];
    assert_eq!(server["found_by"], found_by, "{server}");
    assert_eq!(server["managed"], false);
    // The server scripts/db-servers.sh started (for PostgreSQL: the postmaster, not a backend).
    let pid_var = if base_var.contains("MYSQL") {
        "EB_TEST_MYSQL_PID"
    } else {
        "EB_TEST_PG_PID"
    };
    match std::env::var(pid_var) {
        Ok(pid) => assert_eq!(server["pid"].to_string(), pid, "{server}"),
        Err(_) => assert!(server["pid"].as_u64().unwrap() > 1, "{server}"),
    }
    for p in a["points"].as_array().unwrap() {
        for r in p["runs"].as_array().unwrap() {
            let sp = &r["server_process"];
            assert!(sp["cpu_us_per_op"].as_f64().unwrap() > 0.0, "{sp}");
            // In a closed loop a server thread waits for its client's next query: it went to
            // sleep (voluntary) or, when the client's reply preempted it, was preempted; one
            // or the other nearly once per query, far above 0.1.
            let sleeps = sp["voluntary_cs_per_op"].as_f64().unwrap();
            let preempted = sp["preempted_cs_per_op"].as_f64().unwrap();
            assert!(sleeps + preempted > 0.1, "{sp}");
            let share = r["client_cpu_share"].as_f64().unwrap();
            assert!(share > 0.0 && share < 1.0, "{share}");
        }
    }
    let out = eb(
        dir.path(),
        &["compare", pa.to_str().unwrap(), pb.to_str().unwrap()],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // One row per metric of the one point (operation, threads, metric, ...), the server's
    // next to the client's; the lines under the table name metrics too.
    for metric in [
        "client_cpu_us_per_op",
        "server_cpu_us_per_op",
        "server_sleeps_per_op",
        "server_preempts_per_op",
    ] {
        assert_eq!(
            out.stdout
                .lines()
                .filter(|l| l.split_whitespace().nth(2) == Some(metric))
                .count(),
            1,
            "{metric}: {}",
            out.stdout
        );
    }
}

#[test]
fn mariadb_socket_server_found_by_peer() {
    server_cpu_recorded("EB_TEST_MYSQL_URL", "eb_it_srvcpu_my", "", "socket peer");
}

#[test]
fn mariadb_tcp_server_found_by_listening_port() {
    server_cpu_recorded(
        "EB_TEST_MYSQL_TCP_URL",
        "eb_it_srvcpu_mytcp",
        "",
        "listening port",
    );
}

/// mysql_async keeps its socket to itself: the socket path's listener is looked up instead.
#[test]
fn mariadb_socket_fallback_driver_found_by_listening_socket() {
    server_cpu_recorded(
        "EB_TEST_MYSQL_URL",
        "eb_it_srvcpu_myasync",
        "driver=mysql_async",
        "listening port",
    );
}

#[test]
fn postgres_socket_server_found_by_peer() {
    server_cpu_recorded("EB_TEST_PG_URL", "eb_it_srvcpu_pg", "", "socket peer");
}

#[test]
fn postgres_tcp_server_found_by_listening_port() {
    server_cpu_recorded(
        "EB_TEST_PG_TCP_URL",
        "eb_it_srvcpu_pgtcp",
        "",
        "listening port",
    );
}
