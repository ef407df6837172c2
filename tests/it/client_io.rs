//! The lean clients' I/O path (`--client-io`): the runner's loops and these tests' loops take
//! io_uring unless `EB_CLIENT_IO=epoll`; the result names the path; a sandbox that forbids
//! io_uring gets epoll, said on stderr and in the result, and an explicit `io_uring` there is
//! a usage error.

use std::os::unix::process::CommandExt;
use std::process::Command;

use serde_json::Value as Json;

use crate::common::*;

/// The path these tests' loops and the runner's take under the suite's `EB_CLIENT_IO`.
fn expected_io() -> &'static str {
    match std::env::var("EB_CLIENT_IO").as_deref() {
        Ok("epoll") => "epoll",
        _ => "io_uring",
    }
}

fn point_select(dir: &std::path::Path, url: &str) -> Command {
    point_select_at(dir, url, "4")
}

fn point_select_at(dir: &std::path::Path, url: &str, threads: &str) -> Command {
    let mut c = eb_command(dir);
    c.args([
        "run",
        "oltp_point_select",
        "--target",
        url,
        "--table-size",
        "1000",
        "--threads",
        threads,
        "--warmup",
        "0",
        "--time",
        "1s",
        "--runs",
        "1",
        "--format",
        "json",
        "--results-dir",
    ])
    .arg(dir.join("results"));
    c
}

/// Deny `io_uring_setup` with EPERM in the child, as a container's seccomp profile does.
fn forbid_io_uring(c: &mut Command) {
    // SAFETY: only async-signal-safe calls (prctl) between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let nr = libc::SYS_io_uring_setup as u32;
            let mut filter = [
                // Load the system call number.
                libc::sock_filter {
                    code: 0x20,
                    jt: 0,
                    jf: 0,
                    k: 0,
                },
                // io_uring_setup: next instruction; else skip it.
                libc::sock_filter {
                    code: 0x15,
                    jt: 0,
                    jf: 1,
                    k: nr,
                },
                // SECCOMP_RET_ERRNO | EPERM
                libc::sock_filter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0x0005_0000 | libc::EPERM as u32,
                },
                // SECCOMP_RET_ALLOW
                libc::sock_filter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0x7fff_0000,
                },
            ];
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_mut_ptr(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, 2, &prog as *const libc::sock_fprog) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Deny `io_uring_register(_, IORING_REGISTER_EVENTFD, ..)` with EPERM in the child: the
/// process's probe (setup and the buffer ring) passes, every loop's own `install` fails.
fn forbid_eventfd_registration(c: &mut Command) {
    // SAFETY: only async-signal-safe calls (prctl) between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let k = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
            let mut filter = [
                // The system call number; not io_uring_register: allowed.
                k(0x20, 0, 0, 0),
                k(0x15, 0, 3, libc::SYS_io_uring_register as u32),
                // The low half of args[1], the opcode: IORING_REGISTER_EVENTFD (4) refused.
                k(0x20, 0, 0, 24),
                k(0x15, 0, 1, 4),
                k(0x06, 0, 0, 0x0005_0000 | libc::EPERM as u32),
                k(0x06, 0, 0, 0x7fff_0000),
            ];
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_mut_ptr(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, 2, &prog as *const libc::sock_fprog) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The output of `c`, or a panic (the child killed) if it is not done within `within`.
fn output_within(c: &mut Command, within: std::time::Duration) -> std::process::Output {
    use std::process::Stdio;
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(within) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            signal(pid, libc::SIGKILL);
            panic!("enginebench did not end within {within:?}");
        }
    }
}

/// A sandbox that lets a ring be set up but not watched (its eventfd cannot be registered):
/// the process's probe, which registers an eventfd as every loop does, refuses io_uring, so the
/// run takes epoll from the start, and the result says so with why; no loop records io_uring.
/// (A loop whose own install fails after the probe passed is recorded per loop:
/// `ring::tests::a_loop_that_cannot_install_its_ring_takes_epoll_and_is_counted`.)
#[test]
fn a_ring_that_cannot_be_watched_is_refused_and_recorded_in_the_result() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    if enginebench::db::ring::probe().is_err() {
        eprintln!("skipped: no io_uring here");
        return;
    }
    let url = fresh_db(&base, "eb_it_client_io_loop_fallback");
    let dir = tempdir();
    let mut c = point_select(dir.path(), &url);
    c.env_remove("EB_CLIENT_IO");
    forbid_eventfd_registration(&mut c);
    let o = output_within(&mut c, std::time::Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the client uses epoll: io_uring_register of an eventfd"),
        "{stderr}"
    );
    let doc: Json = serde_json::from_slice(&o.stdout).expect("json");
    assert_schema_valid(&doc);
    let client = &doc["client"];
    assert_eq!(client["io"], "epoll", "{client}");
    assert!(
        client["fallback"]
            .as_str()
            .unwrap_or("")
            .contains("io_uring_register of an eventfd"),
        "{client}"
    );
    assert_eq!(
        client["loops"]["io_uring"].as_u64().unwrap_or(0),
        0,
        "{client}"
    );
    assert!(doc["points"][0]["runs"][0]["ops"].as_u64().unwrap() > 100);
}

/// The lean clients' own tests (mysqlwire, pgwire) run on the path the suite asks for.
#[test]
fn test_loops_take_the_suites_path() {
    let on_ring = block(async { enginebench::db::ring::active() });
    assert_eq!(on_ring, expected_io() == "io_uring");
}

#[test]
fn results_name_the_io_path_mariadb_and_postgres() {
    for var in ["EB_TEST_MYSQL_URL", "EB_TEST_PG_URL"] {
        let Some(base) = server_url(var) else {
            return;
        };
        let url = fresh_db(&base, "eb_it_client_io");
        let dir = tempdir();
        let o = point_select(dir.path(), &url).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{stderr}");
        let doc: Json = serde_json::from_slice(&o.stdout).expect("json");
        assert_schema_valid(&doc);
        let c = &doc["client"];
        assert_eq!(c["driver"], "wire", "{c}");
        assert_eq!(c["io"], expected_io(), "{c}");
        assert!(c.get("fallback").is_none(), "{c}");
        let run = &doc["points"][0]["runs"][0];
        let ops = run["ops"].as_u64().unwrap();
        assert!(ops > 100);
        // The client's sleeps: counted (a closed loop waits for replies), and per operation.
        let cpu = &run["client_cpu"];
        let sleeps = cpu["voluntary_cs"].as_u64().expect("client sleeps counted");
        assert!(sleeps > 0, "{cpu}");
        let per_op = cpu["voluntary_cs_per_op"].as_f64().unwrap();
        assert!((per_op - sleeps as f64 / ops as f64).abs() < 1e-9, "{cpu}");
    }
}

/// `--client-io auto` gives the ring to a client loop of 8 connections or more and leaves a
/// smaller one on epoll, where the ring costs more per query; the result counts the loops it
/// left there (`loops.auto_epoll`), with no fallback (nothing failed). io_uring by name puts
/// the small loop on the ring.
#[test]
fn auto_gives_the_ring_to_loops_of_eight_connections_or_more() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    if enginebench::db::ring::probe().is_err() {
        assert_ne!(
            std::env::var("EB_REQUIRE_IO_URING").as_deref(),
            Ok("1"),
            "io_uring is required here and the probe failed"
        );
        eprintln!("skipped: no io_uring here");
        return;
    }
    let url = fresh_db(&base, "eb_it_client_io_auto");
    let dir = tempdir();
    // MariaDB: one loop by default, so the loop holds every connection.
    for (io, threads, want, auto_epoll) in [
        ("auto", "4", "epoll", 1),
        ("auto", "8", "io_uring", 0),
        ("io_uring", "4", "io_uring", 0),
    ] {
        let mut c = point_select_at(dir.path(), &url, threads);
        c.args(["--client-io", io]);
        let o = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{io} {threads}: {stderr}");
        let doc: Json = serde_json::from_slice(&o.stdout).expect("json");
        assert_schema_valid(&doc);
        let client = &doc["client"];
        assert_eq!(client["requested"], io, "{client}");
        assert_eq!(client["io"], want, "{io} {threads}: {client}");
        assert!(client.get("fallback").is_none(), "{client}");
        let loops = &client["loops"];
        assert_eq!(
            loops["auto_epoll"].as_u64().unwrap_or(0),
            auto_epoll,
            "{io} {threads}: {client}"
        );
        let on = if want == "epoll" { "epoll" } else { "io_uring" };
        assert!(loops[on].as_u64().unwrap_or(0) >= 1, "{client}");
        assert!(doc["points"][0]["runs"][0]["ops"].as_u64().unwrap() > 100);
    }
}

#[test]
fn a_sandbox_that_forbids_io_uring_gets_epoll_and_says_so() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_it_client_io_seccomp");
    let dir = tempdir();
    let mut c = point_select(dir.path(), &url);
    c.env_remove("EB_CLIENT_IO");
    forbid_io_uring(&mut c);
    let o = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the client uses epoll: io_uring_setup: not permitted"),
        "{stderr}"
    );
    let doc: Json = serde_json::from_slice(&o.stdout).expect("json");
    assert_schema_valid(&doc);
    let client = &doc["client"];
    assert_eq!(client["io"], "epoll", "{client}");
    assert_eq!(client["requested"], "auto", "{client}");
    assert!(
        client["fallback"]
            .as_str()
            .unwrap()
            .contains("not permitted"),
        "{client}"
    );
    assert!(doc["points"][0]["runs"][0]["ops"].as_u64().unwrap() > 100);

    // Asked for by name where it cannot start: one line, exit 2, nothing run.
    let mut c = point_select(dir.path(), &url);
    c.args(["--client-io", "io_uring"]);
    forbid_io_uring(&mut c);
    let o = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--client-io io_uring: io_uring_setup: not permitted"),
        "{stderr}"
    );
}

/// The batched path's figures reach the reader: `compare` prints a `batch` line per side and
/// point, and the page has its table with a row per run, beside the run's latency. On the
/// epoll path neither has any (nothing was batched).
#[test]
fn batch_figures_reach_compare_and_the_page() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_it_client_io_batch");
    let dir = tempdir();
    let mut files = Vec::new();
    for side in ["a", "b"] {
        let o = point_select(dir.path(), &url).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{stderr}");
        let f = dir.path().join(format!("{side}.json"));
        std::fs::write(&f, &o.stdout).unwrap();
        files.push(f.display().to_string());
    }
    let cmp = eb(dir.path(), &["compare", &files[0], &files[1]]);
    assert_eq!(cmp.code, 0, "{}", cmp.stderr);
    let lines: Vec<&str> = cmp
        .stdout
        .lines()
        .filter(|l| l.starts_with("batch "))
        .collect();
    let page = dir.path().join("page.html");
    let page_arg = page.display().to_string();
    let rep = eb(
        dir.path(),
        &[
            "report", &files[0], &files[1], "--format", "html", "-o", &page_arg,
        ],
    );
    assert_eq!(rep.code, 0, "{}", rep.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    let table = "Batched waits and held replies";
    if expected_io() == "epoll" {
        assert!(lines.is_empty(), "{}", cmp.stdout);
        assert!(!html.contains(table));
        return;
    }
    assert_eq!(lines.len(), 2, "one line per side: {}", cmp.stdout);
    for (l, side) in lines.iter().zip(["A", "B"]) {
        let head = format!("batch {side}: oltp_point_select at 4 threads: ");
        assert!(l.starts_with(&head), "{l}");
        let waits: u64 = l[head.len()..]
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no batched waits in {l}"));
        assert!(waits > 0, "{l}");
        assert!(
            l.contains("hold mean ") && l.contains("(latency p50 "),
            "{l}"
        );
        assert!(
            l.contains("io_uring loops ") && l.ends_with("epoll 0)"),
            "{l}"
        );
    }
    let at = html.find(table).expect("the page has no batch table");
    let section = &html[at..];
    let section = &section[..section.find("</table>").expect("table end")];
    // One row per result and run (one run each), each naming the operation.
    assert_eq!(
        section
            .matches("<td class=l>oltp_point_select</td>")
            .count(),
        2,
        "{section}"
    );
    // Each row found its run's latency.
    assert!(!section.contains("<td></td>"), "{section}");
}
