//! Bad input: one line naming the problem, exit code 2, no panic, never the password.

use crate::common::*;

const SECRET: &str = "S3cretPW_marker";

fn expect_usage_error(args: &[&str], must_contain: &str) {
    let dir = tempdir();
    let out = eb(dir.path(), args);
    assert_eq!(out.code, 2, "{args:?} exit code; stderr: {}", out.stderr);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| !l.starts_with("warning:"))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "{args:?} should print one error line, got: {}",
        out.stderr
    );
    assert!(lines[0].starts_with("enginebench: "), "{}", lines[0]);
    assert!(
        lines[0].contains(must_contain),
        "{args:?}: '{}' should mention '{must_contain}'",
        lines[0]
    );
    assert!(
        !out.stderr.contains("panicked") && !out.stderr.contains("RUST_BACKTRACE"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains(SECRET) && !out.stdout.contains(SECRET),
        "password leaked: {}",
        out.stderr
    );
}

#[test]
fn malformed_target_url() {
    expect_usage_error(
        &["run", "micro-read", "--target", "mysql//root@host/db"],
        "invalid target",
    );
    expect_usage_error(
        &[
            "run",
            "micro-read",
            "--target",
            &format!("oracle://u:{SECRET}@h/db"),
        ],
        "unknown scheme",
    );
    expect_usage_error(
        &[
            "run",
            "micro-read",
            "--target",
            &format!("mysql://root:{SECRET}@h:99999/db"),
        ],
        "invalid target",
    );
    expect_usage_error(
        &["run", "micro-read", "--target", "mysql://root@127.0.0.1/"],
        "database name",
    );
}

#[test]
fn unreachable_server_with_password_in_url() {
    let dir = tempdir();
    let out = eb(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--target",
            &format!("mysql://root:{SECRET}@127.0.0.1:1/db"),
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("warning: a password on the command line"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("cannot connect to mysql://root:***@127.0.0.1:1/db"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains(SECRET));
    expect_usage_error(
        &[
            "run",
            "micro-read",
            "--target",
            "postgres://pg@127.0.0.1:1/db",
        ],
        "cannot connect",
    );
}

#[test]
fn unknown_names_and_bad_values() {
    expect_usage_error(
        &["run", "no-such-workload"],
        "unknown workload 'no-such-workload'",
    );
    expect_usage_error(
        &["run", "micro-read", "--queries", "READ_PK_POINT,READ_NOPE"],
        "unknown query 'READ_NOPE'",
    );
    expect_usage_error(&["run", "micro-read", "--threads", "0"], "--threads");
    expect_usage_error(&["run", "micro-read", "--threads", "1,x"], "--threads");
    expect_usage_error(&["run", "micro-read", "--duration", "5x"], "--duration");
    expect_usage_error(&["run", "micro-read", "--warmup", "soon"], "--warmup");
    expect_usage_error(&["run", "micro-read", "--runs", "0"], "--runs");
    expect_usage_error(
        &["run", "micro-read", "--engine", "InnoDB"],
        "--engine applies to MySQL",
    );
    expect_usage_error(
        &["prepare", "micro-read", "--table-size", "lots"],
        "--table-size",
    );
    expect_usage_error(&["run", "micro-read", "--no-such-flag"], "--no-such-flag");
    expect_usage_error(&["cleanup", "nope"], "unknown workload");
}

#[test]
fn sqlite_file_that_cannot_be_created() {
    expect_usage_error(
        &[
            "run",
            "micro-read",
            "--target",
            "sqlite:///proc/no/such/dir/x.db",
        ],
        "cannot",
    );
}

#[test]
fn help_explains() {
    let dir = tempdir();
    let out = eb(dir.path(), &["run", "--help"]);
    assert_eq!(out.code, 0);
    for flag in [
        "--threads",
        "--warmup",
        "--duration",
        "--runs",
        "--method",
        "--target",
        "--engine",
        "--format",
    ] {
        assert!(
            out.stdout.contains(flag),
            "run --help should explain {flag}"
        );
    }
    let out = eb(dir.path(), &["list"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout.matches("READ_").count(), 13, "{}", out.stdout);
}

/// A reader that has gone (`enginebench list | head -0`) is not a bug: no "internal error"
/// on stderr, as a C tool would die of SIGPIPE without a word.
#[test]
fn closed_stdout_is_not_an_internal_error() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let dir = tempdir();
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills both descriptors, each owned once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Closed before the child starts: its first write fails with EPIPE, whatever the timing.
    drop(read);
    let out = eb_command(dir.path())
        .arg("list")
        .stdout(std::process::Stdio::from(write))
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "{stderr}");
    assert_ne!(out.status.code(), Some(0));
}

/// The lists in the help come from the workloads and the report, not from a hand-kept text:
/// every table a report can print, and only the workloads that have consistency conditions.
#[test]
fn help_lists_come_from_the_registry() {
    let dir = tempdir();
    let out = eb(dir.path(), &["report", "--help"]);
    assert_eq!(out.code, 0);
    let help = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for table in [
        "cpu,",
        "server-settings",
        "kinds",
        "node_settings",
        "iibench-windows",
        "compression",
        "sqlbench-ops",
    ] {
        assert!(
            help.contains(table),
            "report --help should name {table}: {help}"
        );
    }
    let out = eb(dir.path(), &["check", "--help"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("tpcc: TPC-C 3.3.2.1"), "{}", out.stdout);
    assert!(
        out.stdout.contains("linkbench: counttable"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("micro-read"), "{}", out.stdout);
}

#[test]
fn mysql_wrong_password_and_unknown_engine() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let dir = tempdir();
    let out = eb_env(
        dir.path(),
        &["run", "micro-read", "--target", &url],
        &[("MYSQL_PWD", SECRET)],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("Access denied"), "{}", out.stderr);
    assert!(!out.stderr.contains(SECRET));
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);

    let out = eb(
        dir.path(),
        &["run", "micro-read", "--target", &url, "--engine", "Falcon"],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("no storage engine 'Falcon'") && out.stderr.contains("InnoDB"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn connection_limit_is_checked_before_running() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let dir = tempdir();
    let out = eb(
        dir.path(),
        &[
            "run",
            "micro-read",
            "--target",
            &url,
            "--threads",
            "5000",
            "--table-size",
            "100",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("needs 5001 connections") && out.stderr.contains("max-connections"),
        "{}",
        out.stderr
    );
}
