//! `compression`: the same log rows loaded into every storage format the server offers; per
//! format the on-disk size after a forced flush, its ratio to the raw bytes, the load time,
//! and then a short read/write run (point selects and updates by primary key) on it.
//!
//! Each format is one operation of the run (one point per thread count): `--queries` picks a
//! subset. A format the server lacks (an engine or codec not installed) is listed as not
//! available with the server's reason, never as a failure. What is approximate is in
//! docs/compression.md and in `notes()`.

mod entry;
pub mod formats;
pub mod logrows;
mod report;

pub use entry::{CompressionArgs, CompressionEntry, ENTRY};
pub use report::Report;

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::contract::{Driver, Step};
use crate::db::{Conn, DbResult, Dbms, StmtId, TargetSpec, Value};
use crate::error::{Context, Error, Result};
use crate::load;
use crate::measure::{disturbed, HostSample};
use crate::model::LoadOptions;
use crate::model::LoadStats;
use crate::rng::Rng;

pub use formats::Format;

pub const NAME: &str = "compression";
/// Operation kinds of the read/write run (`Step::kind`).
pub const KINDS: [&str; 2] = ["point_select", "update"];
/// Share of updates in the read/write run, percent.
pub const UPDATE_PCT: u64 = 20;

#[derive(Debug, Clone)]
pub struct Spec {
    pub rows: u64,
    pub seed: u64,
    /// The formats to measure, in order (one operation each).
    pub formats: Vec<Format>,
    /// `--compressed-fraction`: the generator of the params column (None: the log's own).
    pub text: Option<crate::workload::textgen::TextGen>,
    /// The formats were named with `--queries` (hazardous ones run only then).
    pub explicit: bool,
}

impl Spec {
    /// `--queries` picks formats by name; all of the DBMS's by default.
    pub fn new(rows: u64, seed: u64, dbms: Dbms, only: Option<&str>) -> Result<Spec> {
        let all = formats::for_dbms(dbms);
        let what = format!("storage format of {}", dbms.name());
        let formats = crate::contract::args::pick(all, |f| f.name, only, &what)?;
        Ok(Spec {
            rows,
            seed,
            formats,
            text: None,
            explicit: only.is_some(),
        })
    }

    /// `--compressed-fraction` as typed: params text from the shared generator.
    pub fn with_text(mut self, fraction: Option<&str>) -> Result<Spec> {
        self.text = crate::workload::textgen::fraction_flag(fraction)?.map(|f| {
            crate::workload::textgen::TextGen::new(
                f,
                self.seed,
                logrows::PARAMS_LEN.0,
                logrows::PARAMS_LEN.1,
            )
        });
        Ok(self)
    }

    /// The same spec restricted to format number `i` (one operation).
    pub fn only(&self, i: usize) -> Spec {
        Spec {
            formats: vec![self.formats[i]],
            ..self.clone()
        }
    }

    pub fn operations(&self) -> Vec<String> {
        self.formats.iter().map(|f| f.name.to_string()).collect()
    }

    pub fn options(&self) -> serde_json::Value {
        serde_json::json!({
            "rows": self.rows,
            "formats": self.operations(),
            "update_pct": UPDATE_PCT,
            "row_generator": "log rows (src/workload/compression/logrows.rs)",
            "params_text": self.text.as_ref().map(|t| t.summary()),
        })
    }

    pub fn notes(&self) -> Vec<String> {
        let mut n = self.text.iter().map(|t| t.note("compression: column params (loaded and updated; the other columns keep the log's vocabulary)")).collect::<Vec<_>>();
        n.extend([
            "compression: raw bytes are the rows as tab-separated text lines, as the loader streams them (the size of a log file of the rows); size_ratio = on-disk size / raw bytes.".into(),
            "compression: on-disk size is measured after a forced flush: MariaDB from the table's own files (allocated blocks; RocksDB: the SST files of the table's column family, after a manual compaction) when the data directory is readable here, else information_schema DATA_LENGTH + INDEX_LENGTH; PostgreSQL pg_total_relation_size after CHECKPOINT; SQLite the dbstat pages of the table. size_method says which.".into(),
            "compression: the table has a primary key only (no secondary index). PostgreSQL compresses a value only when its row passes the TOAST threshold (about 2 KB), so rows of a few hundred bytes stay uncompressed whatever the method.".into(),
            format!("compression: the read/write run draws ids uniformly; {UPDATE_PCT} % of operations update duration_ms, row_count and params (new generated text), the rest are point selects by primary key, each in autocommit."),
            "compression: InnoDB page compression uses the global innodb_compression_algorithm, which is set for each page-compressed format while it loads and runs, and restored afterwards; the algorithms other than zlib need MariaDB's provider plugins (provider_lz4, _lzo, _lzma, _bzip2, _snappy), which are loaded with INSTALL SONAME when the server has them and stay installed; server_options records the algorithm as read back and the plugin's status.".into(),
        ]);
        n
    }
}

/// One format's line of the compression table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FormatResult {
    pub format: String,
    pub engine: String,
    /// What selects the format (table options, codec settings).
    pub definition: String,
    pub available: bool,
    /// Why the format is not available here (the server's words), or why it was not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// ROW_FORMAT and CREATE_OPTIONS as the server reports them (MariaDB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_options: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_rows_per_s: Option<f64>,
    /// On-disk size after the forced flush.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// How size_bytes was measured: files_allocated, rocksdb_sst_allocated,
    /// information_schema, pg_total_relation_size or sqlite_dbstat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_method: Option<String>,
    /// The server's own size view (information_schema DATA_LENGTH + INDEX_LENGTH,
    /// pg_total_relation_size), for comparison with size_bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_reported_bytes: Option<u64>,
    /// size_bytes / raw bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_s: Option<f64>,
    /// InnoDB page compression (MariaDB status counters over the load and its flush): pages
    /// written compressed, the bytes that saved, and 1 - saved / (pages x page size): the
    /// ratio of the page writes (the server counts the savings in whole file-system blocks,
    /// 4 KiB here, as it punches holes), pages written twice counted twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_compressed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_compression_saved_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_compressed_ratio: Option<f64>,
    /// Median ops/s of the read/write run at the highest thread count measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_write_ops_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_write_threads: Option<usize>,
    /// CPUs other processes used on this host during the load (1.0: one whole CPU); absent
    /// when it did not load, and in results made before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_others_cpus: Option<f64>,
    /// They disturbed the load (`harness::disturbed`).
    #[serde(default)]
    pub load_disturbed: bool,
    /// The same over the size measurement (ANALYZE, the forced flush, the size read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_others_cpus: Option<f64>,
    #[serde(default)]
    pub size_disturbed: bool,
}

impl FormatResult {
    /// Which of its measurements other processes disturbed ("load", "size"), for the tables.
    pub fn disturbed_parts(&self) -> Vec<&'static str> {
        [("load", self.load_disturbed), ("size", self.size_disturbed)]
            .into_iter()
            .filter_map(|(n, d)| d.then_some(n))
            .collect()
    }
}

/// The result's `compression` section.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompressionReport {
    pub rows: u64,
    pub seed: u64,
    pub raw_bytes: u64,
    pub raw_bytes_per_row: f64,
    pub formats: Vec<FormatResult>,
}

/// Generate (not load) the rows once to count their raw bytes.
pub fn start(spec: &Spec) -> CompressionReport {
    let raw = logrows::raw_bytes(spec.seed, spec.rows, spec.text.as_ref());
    CompressionReport {
        rows: spec.rows,
        seed: spec.seed,
        raw_bytes: raw,
        raw_bytes_per_row: raw as f64 / spec.rows.max(1) as f64,
        formats: Vec::new(),
    }
}

/// What loading one format left: its line of the table, the load stats, and the statement
/// that restores a global setting after the format's runs.
pub struct Loaded {
    pub result: FormatResult,
    pub load: Option<LoadStats>,
    pub restore: Option<String>,
}

fn unavailable(f: &Format, why: String) -> FormatResult {
    FormatResult {
        format: f.name.into(),
        engine: f.engine().into(),
        definition: f.describe(),
        available: false,
        reason: Some(why),
        server_options: None,
        rows: None,
        load_s: None,
        load_rows_per_s: None,
        size_bytes: None,
        size_method: None,
        server_reported_bytes: None,
        pages_compressed: None,
        page_compression_saved_bytes: None,
        page_compressed_ratio: None,
        size_ratio: None,
        flush_s: None,
        read_write_ops_per_s: None,
        read_write_threads: None,
        load_others_cpus: None,
        load_disturbed: false,
        size_others_cpus: None,
        size_disturbed: false,
    }
}

/// Create the format's table (dropping an old one), load the rows, force them to disk and
/// measure the size, each with what other processes used on the host meanwhile
/// (`server_pid`: the server's CPU is its own, not others'). A format the server refuses is
/// returned as not available.
pub async fn load_format(
    conn: &mut Conn,
    target: &TargetSpec,
    spec: &Spec,
    f: &Format,
    raw_bytes: u64,
    opts: &LoadOptions,
    server_pid: Option<u32>,
) -> Result<Loaded> {
    let (restore, server_options) = match create(conn, spec, f).await? {
        Ok(made) => made,
        Err(result) => {
            return Ok(Loaded {
                result,
                load: None,
                restore: None,
            })
        }
    };
    let m = load_and_size(conn, target, spec, f, opts, server_pid, restore.as_deref()).await?;
    let (stats, size, pages) = (m.stats, m.size, m.pages);
    Ok(Loaded {
        result: FormatResult {
            format: f.name.into(),
            engine: f.engine().into(),
            definition: f.describe(),
            available: true,
            reason: None,
            server_options: (!server_options.is_empty()).then_some(server_options),
            rows: Some(stats.rows),
            load_s: Some(stats.elapsed_s),
            load_rows_per_s: Some(stats.rows_per_s),
            size_ratio: size.bytes.map(|b| b as f64 / raw_bytes.max(1) as f64),
            size_bytes: size.bytes,
            size_method: Some(size.method.into()),
            server_reported_bytes: size.reported,
            pages_compressed: pages.map(|p| p.0),
            page_compression_saved_bytes: pages.map(|p| p.1),
            page_compressed_ratio: pages
                .filter(|p| p.0 > 0 && p.2 > 0)
                .map(|(n, saved, size)| 1.0 - saved as f64 / (n * size) as f64),
            flush_s: Some(m.flush_s),
            read_write_ops_per_s: None,
            read_write_threads: None,
            load_others_cpus: Some(m.load_others.0),
            load_disturbed: m.load_others.1,
            size_others_cpus: Some(m.size_others.0),
            size_disturbed: m.size_others.1,
        },
        load: Some(stats),
        restore,
    })
}

/// Create the format's table (dropping an old one): the statement that puts the server's
/// global setting back (if the format changed one) and the format's options as read back;
/// or, as the format's result, why the server cannot have it (or why it is skipped).
async fn create(
    conn: &mut Conn,
    spec: &Spec,
    f: &Format,
) -> Result<std::result::Result<(Option<String>, String), FormatResult>> {
    let t = f.table();
    conn.execute(&format!("DROP TABLE IF EXISTS {t}"))
        .await
        .ctx(format!("dropping {t}"))?;
    if conn.dbms() == Dbms::Mysql {
        let engines = crate::contract::mysql_engines(conn).await?;
        if !engines.iter().any(|e| e.eq_ignore_ascii_case(f.engine())) {
            return Ok(Err(unavailable(
                f,
                format!(
                    "the server has no storage engine {} (it offers {})",
                    f.engine(),
                    engines.join(", ")
                ),
            )));
        }
    }
    if let (Some(why), false) = (f.hazard(), spec.explicit) {
        return Ok(Err(unavailable(
            f,
            format!("skipped by default: {why}; name it with --queries to run it anyway"),
        )));
    }
    let (restore, setting) = match formats::before_create(conn, f).await {
        Ok(r) => r,
        Err(why) => return Ok(Err(unavailable(f, why))),
    };
    let made = async {
        conn.execute(&f.create_sql()).await.map_err(|e| e.message)?;
        formats::after_create(conn, f).await?;
        formats::verify(conn, f).await
    }
    .await;
    let server_options = match made {
        // The global setting the format depends on, as read back, is part of its options.
        Ok(o) => [o, setting.unwrap_or_default()]
            .join(" ")
            .trim()
            .to_string(),
        Err(why) => {
            let _ = conn.execute(&format!("DROP TABLE IF EXISTS {t}")).await;
            if let Some(r) = &restore {
                let _ = conn.execute(r).await;
            }
            return Ok(Err(unavailable(f, why)));
        }
    };
    Ok(Ok((restore, server_options)))
}

/// What loading a format's table measured.
struct Measured {
    stats: LoadStats,
    size: Size,
    flush_s: f64,
    /// Others' CPUs, and whether they disturbed it: during the load, during the size.
    load_others: (f64, bool),
    size_others: (f64, bool),
    /// MariaDB's page-compression counters over the load: pages, bytes saved, page size.
    pages: Option<(u64, u64, u64)>,
}

/// Load the format's table, analyze it, force it to disk and measure its size; on an error,
/// `restore` puts the server's global setting back first.
async fn load_and_size(
    conn: &mut Conn,
    target: &TargetSpec,
    spec: &Spec,
    f: &Format,
    opts: &LoadOptions,
    server_pid: Option<u32>,
    restore: Option<&str>,
) -> Result<Measured> {
    let t = f.table();
    let src = logrows::LogRows {
        table: t.clone(),
        seed: spec.seed,
        text: spec.text.clone(),
    };
    let page = matches!(f.kind, formats::Kind::InnodbPage(_));
    let pages0 = if page {
        page_counters(conn).await
    } else {
        None
    };
    let measured = async {
        let h0 = HostSample::now(server_pid);
        let stats = load::load(target, &src, spec.rows, opts)?;
        let h1 = HostSample::now(server_pid);
        // Statistics only (ANALYZE): a VACUUM on PostgreSQL would not change the heap's size
        // after a pure load, and the CHECKPOINT comes with the size measurement.
        let analyze = match conn.dbms() {
            Dbms::Mysql => format!("ANALYZE TABLE {t}"),
            _ => format!("ANALYZE {t}"),
        };
        conn.query(&analyze).await.ctx(format!("analyzing {t}"))?;
        let t0 = Instant::now();
        let size = measure_size(conn, f).await?;
        let flush_s = t0.elapsed().as_secs_f64();
        let h2 = HostSample::now(server_pid);
        let others = (others(&h0, &h1), others(&h1, &h2));
        Ok::<_, Error>((stats, size, flush_s, others))
    }
    .await;
    let (stats, size, flush_s, (load_others, size_others)) = match measured {
        Ok(m) => m,
        Err(e) => {
            // Put the server's global setting back before giving up.
            finish_format(conn, restore).await;
            return Err(e);
        }
    };
    let pages = match (
        pages0,
        if page {
            page_counters(conn).await
        } else {
            None
        },
    ) {
        (Some(a), Some(b)) => Some((b.0.saturating_sub(a.0), b.1.saturating_sub(a.1), b.2)),
        _ => None,
    };
    Ok(Measured {
        stats,
        size,
        flush_s,
        load_others,
        size_others,
        pages,
    })
}

/// Others' CPUs from `a` to `b`, and whether they disturbed that span.
fn others(a: &HostSample, b: &HostSample) -> (f64, bool) {
    let elapsed_s = b.at.duration_since(a.at).as_secs_f64();
    let c = b.host_cpu_since(a).others_cpus;
    (c, disturbed(c, elapsed_s))
}

/// MariaDB's page-compression counters: (pages compressed, bytes saved, page size).
async fn page_counters(conn: &mut Conn) -> Option<(u64, u64, u64)> {
    let rows = conn
        .query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_num_pages_page_compressed', 'Innodb_page_compression_saved')")
        .await
        .ok()?;
    let get = |name: &str| -> Option<u64> {
        rows.iter()
            .find(|r| r.first().cloned().flatten().as_deref() == Some(name))
            .and_then(|r| r.get(1).cloned().flatten())
            .and_then(|v| v.parse().ok())
    };
    let size = conn
        .query_one("SELECT @@innodb_page_size")
        .await
        .ok()
        .flatten()
        .and_then(|v| v.parse().ok())?;
    Some((
        get("Innodb_num_pages_page_compressed")?,
        get("Innodb_page_compression_saved")?,
        size,
    ))
}

struct Size {
    bytes: Option<u64>,
    method: &'static str,
    reported: Option<u64>,
}

/// Force the table to disk and measure it (see the notes for which method when).
async fn measure_size(conn: &mut Conn, f: &Format) -> Result<Size> {
    let t = f.table();
    match conn.dbms() {
        Dbms::Postgres => {
            conn.execute("CHECKPOINT")
                .await
                .ctx("CHECKPOINT before sizing")?;
            let b = conn
                .query_one(&format!("SELECT pg_total_relation_size('{t}')"))
                .await
                .ctx("reading the table size")?
                .and_then(|v| v.parse().ok());
            Ok(Size {
                bytes: b,
                method: "pg_total_relation_size",
                reported: b,
            })
        }
        Dbms::Sqlite => {
            let _ = conn.query("PRAGMA wal_checkpoint(TRUNCATE)").await;
            let b = conn
                .query_one(&format!(
                    "SELECT SUM(pgsize) FROM dbstat WHERE name = '{t}'"
                ))
                .await
                .ok()
                .flatten()
                .and_then(|v| v.parse().ok());
            Ok(Size {
                bytes: b,
                method: "sqlite_dbstat",
                reported: b,
            })
        }
        Dbms::Mysql => {
            // The engine's forced flush (InnoDB dirty pages to 0, RocksDB memtables); None when
            // the data directory is not readable from here (a remote server).
            let local = crate::server::capture::disk_usage(conn).await;
            if matches!(f.kind, formats::Kind::Myisam | formats::Kind::Aria) {
                conn.execute(&format!("FLUSH TABLES {t}"))
                    .await
                    .ctx("flushing the table")?;
            }
            if let Some(cf) = f.column_family() {
                // A full compaction of the table's own column family: its steady state, with
                // the codec applied at every level (bottommost_compression too).
                conn.execute(&format!("SET GLOBAL rocksdb_compact_cf='{cf}'"))
                    .await
                    .ctx("compacting the column family")?;
            }
            let reported = conn
                .query_one(&format!(
                    "SELECT COALESCE(DATA_LENGTH, 0) + COALESCE(INDEX_LENGTH, 0) FROM information_schema.TABLES \
                     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{t}'"
                ))
                .await
                .ctx("reading the table size")?
                .and_then(|v| v.parse::<f64>().ok())
                .map(|v| v as u64);
            let Some(du) = local else {
                return Ok(Size {
                    bytes: reported,
                    method: "information_schema",
                    reported,
                });
            };
            let dir = std::path::Path::new(&du.path);
            if let Some(cf) = f.column_family() {
                let ssts = conn
                    .query(&format!(
                        "SELECT DISTINCT m.SST_NAME FROM information_schema.ROCKSDB_INDEX_FILE_MAP m \
                         JOIN information_schema.ROCKSDB_DDL d ON d.COLUMN_FAMILY = m.COLUMN_FAMILY AND d.INDEX_NUMBER = m.INDEX_NUMBER \
                         WHERE d.TABLE_SCHEMA = DATABASE() AND d.TABLE_NAME = '{t}' AND d.CF = '{cf}'"
                    ))
                    .await
                    .ctx("listing the table's SST files")?;
                let rdir = conn
                    .query_one("SELECT @@rocksdb_datadir")
                    .await
                    .ctx("reading rocksdb_datadir")?
                    .unwrap_or_else(|| "#rocksdb".into());
                let rdir = dir.join(rdir.trim_start_matches("./"));
                let bytes = ssts
                    .into_iter()
                    .filter_map(|r| r.into_iter().next().flatten())
                    .map(|name| allocated(&rdir.join(name)))
                    .sum();
                return Ok(Size {
                    bytes: Some(bytes),
                    method: "rocksdb_sst_allocated",
                    reported,
                });
            }
            let db = conn
                .query_one("SELECT DATABASE()")
                .await
                .ctx("reading the database name")?
                .unwrap_or_default();
            let bytes = f
                .file_extensions()
                .iter()
                .map(|ext| allocated(&dir.join(&db).join(format!("{t}.{ext}"))))
                .sum();
            Ok(Size {
                bytes: Some(bytes),
                method: "files_allocated",
                reported,
            })
        }
    }
}

/// Allocated bytes of one file (st_blocks × 512: page-compressed InnoDB files are sparse).
fn allocated(p: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).map(|m| m.blocks() * 512).unwrap_or(0)
}

/// After a format's runs: put back a global setting changed for it.
pub async fn finish_format(conn: &mut Conn, restore: Option<&str>) {
    if let Some(sql) = restore {
        let _ = conn.execute(sql).await;
    }
}

/// Copy the read/write speed of `format` (median ops/s at its highest thread count) from the
/// result's points into its line of the table.
pub fn fill_runs(report: &mut CompressionReport, points: &[crate::report::Point]) {
    for r in report.formats.iter_mut() {
        if let Some(p) = points
            .iter()
            .filter(|p| p.workload == NAME && p.operation == r.format)
            .max_by_key(|p| p.threads)
        {
            r.read_write_ops_per_s = Some(p.aggregate.ops_per_s_median);
            r.read_write_threads = Some(p.threads);
        }
    }
}

/// Drop every format's table.
pub async fn cleanup(conn: &mut Conn) -> Result<()> {
    for f in formats::for_dbms(conn.dbms()) {
        conn.execute(&format!("DROP TABLE IF EXISTS {}", f.table()))
            .await
            .ctx(format!("dropping {}", f.table()))?;
    }
    Ok(())
}

/// The terminal table: one line per format.
pub fn render(r: &CompressionReport) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "\ncompression: {} rows, raw {:.1} MB ({:.1} bytes/row)\n{:<26} {:>10} {:>7} {:>8} {:>10} {:>12}  {}\n",
        r.rows,
        r.raw_bytes as f64 / 1e6,
        r.raw_bytes_per_row,
        "format",
        "size MB",
        "ratio",
        "load s",
        "load rows/s",
        "r/w ops/s",
        "size from"
    );
    for f in &r.formats {
        if !f.available {
            let _ = writeln!(
                out,
                "{:<26} not available: {}",
                f.format,
                f.reason.as_deref().unwrap_or("")
            );
            continue;
        }
        let num = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |x| format!("{x:.p$}"));
        let parts = f.disturbed_parts();
        let _ = writeln!(
            out,
            "{:<26} {:>10} {:>7} {:>8} {:>10} {:>12}  {}{}",
            f.format,
            num(f.size_bytes.map(|b| b as f64 / 1e6), 2),
            num(f.size_ratio, 3),
            num(f.load_s, 2),
            num(f.load_rows_per_s, 0),
            num(f.read_write_ops_per_s, 0),
            f.size_method.as_deref().unwrap_or("-"),
            if parts.is_empty() {
                String::new()
            } else {
                format!("  DISTURBED ({})", parts.join(", "))
            }
        );
    }
    if r.formats.iter().any(|f| !f.disturbed_parts().is_empty()) {
        out.push_str("DISTURBED: other processes used more than 0.1 CPU during that measurement (load_others_cpus, size_others_cpus in the JSON)\n");
    }
    out
}

const SELECT: &str = "SELECT proc_name, instance_name, begin_at, end_at, duration_ms, row_count, status, params FROM {t} WHERE id = ?";
const UPDATE: &str = "UPDATE {t} SET duration_ms = ?, row_count = ?, params = ? WHERE id = ?";

/// One connection of the read/write run on one format's table.
pub struct CompressionDriver {
    table: String,
    rows: u64,
    seed: u64,
    text: Option<crate::workload::textgen::TextGen>,
    rng: Rng,
    /// Distinct per connection and update, so every update writes new text.
    version: u64,
    threads: u64,
    stmts: Option<(StmtId, StmtId)>,
    params: Vec<Value>,
}

impl CompressionDriver {
    pub fn new(spec: &Spec, op: usize, worker: usize, threads: usize) -> Self {
        CompressionDriver {
            table: spec.formats[op].table(),
            rows: spec.rows.max(1),
            seed: spec.seed,
            text: spec.text.clone(),
            rng: Rng::keyed(spec.seed, 6200, worker as u64),
            version: worker as u64,
            threads: threads.max(1) as u64,
            stmts: None,
            params: Vec::with_capacity(4),
        }
    }
}

impl Driver for CompressionDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        let s = conn.prepare(&SELECT.replace("{t}", &self.table)).await?;
        let u = conn.prepare(&UPDATE.replace("{t}", &self.table)).await?;
        self.stmts = Some((s, u));
        Ok(())
    }

    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        let (sel, upd) = self.stmts.expect("setup ran");
        let id = self.rng.range(1, self.rows);
        self.params.clear();
        if self.rng.range(0, 99) < UPDATE_PCT {
            let (d, n, p) =
                logrows::LogRows::update_values(self.seed, id, self.version, self.text.as_ref());
            self.version += self.threads;
            self.params.extend([
                Value::Int(d),
                Value::Int(n),
                Value::Text(p),
                Value::Int(id as i64),
            ]);
            let rows = conn.exec_rows(upd, &self.params).await.map_err(|mut e| {
                e.kind = 1;
                e
            })?;
            Ok(Step {
                rows,
                statements: 1,
                kind: 1,
                rolled_back: false,
            })
        } else {
            self.params.push(Value::Int(id as i64));
            let rows = conn.exec_rows(sel, &self.params).await?;
            Ok(Step::query(rows))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_name() {
        let s = Spec::new(10, 1, Dbms::Mysql, Some("innodb,rocksdb-zstd")).unwrap();
        assert_eq!(s.operations(), vec!["innodb", "rocksdb-zstd"]);
        assert_eq!(s.only(1).operations(), vec!["rocksdb-zstd"]);
        // lzo page compression broke the server here: in the default list, run only by name.
        let all = Spec::new(10, 1, Dbms::Mysql, None).unwrap();
        assert!(!all.explicit && s.explicit);
        let lzo = all
            .formats
            .iter()
            .find(|f| f.name == "innodb-page-lzo")
            .unwrap();
        assert!(lzo.hazard().is_some());
        assert!(all.formats.iter().filter(|f| f.hazard().is_some()).count() == 1);
        assert!(Spec::new(10, 1, Dbms::Sqlite, Some("innodb")).is_err());
        assert_eq!(
            Spec::new(10, 1, Dbms::Postgres, None)
                .unwrap()
                .formats
                .len(),
            2
        );
    }
}
