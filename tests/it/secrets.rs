//! Passwords never leave the process: a marker password is given to a server user that really
//! has it (MariaDB: mysql_native_password; PostgreSQL: SCRAM on a private server whose pg_hba
//! asks for it), through MYSQL_PWD / PGPASSWORD; then prepare, run and report, and every output
//! is searched for the marker: stdout, stderr, every file the commands wrote (JSON, CSV, HTML,
//! logs) and the command line of every process on the machine while the run goes on. A wrong
//! password's error, and a password given in the URL (accepted with a warning), are checked
//! the same way.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// Every file under `dir` whose bytes contain `marker` (any file: the tool may write logs).
fn files_containing(dir: &Path, marker: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(b) = std::fs::read(&p) {
                if b.windows(marker.len()).any(|w| w == marker.as_bytes()) {
                    hits.push(p.display().to_string());
                }
            }
        }
    }
    hits
}

/// Pids whose command line holds `marker`, other than `except`.
fn cmdlines_containing(marker: &str, except: Option<u32>) -> Vec<String> {
    let mut hits = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if Some(pid) == except {
            continue;
        }
        if let Ok(b) = std::fs::read(e.path().join("cmdline")) {
            if b.windows(marker.len()).any(|w| w == marker.as_bytes()) {
                hits.push(format!(
                    "{pid}: {}",
                    String::from_utf8_lossy(&b).replace('\0', " ")
                ));
            }
        }
    }
    hits
}

/// Run the binary while scanning the process list every few ms; returns (code, stdout,
/// stderr, processes seen with the marker).
fn run_watched(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    marker: &str,
    own_cmdline_has_it: bool,
) -> (i32, String, String, Vec<String>) {
    let mut c = Command::new(BIN);
    c.args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for v in ["MYSQL_PWD", "PGPASSWORD", "ENGINEBENCH_TARGET"] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let child = c.spawn().unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let mut seen = Vec::new();
    let t0 = Instant::now();
    let out = loop {
        if let Ok(o) = rx.try_recv() {
            break o.unwrap();
        }
        // A password typed in the URL is on the tool's own command line (the user put it
        // there); it must still not reach any other process.
        let except = own_cmdline_has_it.then_some(pid);
        seen.extend(cmdlines_containing(marker, except));
        assert!(t0.elapsed() < Duration::from_secs(120), "run did not end");
        std::thread::sleep(Duration::from_millis(5));
    };
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        seen,
    )
}

/// prepare + run (+ report html/csv) with the password given through `env`, and every check.
fn exercise(dir: &Path, url: &str, env: &[(&str, &str)], marker: &str, in_url: bool) {
    let common = ["--table-size", "300"];
    let mut prepare = vec!["prepare", "oltp_point_select", "--target", url];
    prepare.extend(common);
    let (code, so, se, procs) = run_watched(dir, &prepare, env, marker, in_url);
    assert_eq!(code, 0, "prepare: {se}");
    let mut outputs = vec![so, se];
    let mut seen = procs;
    let mut run = vec![
        "run",
        "oltp_point_select",
        "--target",
        url,
        "--threads",
        "2",
        "--runs",
        "2",
        "--warmup",
        "200ms",
        "--duration",
        "700ms",
        "--format",
        "json",
    ];
    run.extend(common);
    let (code, so, se, procs) = run_watched(dir, &run, env, marker, in_url);
    assert_eq!(code, 0, "run: {se}");
    if in_url {
        assert!(
            se.contains("warning") && (se.contains("MYSQL_PWD") || se.contains("PGPASSWORD")),
            "no warning for a password in the URL: {se}"
        );
    }
    assert!(so.contains("\"points\""), "the JSON went to stdout");
    outputs.extend([so, se]);
    seen.extend(procs);
    let results = dir.join("enginebench-results");
    let res = result_file(&results).display().to_string();
    for (fmt, file) in [("html", "report.html"), ("csv", "report.csv")] {
        let out = eb_env(dir, &["report", &res, "--format", fmt, "-o", file], env);
        assert_eq!(out.code, 0, "report {fmt}: {}", out.stderr);
        assert!(dir.join(file).exists());
        outputs.extend([out.stdout, out.stderr]);
    }
    // The run really wrote results (so an empty search proves nothing otherwise).
    let json = std::fs::read_to_string(result_file(&results)).unwrap();
    assert!(json.contains("oltp_point_select"));
    for (i, o) in outputs.iter().enumerate() {
        assert!(!o.contains(marker), "output {i} holds the password: {o}");
    }
    let files = files_containing(dir, marker);
    assert!(files.is_empty(), "files holding the password: {files:?}");
    assert!(
        seen.is_empty(),
        "command lines holding the password: {seen:?}"
    );
}

#[test]
fn mariadb_password_never_written() {
    let Some(root) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let marker = "Mk7q-SECRET-e1b9zz";
    let db = fresh_db(&root, "eb_secrets");
    block(async {
        let mut c = enginebench::db::Conn::connect(&spec(&root)).await.unwrap();
        for sql in [
            "DROP USER IF EXISTS 'eb_secret'@'localhost'".to_string(),
            format!("CREATE USER 'eb_secret'@'localhost' IDENTIFIED BY '{marker}'"),
            "GRANT ALL ON eb_secrets.* TO 'eb_secret'@'localhost'".to_string(),
        ] {
            c.execute(&sql).await.unwrap();
        }
    });
    let mut u = url::Url::parse(&db).unwrap();
    u.set_username("eb_secret").unwrap();
    let url = u.to_string();
    // Through the environment.
    let dir = tempdir();
    exercise(dir.path(), &url, &[("MYSQL_PWD", marker)], marker, false);
    // A wrong password: refused in one line, neither password shown.
    let wrong = format!("{marker}-wrong");
    let dir = tempdir();
    let out = eb_env(
        dir.path(),
        &["run", "oltp_point_select", "--target", &url],
        &[("MYSQL_PWD", &wrong)],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("MYSQL_PWD"), "{}", out.stderr);
    assert!(!out.stderr.contains(marker), "{}", out.stderr);
    assert!(files_containing(dir.path(), marker).is_empty());
    // In the URL: accepted with a warning, never written.
    let mut u2 = u.clone();
    u2.set_password(Some(marker)).unwrap();
    let dir = tempdir();
    exercise(dir.path(), u2.as_str(), &[], marker, true);
}

#[test]
fn postgres_password_never_written() {
    if server_url("EB_TEST_PG_URL").is_none() {
        return;
    }
    let have_pg = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().any(|e| e.path().join("bin/postgres").exists()))
        .unwrap_or(false);
    if !have_pg {
        return;
    }
    let marker = "Pg4w-SECRET-c0ffee77";
    let dir = tempdir();
    // A private server whose TCP connections need a SCRAM password (the shared test server
    // trusts everyone, so a password would never be checked there).
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let hba = dir.path().join("hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\nhost all all ::1/128 scram-sha-256\n",
    )
    .unwrap();
    std::fs::set_permissions(&hba, std::fs::Permissions::from_mode(0o644)).unwrap();
    let srv = crate::tls::Started::start(
        "postgres",
        dir.path().join("srv"),
        &[format!("hba_file={}", hba.display())],
    );
    let sock = serde_json::from_str::<serde_json::Value>(
        &std::fs::read_to_string(srv.datadir.join("server.json")).unwrap(),
    )
    .unwrap()["url"]
        .as_str()
        .unwrap()
        .to_string();
    block(async {
        let mut c = enginebench::db::Conn::connect(&spec(&sock)).await.unwrap();
        c.execute(&format!(
            "CREATE USER eb_secret PASSWORD '{marker}'; GRANT ALL ON SCHEMA public TO eb_secret; ALTER DATABASE enginebench OWNER TO eb_secret"
        ))
        .await
        .unwrap();
    });
    let url = format!("postgres://eb_secret@127.0.0.1:{}/enginebench", srv.port);
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // Without the password the server refuses: the password is really checked.
    let out = eb(&work, &["run", "oltp_point_select", "--target", &url]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    exercise(&work, &url, &[("PGPASSWORD", marker)], marker, false);
    let wrong = format!("{marker}-wrong");
    let out = eb_env(
        &work,
        &["run", "oltp_point_select", "--target", &url],
        &[("PGPASSWORD", &wrong)],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("PGPASSWORD"), "{}", out.stderr);
    assert!(!out.stderr.contains(marker), "{}", out.stderr);
    let work2 = dir.path().join("work2");
    std::fs::create_dir(&work2).unwrap();
    let mut u = url::Url::parse(&url).unwrap();
    u.set_password(Some(marker)).unwrap();
    exercise(&work2, u.as_str(), &[], marker, true);
    // The server's log does not hold it either (the failed logins are logged by user name).
    let log = std::fs::read_to_string(srv.datadir.join("server.log")).unwrap_or_default();
    assert!(!log.contains(marker), "the server log holds the password");
    drop(srv);
}
