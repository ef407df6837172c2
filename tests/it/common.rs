//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use enginebench::db::{Conn, TargetSpec};

pub const BIN: &str = env!("CARGO_BIN_EXE_enginebench");

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run the binary in `dir` with a clean environment for the variables it reads.
pub fn eb(dir: &Path, args: &[&str]) -> Out {
    eb_env(dir, args, &[])
}

pub fn eb_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(dir);
    for v in ["MYSQL_PWD", "PGPASSWORD", "ENGINEBENCH_TARGET"] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("run enginebench");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A server URL from the environment; `None` (test skipped) unless servers are required.
pub fn server_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            if std::env::var("EB_REQUIRE_SERVERS").as_deref() == Ok("1") {
                panic!("{var} is not set but EB_REQUIRE_SERVERS=1: run the tests through scripts/test.sh");
            }
            eprintln!("skipped: {var} not set (run scripts/test.sh to start private servers)");
            None
        }
    }
}

/// Tests that read global server counters must not overlap with other tests on that server.
static SERVER: Mutex<()> = Mutex::new(());

pub fn server_lock() -> MutexGuard<'static, ()> {
    SERVER.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

pub fn spec(url: &str) -> TargetSpec {
    TargetSpec::parse(url, |_| None).unwrap()
}

/// A fresh, empty database named `name` on the server of `base`; returns its URL.
pub fn fresh_db(base: &str, name: &str) -> String {
    block(async {
        let mut c = Conn::connect(&spec(base))
            .await
            .expect("connect to the test server");
        c.execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .await
            .unwrap();
        c.execute(&format!("CREATE DATABASE {name}")).await.unwrap();
    });
    let mut u = url::Url::parse(base).unwrap();
    u.set_path(&format!("/{name}"));
    u.to_string()
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("eb-it-").tempdir().unwrap()
}

/// The only result.json under `dir` (one invocation).
pub fn result_file(dir: &Path) -> PathBuf {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path().join("result.json");
        if p.exists() {
            found.push(p);
        }
    }
    assert_eq!(
        found.len(),
        1,
        "expected one result folder in {}",
        dir.display()
    );
    found.pop().unwrap()
}

/// Validate a result document against the JSON Schema in the repo.
pub fn assert_schema_valid(doc: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/result-v2.schema.json"))
            .expect("schema is JSON");
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match schema: {errors:#?}"
    );
}

/// A micro-read run with `flags` on a SQLite file in `dir` (2,000 rows), results in
/// `dir/name`; asserts it succeeded and returns its result file.
pub fn micro_read_sqlite(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let results = dir.join(name);
    let url = format!("sqlite://{}/bench.db", dir.display());
    let mut args = vec![
        "run",
        "micro-read",
        "--target",
        &url,
        "--table-size",
        "2000",
        "--results-dir",
        results.to_str().unwrap(),
    ];
    args.extend_from_slice(flags);
    let r = eb(dir, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    result_file(&results)
}
