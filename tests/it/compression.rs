//! compression for real: the log rows loaded into SQLite, MariaDB (InnoDB plain, row- and
//! page-compressed, MyRocks without and with zstd) and PostgreSQL; sizes measured, a short
//! read/write run per format, formats the server lacks listed as not available.

use serde_json::Value as Json;

use crate::common::*;
use enginebench::db::Conn;

const ROWS: u64 = 20_000;

fn run(url: Option<&str>, formats: Option<&str>) -> (Json, Out) {
    run_with(url, formats, &[])
}

fn run_with(url: Option<&str>, formats: Option<&str>, extra: &[&str]) -> (Json, Out) {
    let dir = tempdir();
    let d = dir.path();
    let rows = ROWS.to_string();
    let mut args = vec![
        "run",
        "compression",
        "--table-size",
        &rows,
        "--threads",
        "2",
        "--warmup",
        "0",
        "--duration",
        "300ms",
        "--runs",
        "1",
    ];
    if let Some(u) = url {
        args.extend(["--target", u]);
    } else {
        args.extend(["--target", "sqlite://comp.db"]);
    }
    if let Some(f) = formats {
        args.extend(["--queries", f]);
    }
    args.extend_from_slice(extra);
    let out = eb(d, &args);
    assert_eq!(out.code, 0, "compression run failed: {}", out.stderr);
    let doc: Json = serde_json::from_str(
        &std::fs::read_to_string(result_file(&d.join("enginebench-results"))).unwrap(),
    )
    .unwrap();
    assert_schema_valid(&doc);
    (doc, out)
}

fn format<'a>(doc: &'a Json, name: &str) -> &'a Json {
    doc["sections"]["compression"]["formats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["format"] == name)
        .unwrap_or_else(|| panic!("no format {name} in {}", doc["sections"]["compression"]))
}

fn size(doc: &Json, name: &str) -> f64 {
    let f = format(doc, name);
    assert_eq!(f["available"], true, "{name}: {f}");
    assert_eq!(f["rows"], ROWS, "{name}");
    f["size_bytes"].as_f64().unwrap()
}

/// Every available format has a load time, a ratio that is its size over the raw bytes, and
/// a read/write point with both kinds of operation.
fn check_common(doc: &Json) {
    let c = &doc["sections"]["compression"];
    let raw = c["raw_bytes"].as_f64().unwrap();
    let per_row = c["raw_bytes_per_row"].as_f64().unwrap();
    assert!((100.0..300.0).contains(&per_row), "{per_row} bytes/row");
    for f in c["formats"].as_array().unwrap() {
        if f["available"] != true {
            assert!(!f["reason"].as_str().unwrap().is_empty(), "{f}");
            continue;
        }
        let s = f["size_bytes"].as_f64().unwrap();
        assert!(s > 0.0, "{f}");
        assert!((f["size_ratio"].as_f64().unwrap() - s / raw).abs() < 1e-9);
        assert!(f["load_s"].as_f64().unwrap() > 0.0);
        // Other processes' CPU over the load and over the size measurement.
        for part in ["load", "size"] {
            let others = f[format!("{part}_others_cpus")].as_f64().unwrap();
            assert!(others >= 0.0, "{f}");
            assert!(f[format!("{part}_disturbed")].is_boolean(), "{f}");
        }
        assert!(f["read_write_ops_per_s"].as_f64().unwrap() > 0.0, "{f}");
        let p = doc["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["operation"] == f["format"])
            .unwrap();
        let kinds = &p["runs"][0]["by_kind"];
        assert!(
            kinds["point_select"]["ops"].as_u64().unwrap() > 0,
            "{kinds}"
        );
        assert!(kinds["update"]["ops"].as_u64().unwrap() > 0, "{kinds}");
    }
}

#[test]
fn sqlite_plain_table() {
    let (doc, out) = run(None, None);
    check_common(&doc);
    assert_eq!(format(&doc, "sqlite")["size_method"], "sqlite_dbstat");
    // Uncompressed: about the raw size (binary integers, text as is).
    let ratio = format(&doc, "sqlite")["size_ratio"].as_f64().unwrap();
    assert!((0.7..1.6).contains(&ratio), "{ratio}");
    assert!(out.stdout.contains("size from"), "{}", out.stdout);
}

#[test]
fn mariadb_innodb_and_rocksdb_codecs() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_compression");
    let (doc, _) = run(
        Some(&url),
        Some("innodb,innodb-row-compressed-8k,innodb-page-zlib,innodb-page-snappy,rocksdb-none,rocksdb-zstd,aria"),
    );
    check_common(&doc);
    let plain = size(&doc, "innodb");
    assert!(
        size(&doc, "innodb-page-zlib") < plain * 0.8,
        "{}",
        doc["sections"]["compression"]
    );
    assert!(
        size(&doc, "innodb-row-compressed-8k") < plain,
        "{}",
        doc["sections"]["compression"]
    );
    // The codec took effect: zstd SST files are clearly smaller than uncompressed ones.
    assert!(
        size(&doc, "rocksdb-zstd") < size(&doc, "rocksdb-none") * 0.8,
        "{}",
        doc["sections"]["compression"]
    );
    assert_eq!(
        format(&doc, "rocksdb-zstd")["size_method"],
        "rocksdb_sst_allocated"
    );
    assert_eq!(format(&doc, "innodb")["size_method"], "files_allocated");
    assert!(size(&doc, "aria") > 0.0);
    // snappy page compression needs a provider plugin: either measured or said why not.
    let snappy = format(&doc, "innodb-page-snappy");
    assert!(snappy["available"] == true || snappy["reason"].as_str().unwrap().contains("snappy"));
    // The global codec is put back.
    block(async {
        let mut c = Conn::connect(&spec(&url)).await.unwrap();
        let alg = c
            .query_one("SELECT @@innodb_compression_algorithm")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(alg, "zlib");
        let n = c
            .query_one("SELECT count(*) FROM comp_rocksdb_zstd")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, ROWS.to_string());
    });
}

#[test]
fn postgres_pglz_and_lz4() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_compression");
    let (doc, _) = run(Some(&url), None);
    check_common(&doc);
    assert!(size(&doc, "pg-heap-pglz") > 0.0);
    assert_eq!(
        format(&doc, "pg-heap-pglz")["size_method"],
        "pg_total_relation_size"
    );
}

/// Page compression with lz4 through MariaDB's provider plugin (scripts/db-servers.sh installs
/// mariadb-plugin-provider-lz4), on params text made to compress to 0.3 of its size.
#[test]
fn mariadb_page_lz4_provider_and_compressed_fraction() {
    let Some(base) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&base, "eb_it_compression_lz4");
    let (doc, _) = run_with(
        Some(&url),
        Some("innodb,innodb-page-lz4"),
        &["--compressed-fraction", "0.3"],
    );
    check_common(&doc);
    let lz4 = format(&doc, "innodb-page-lz4");
    let opts = lz4["server_options"].as_str().unwrap_or_default();
    assert!(
        opts.contains("innodb_compression_algorithm=lz4") && opts.contains("provider_lz4 ACTIVE"),
        "{lz4}"
    );
    assert!(
        size(&doc, "innodb-page-lz4") < size(&doc, "innodb"),
        "{}",
        doc["sections"]["compression"]
    );
    // The compressor's own per-page ratio, from the server's counters.
    let r = lz4["page_compressed_ratio"].as_f64().unwrap();
    assert!(r > 0.0 && r < 1.0, "{lz4}");
    assert!(lz4["pages_compressed"].as_u64().unwrap() > 0, "{lz4}");
    let p = &doc["config"]["workload_options"]["params_text"];
    assert_eq!(p["compressed_fraction"], 0.3, "{p}");
    // The params the table holds (loaded, then some updated) compress as asked.
    let params = crate::textgen::column_bytes(&url, "SELECT params FROM comp_innodb ORDER BY id");
    crate::textgen::assert_near("comp_innodb.params", &params, 0.3);
    block(async {
        let mut c = Conn::connect(&spec(&url)).await.unwrap();
        let alg = c
            .query_one("SELECT @@innodb_compression_algorithm")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(alg, "zlib");
    });
}

#[test]
fn sqlite_compressed_fraction_params() {
    let dir = tempdir();
    let url = format!("sqlite://{}/comp.db", dir.path().display());
    let (doc, _) = run_with(Some(&url), None, &["--compressed-fraction", "0.6"]);
    check_common(&doc);
    let params = crate::textgen::column_bytes(&url, "SELECT params FROM comp_sqlite ORDER BY id");
    crate::textgen::assert_near("comp_sqlite.params", &params, 0.6);
    assert!(doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("column params")));
}

#[test]
fn unknown_format_is_a_usage_error() {
    let dir = tempdir();
    let out = eb(
        dir.path(),
        &[
            "run",
            "compression",
            "--target",
            "sqlite://x.db",
            "--queries",
            "innodb",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("not a storage format of sqlite"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    let out = eb(
        dir.path(),
        &["prepare", "compression", "--target", "sqlite://x.db"],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
}
