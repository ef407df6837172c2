//! `--compressed-fraction` beyond iibench, for real: the text each workload writes into the
//! database (read back from the table) compresses with zstd-3 to F ± 10 %: the OLTP family's
//! c and pad (SQLite and MariaDB), a workload file's `string` columns (YCSB's usertable) and,
//! in compression.rs, the log rows' params.

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::Conn;
use enginebench::workload::textgen::zstd_ratio;

/// The values of `sql`'s first column, concatenated.
pub fn column_bytes(url: &str, sql: &str) -> Vec<u8> {
    block(async {
        let mut c = Conn::connect(&spec(url)).await.unwrap();
        let rows = c.query(sql).await.unwrap();
        let mut out = Vec::new();
        for r in rows {
            out.extend_from_slice(r[0].as_deref().unwrap_or("").as_bytes());
        }
        out
    })
}

pub fn assert_near(what: &str, data: &[u8], f: f64) {
    assert!(data.len() > 100_000, "{what}: only {} bytes", data.len());
    let r = zstd_ratio(data);
    assert!(
        (r - f).abs() <= f * 0.1,
        "{what}: zstd-3 ratio {r:.3}, wanted {f} ± 10 %"
    );
}

fn oltp(url: &str) {
    let dir = tempdir();
    let args = [
        "prepare",
        "oltp_read_write",
        "--target",
        url,
        "--table-size",
        "3000",
        "--compressed-fraction",
        "0.3",
    ];
    let out = eb(dir.path(), &args);
    assert_eq!(out.code, 0, "prepare: {}", out.stderr);
    let c = column_bytes(url, "SELECT c FROM sbtest1 ORDER BY id");
    assert_eq!(c.len(), 3000 * 119);
    assert_near("sbtest1.c", &c, 0.3);
    let pad = column_bytes(url, "SELECT pad FROM sbtest1 ORDER BY id");
    assert_near("sbtest1.pad", &pad, 0.3);
    // A run writes the same kind of text and records the generators.
    let out = eb(
        dir.path(),
        &[
            "run",
            "oltp_write_only",
            "--target",
            url,
            "--table-size",
            "3000",
            "--compressed-fraction",
            "0.3",
            "--warmup",
            "0",
            "--duration",
            "300ms",
            "--threads",
            "2",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "run: {}", out.stderr);
    let doc: Json = serde_json::from_str(&out.stdout).unwrap();
    assert_schema_valid(&doc);
    let t = &doc["config"]["workload_options"]["text"];
    assert_eq!(t["c"]["compressed_fraction"], 0.3, "{t}");
    assert_eq!(t["pad"]["length_max"], 59, "{t}");
    let z = t["c"]["ratios"]["zstd3"].as_f64().unwrap();
    assert!((z - 0.3).abs() <= 0.03, "{z}");
    assert!(t["c"]["ratios"]["lz4"].as_f64().unwrap() > z);
    let c = column_bytes(url, "SELECT c FROM sbtest1 ORDER BY id");
    assert_near("sbtest1.c after updates", &c, 0.3);
}

#[test]
fn sqlite_oltp_c_and_pad() {
    let dir = tempdir();
    oltp(&format!("sqlite://{}/tg.db", dir.path().display()));
}

#[test]
fn mariadb_oltp_c_and_pad() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _lock = server_lock();
    oltp(&fresh_db(&base, "eb_it_textgen_oltp"));
}

#[test]
fn sqlite_workload_file_strings() {
    let dir = tempdir();
    let url = format!("sqlite://{}/ycsb.db", dir.path().display());
    let out = eb(
        dir.path(),
        &[
            "prepare",
            "ycsb-a",
            "--target",
            &url,
            "--var",
            "recordcount=2000",
            "--compressed-fraction",
            "0.5",
        ],
    );
    assert_eq!(out.code, 0, "prepare: {}", out.stderr);
    let mut all = Vec::new();
    for f in 0..10 {
        all.extend(column_bytes(
            &url,
            &format!("SELECT field{f} FROM usertable ORDER BY ycsb_key"),
        ));
    }
    assert_near("usertable fields", &all, 0.5);
}

#[test]
fn workloads_without_text_refuse_it() {
    let dir = tempdir();
    for w in ["tpcc", "micro-read", "bulk_insert"] {
        let out = eb(
            dir.path(),
            &[
                "run",
                w,
                "--target",
                "sqlite://x.db",
                "--compressed-fraction",
                "0.5",
            ],
        );
        assert_eq!(out.code, 2, "{w}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
        // tpcc and micro-read do not take the option at all (the parser names the workloads
        // that do); bulk_insert takes the OLTP options but generates no text.
        assert!(
            out.stderr.contains("does not generate text")
                || out
                    .stderr
                    .contains(&format!("--compressed-fraction does not apply to {w}")),
            "{}",
            out.stderr
        );
    }
}
