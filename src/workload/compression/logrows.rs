//! Log-style rows, like the procedure-execution log of the TokuDB report's compression test:
//! which stored procedure ran on which instance, when it began and ended, how long it took,
//! how many rows it touched, how it ended and with which parameters.
//!
//! Rows come from (seed, id) alone. They compress the way real logs do: a skewed vocabulary of
//! procedure and instance names, timestamps that grow with the id, parameter lists whose names
//! repeat per procedure and whose values vary. docs/compression.md has the measured raw bytes
//! per row and what zstd/lz4 make of them.
//!
//! With `--compressed-fraction F` the free-text column `params` comes from the shared generator
//! (src/workload/textgen.rs) instead, calibrated so that the params values compress to F with
//! zstd-3; the names, timestamps and numbers keep their log vocabulary.

use crate::db::Value;
use crate::load::RowSource;
use crate::rng::Rng;
use crate::workload::textgen::TextGen;

/// Lengths of `params` from the `--compressed-fraction` generator (the log's own are 10..~160).
pub const PARAMS_LEN: (usize, usize) = (20, 200);

pub const COLUMNS: [&str; 9] = [
    "id",
    "proc_name",
    "instance_name",
    "begin_at",
    "end_at",
    "duration_ms",
    "row_count",
    "status",
    "params",
];

const SCHEMAS: [&str; 6] = ["dbo", "sales", "billing", "etl", "hr", "report"];
const VERBS: [&str; 12] = [
    "Get", "Insert", "Update", "Delete", "Sync", "Load", "Archive", "Validate", "Calc", "Merge",
    "Export", "Purge",
];
const NOUNS: [&str; 16] = [
    "Customer",
    "Order",
    "OrderLine",
    "Invoice",
    "Shipment",
    "Product",
    "Payment",
    "Account",
    "Inventory",
    "Ledger",
    "Report",
    "Session",
    "Audit",
    "PriceList",
    "Supplier",
    "Employee",
];
const SUFFIXES: [&str; 6] = ["", "ById", "ByDate", "Batch", "Summary", "Daily"];
const HOSTS: [&str; 8] = [
    "sqlprod01",
    "sqlprod02",
    "sqlprod03",
    "sqlrpt01",
    "sqletl01",
    "sqletl02",
    "sqldr01",
    "sqlhr01",
];
const INSTANCES: [&str; 3] = ["OLTP", "DW", "STAGING"];
const PARAM_NAMES: [&str; 20] = [
    "CustomerId",
    "OrderId",
    "FromDate",
    "ToDate",
    "BatchSize",
    "Mode",
    "RegionCode",
    "Currency",
    "UserName",
    "IncludeClosed",
    "MaxRows",
    "StoreId",
    "ProductCode",
    "Status",
    "RetryCount",
    "Comment",
    "AccountNo",
    "PageSize",
    "Language",
    "TraceFlag",
];
const MODES: [&str; 5] = ["FULL", "DELTA", "DRYRUN", "REBUILD", "FAST"];
const REGIONS: [&str; 7] = [
    "EU-WEST", "EU-NORTH", "US-EAST", "US-WEST", "APAC", "LATAM", "MEA",
];
const CURRENCIES: [&str; 5] = ["EUR", "USD", "GBP", "SEK", "JPY"];
const USERS: [&str; 10] = [
    "svc_batch",
    "svc_web",
    "svc_etl",
    "jdoe",
    "asmith",
    "mkowalski",
    "lchen",
    "pmartin",
    "svc_report",
    "admin",
];
const COMMENTS: [&str; 6] = [
    "nightly run",
    "retry after timeout",
    "manual rerun requested by ops",
    "month end close",
    "backfill",
    "hotfix verification",
];
const STATUSES: [(&str, u32); 5] = [
    ("OK", 9600),
    ("TIMEOUT", 150),
    ("DEADLOCK", 80),
    ("ERROR 547", 70),
    ("CANCELLED", 100),
];

/// Procedures in the vocabulary: schema × verb × noun × suffix, of which the skewed draw uses
/// a few dozen most of the time (as in a real log, where a handful of procedures dominate).
const PROCS: u64 = (SCHEMAS.len() * VERBS.len() * NOUNS.len() * SUFFIXES.len()) as u64;

/// The log starts here: 2026-01-01 00:00:00 UTC, in milliseconds since the epoch.
const START_MS: i64 = 1_767_225_600_000;
/// Average gap between two log entries (entries come in id order).
const GAP_MS: u64 = 40;

/// The rows of one log table.
pub struct LogRows {
    pub table: String,
    pub seed: u64,
    /// `--compressed-fraction`: the generator of `params`.
    pub text: Option<TextGen>,
}

/// Stream of the key-derived generators (distinct from other workloads' streams).
const STREAM: u64 = 6100;

impl LogRows {
    /// One row's values, in `COLUMNS` order.
    pub fn values(seed: u64, id: u64, text: Option<&TextGen>, out: &mut Vec<Value>) {
        let r = &mut Rng::keyed(seed, STREAM, id);
        let proc_ix = skewed(r, PROCS, 6);
        let (name, verb) = proc_name(proc_ix);
        let begin_ms = START_MS + (id * GAP_MS + r.range(0, GAP_MS - 1)) as i64;
        let duration = duration_ms(r, verb);
        let end_ms = begin_ms + duration as i64;
        let host = *r.pick(&HOSTS);
        let inst = INSTANCES[skewed(r, INSTANCES.len() as u64, 2) as usize];
        let rows = row_count(r, verb);
        let status = status(r);
        out.extend([
            Value::Int(id as i64),
            Value::Text(name),
            Value::Text(format!("{host}\\{inst}")),
            Value::Text(timestamp(begin_ms)),
            Value::Text(timestamp(end_ms)),
            Value::Int(duration as i64),
            Value::Int(rows as i64),
            Value::Text(status.to_string()),
            Value::Text(match text {
                Some(g) => g.value(r),
                None => params(r, proc_ix, begin_ms),
            }),
        ]);
    }

    /// New values for the `duration_ms`, `row_count` and `params` of row `id` after its
    /// `version`-th update (the read/write run's UPDATE): the same kind of content as loaded.
    pub fn update_values(
        seed: u64,
        id: u64,
        version: u64,
        text: Option<&TextGen>,
    ) -> (i64, i64, String) {
        let r = &mut Rng::keyed(seed, STREAM + 1 + version, id);
        let proc_ix = skewed(r, PROCS, 6);
        let (_, verb) = proc_name(proc_ix);
        let begin_ms = START_MS + (id * GAP_MS) as i64;
        (
            duration_ms(r, verb) as i64,
            row_count(r, verb) as i64,
            match text {
                Some(g) => g.value(r),
                None => params(r, proc_ix, begin_ms),
            },
        )
    }
}

impl RowSource for LogRows {
    fn table(&self) -> &str {
        &self.table
    }
    fn columns(&self) -> &[&'static str] {
        &COLUMNS
    }
    fn row(&self, id: u64, out: &mut Vec<Value>) {
        LogRows::values(self.seed, id, self.text.as_ref(), out);
    }
}

/// The raw size of rows 1..=n: the bytes of the rows as tab-separated text lines, exactly as
/// the loader streams them (the size of a log file holding them).
pub fn raw_bytes(seed: u64, n: u64, text: Option<&TextGen>) -> u64 {
    let mut row = Vec::with_capacity(COLUMNS.len());
    let mut buf = Vec::with_capacity(512);
    let mut total = 0;
    for id in 1..=n {
        row.clear();
        buf.clear();
        LogRows::values(seed, id, text, &mut row);
        crate::db::push_tsv(&mut buf, &row);
        total += buf.len() as u64;
    }
    total
}

/// An index in 0..n, skewed towards 0: u^power scaled to n (power 6: the first 1 % of the
/// values get about 46 % of the draws).
fn skewed(r: &mut Rng, n: u64, power: i32) -> u64 {
    let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    ((u.powi(power) * n as f64) as u64).min(n - 1)
}

/// The procedure's name and its verb. Indices are spread so that the popular (small) indices
/// are not all of one schema.
fn proc_name(ix: u64) -> (String, &'static str) {
    let mut k = ix.wrapping_mul(0x9E37_79B9) % PROCS;
    let verb = VERBS[(k % VERBS.len() as u64) as usize];
    k /= VERBS.len() as u64;
    let noun = NOUNS[(k % NOUNS.len() as u64) as usize];
    k /= NOUNS.len() as u64;
    let suffix = SUFFIXES[(k % SUFFIXES.len() as u64) as usize];
    k /= SUFFIXES.len() as u64;
    let schema = SCHEMAS[(k % SCHEMAS.len() as u64) as usize];
    (format!("{schema}.usp_{verb}{noun}{suffix}"), verb)
}

/// Heavy-tailed durations: most calls take milliseconds, batch verbs seconds to minutes.
fn duration_ms(r: &mut Rng, verb: &str) -> u64 {
    let scale: u64 = match verb {
        "Load" | "Archive" | "Export" | "Purge" | "Merge" => 20_000,
        "Sync" | "Calc" | "Validate" => 2_000,
        _ => 50,
    };
    // A product of uniforms gives a long tail without floating-point logs.
    let a = r.range(1, 1000);
    let b = r.range(1, 1000);
    (scale * a * b / 1_000_000).max(r.range(0, 3))
}

fn row_count(r: &mut Rng, verb: &str) -> u64 {
    match verb {
        "Get" => r.range(0, 50),
        "Insert" | "Update" | "Delete" => r.range(0, 3),
        "Load" | "Archive" | "Export" | "Purge" | "Merge" => r.range(1_000, 2_000_000),
        _ => r.range(0, 5_000),
    }
}

fn status(r: &mut Rng) -> &'static str {
    let total: u32 = STATUSES.iter().map(|s| s.1).sum();
    let mut x = r.range(0, total as u64 - 1) as u32;
    for (s, w) in STATUSES {
        if x < w {
            return s;
        }
        x -= w;
    }
    "OK"
}

/// `@Name=value, ...`: the parameter names of a procedure are fixed by its index (1 to 5 of
/// them), the values drawn per call.
fn params(r: &mut Rng, proc_ix: u64, begin_ms: i64) -> String {
    use std::fmt::Write;
    let p = &mut Rng::keyed(0, STREAM + 999, proc_ix);
    let n = p.range(1, 5);
    let mut s = String::with_capacity(160);
    for i in 0..n {
        let name = *p.pick(&PARAM_NAMES);
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "@{name}=");
        match name {
            "CustomerId" | "OrderId" | "AccountNo" => {
                let _ = write!(s, "{}", r.range(1, 2_000_000));
            }
            "StoreId" | "RetryCount" | "TraceFlag" => {
                let _ = write!(s, "{}", r.range(0, 99));
            }
            "BatchSize" | "MaxRows" | "PageSize" => {
                let _ = write!(
                    s,
                    "{}",
                    [100, 500, 1000, 5000, 10000][r.range(0, 4) as usize]
                );
            }
            "FromDate" => {
                let _ = write!(
                    s,
                    "'{}'",
                    &timestamp(begin_ms - 86_400_000 * r.range(1, 31) as i64)[..10]
                );
            }
            "ToDate" => {
                let _ = write!(s, "'{}'", &timestamp(begin_ms)[..10]);
            }
            "Mode" => {
                let _ = write!(s, "'{}'", r.pick(&MODES));
            }
            "RegionCode" => {
                let _ = write!(s, "'{}'", r.pick(&REGIONS));
            }
            "Currency" => {
                let _ = write!(s, "'{}'", r.pick(&CURRENCIES));
            }
            "UserName" => {
                let _ = write!(s, "'{}'", r.pick(&USERS));
            }
            "IncludeClosed" => {
                let _ = write!(s, "{}", r.range(0, 1));
            }
            "ProductCode" => {
                let _ = write!(
                    s,
                    "'P-{:05}-{}'",
                    r.range(1, 40_000),
                    (b'A' + r.range(0, 25) as u8) as char
                );
            }
            "Status" => {
                let _ = write!(
                    s,
                    "'{}'",
                    ["OPEN", "CLOSED", "PENDING", "VOID"][r.range(0, 3) as usize]
                );
            }
            "Language" => {
                let _ = write!(
                    s,
                    "'{}'",
                    ["en-US", "de-DE", "sv-SE", "fr-FR"][r.range(0, 3) as usize]
                );
            }
            _ => {
                let _ = write!(s, "'{}'", r.pick(&COMMENTS));
            }
        }
    }
    s
}

/// `YYYY-MM-DD HH:MM:SS.mmm` (UTC) of milliseconds since the epoch: a literal DATETIME(3),
/// TIMESTAMP(3) and SQLite text all accept.
pub fn timestamp(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{milli:03}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seed: u64, id: u64) -> Vec<Value> {
        let mut v = Vec::new();
        LogRows::values(seed, id, None, &mut v);
        v
    }

    #[test]
    fn deterministic_by_seed_and_id() {
        assert_eq!(row(1, 42), row(1, 42));
        assert_ne!(row(1, 42), row(2, 42));
        assert_ne!(row(1, 42), row(1, 43));
        assert_eq!(row(1, 42).len(), COLUMNS.len());
    }

    #[test]
    fn timestamps() {
        assert_eq!(timestamp(START_MS), "2026-01-01 00:00:00.000");
        assert_eq!(timestamp(0), "1970-01-01 00:00:00.000");
        assert_eq!(timestamp(951_782_400_123), "2000-02-29 00:00:00.123");
    }

    #[test]
    fn begin_grows_with_id_and_end_follows_begin() {
        let text = |v: &Value| match v {
            Value::Text(t) => t.clone(),
            _ => panic!("text expected"),
        };
        let mut last = String::new();
        for id in 1..2000 {
            let r = row(7, id);
            let (b, e) = (text(&r[3]), text(&r[4]));
            assert!(b > last, "id {id}: {b} after {last}");
            assert!(e >= b);
            last = b;
        }
    }

    /// A log, not noise: few distinct procedure names carry most rows, and a row is a
    /// couple of hundred bytes of text.
    #[test]
    fn vocabulary_is_skewed_and_rows_are_log_sized() {
        let n = 20_000;
        let mut counts = std::collections::HashMap::new();
        for id in 1..=n {
            if let Value::Text(p) = &row(3, id)[1] {
                *counts.entry(p.clone()).or_insert(0u64) += 1;
            }
        }
        let mut c: Vec<u64> = counts.values().copied().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        let top50: u64 = c.iter().take(50).sum();
        assert!(
            top50 * 100 / n > 30,
            "top 50 procedures hold {top50} of {n}"
        );
        assert!(counts.len() > 300, "{} distinct procedures", counts.len());
        let per_row = raw_bytes(3, 2000, None) as f64 / 2000.0;
        assert!((100.0..400.0).contains(&per_row), "{per_row} bytes/row");
    }

    /// The test: with --compressed-fraction 0.3 the params of the loaded rows, and
    /// those the read/write run's updates write, compress with zstd-3 to 30 % ± 10 %.
    #[test]
    fn compressed_fraction_applies_to_params() {
        let g = TextGen::new(0.3, 11, PARAMS_LEN.0, PARAMS_LEN.1);
        let (mut loaded, mut updated) = (Vec::new(), Vec::new());
        let mut v = Vec::new();
        for id in 1..=8000 {
            v.clear();
            LogRows::values(11, id, Some(&g), &mut v);
            match &v[8] {
                Value::Text(p) => loaded.extend_from_slice(p.as_bytes()),
                other => panic!("params is {other:?}"),
            }
            // The log's vocabulary stays in the other columns.
            assert!(matches!(&v[1], Value::Text(n) if n.contains(".usp_")));
            updated.extend_from_slice(LogRows::update_values(11, id, 3, Some(&g)).2.as_bytes());
        }
        for (what, data) in [("loaded", &loaded), ("updated", &updated)] {
            let r = crate::workload::textgen::zstd_ratio(data);
            assert!(
                (r - 0.3).abs() <= 0.03,
                "{what} params: zstd-3 ratio {r:.3}"
            );
        }
        assert!(raw_bytes(11, 100, Some(&g)) != raw_bytes(11, 100, None));
    }
}
