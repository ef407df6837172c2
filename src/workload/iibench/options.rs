//! Stage one of iibench's configuration: check the flags (no I/O) and build the `Spec`.

use std::time::Duration;

use clap::Args;

use crate::cli::Method;
use crate::contract::args::TextArgs;
use crate::error::{Error, Result};
use crate::units;
use crate::workload::textgen::{self, TextGen};

use super::{Spec, DEFAULT_DATA_LENGTH, DEFAULT_ROWS_PER_COMMIT, DEFAULT_TIME_WINDOW_ROWS};

/// `--max-rows` when neither it nor `--duration` is given.
fn default_max_rows(m: Option<Method>) -> u64 {
    match m {
        // The report's run: a billion rows.
        Some(Method::Classic) => 1_000_000_000,
        _ => 100_000,
    }
}

/// The data generator of `--compressed-fraction` for values of `lo..=hi` bytes (any workload).
pub fn text_gen(fraction: Option<&str>, seed: u64, lo: usize, hi: usize) -> Result<TextGen> {
    let f = match fraction {
        Some(s) => textgen::parse_fraction(s)
            .map_err(|e| Error::usage(format!("--compressed-fraction: {e}")))?,
        None => 1.0,
    };
    Ok(TextGen::new(f, seed, lo, hi))
}

/// iiBench's options, with iibench.py's names and defaults (docs/iibench.md maps them).
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "iibench options")]
pub struct IibenchArgs {
    /// Rows to insert (k/M/G suffixes); the run also stops at --duration when that is given.
    /// Default without --duration: 100k with --method quick, 1G (the report's billion) with classic.
    #[arg(long, value_name = "ROWS")]
    pub max_rows: Option<String>,
    /// Rows per INSERT statement, each its own transaction [default: 1000, as iibench.py].
    #[arg(long, value_name = "N")]
    pub rows_per_commit: Option<u64>,
    /// The insert rate is reported per last N rows [default: 2 % of --max-rows, or 100000 when
    /// the run is bounded by --duration].
    #[arg(long, value_name = "ROWS")]
    pub window_rows: Option<String>,
    /// Connections running the three iiBench queries while the inserts run [default: 0].
    #[arg(long, value_name = "N")]
    pub query_threads: Option<usize>,
    /// Shortest value of the data column [default: 10, as iibench.py].
    #[arg(long, value_name = "BYTES")]
    pub data_length_min: Option<usize>,
    /// Longest value of the data column, at most 4000 [default: 10, as iibench.py].
    #[arg(long, value_name = "BYTES")]
    pub data_length_max: Option<usize>,
    /// Keep the table at N rows: after each batch delete the rows inserted N rows earlier, by
    /// primary-key range (iibench.py's --with_max_table_rows --max_table_rows N) [default: no deletes].
    #[arg(long, value_name = "ROWS")]
    pub max_table_rows: Option<String>,
    #[command(flatten)]
    pub text: TextArgs,
}

/// Build the spec. `time`: `--duration` when given explicitly (a time bound).
pub fn spec(
    a: &IibenchArgs,
    seed: u64,
    fraction: Option<&str>,
    time: Option<Duration>,
    method: Option<Method>,
) -> Result<Spec> {
    let count = |flag: &str, v: &Option<String>| -> Result<Option<u64>> {
        match v {
            Some(s) => units::count(s)
                .map(Some)
                .map_err(|e| Error::usage(format!("{flag}: {e}"))),
            None => Ok(None),
        }
    };
    let rows_per_commit = a.rows_per_commit.unwrap_or(DEFAULT_ROWS_PER_COMMIT);
    if rows_per_commit == 0 || rows_per_commit > 100_000 {
        return Err(Error::usage(format!(
            "--rows-per-commit: {rows_per_commit} is out of range (1 to 100000)"
        )));
    }
    let mut max_rows = count("--max-rows", &a.max_rows)?;
    if max_rows == Some(0) {
        return Err(Error::usage("--max-rows: must be at least 1"));
    }
    if max_rows.is_none() && time.is_none() {
        max_rows = Some(default_max_rows(method));
    }
    let window_rows = match count("--window-rows", &a.window_rows)? {
        Some(0) => return Err(Error::usage("--window-rows: must be at least 1")),
        Some(w) => w,
        // The report: the rate over the last 2 million of a billion rows; the issue: 2 %.
        None => match (a.max_rows.is_some() || time.is_none(), max_rows) {
            (true, Some(m)) => (m / 50).max(1),
            _ => DEFAULT_TIME_WINDOW_ROWS,
        },
    };
    let query_threads = a.query_threads.unwrap_or(0);
    if query_threads > 1000 {
        return Err(Error::usage("--query-threads: at most 1000"));
    }
    let lo = a.data_length_min.unwrap_or(DEFAULT_DATA_LENGTH);
    let hi = a.data_length_max.unwrap_or(lo.max(DEFAULT_DATA_LENGTH));
    if lo == 0 || lo > hi || hi > 4000 {
        return Err(Error::usage(format!(
            "--data-length-min {lo} / --data-length-max {hi}: need 1 <= min <= max <= 4000 (data is varchar(4000))"
        )));
    }
    let max_table_rows = count("--max-table-rows", &a.max_table_rows)?;
    if max_table_rows == Some(0) {
        return Err(Error::usage(
            "--max-table-rows: must be at least 1 (it is the table size the deletes keep)",
        ));
    }
    Ok(Spec {
        max_table_rows,
        shard: None,
        seed,
        rows_per_commit,
        max_rows,
        max_time: time,
        window_rows,
        inserters: 1,
        query_threads,
        text: text_gen(fraction, seed, lo, hi)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> IibenchArgs {
        IibenchArgs::default()
    }

    #[test]
    fn bounds_and_windows() {
        let s = spec(&args(), 1, None, None, Some(Method::Quick)).unwrap();
        assert_eq!(
            (s.max_rows, s.window_rows, s.rows_per_commit),
            (Some(100_000), 2_000, 1000)
        );
        let t = Some(Duration::from_secs(60));
        let s = spec(&args(), 1, None, t, None).unwrap();
        assert_eq!((s.max_rows, s.window_rows), (None, 100_000));
        let a = IibenchArgs {
            max_rows: Some("1M".into()),
            ..args()
        };
        let s = spec(&a, 1, None, t, None).unwrap();
        assert_eq!(
            (s.max_rows, s.window_rows, s.max_time),
            (Some(1_000_000), 20_000, t)
        );
        let a = IibenchArgs {
            window_rows: Some("5k".into()),
            ..args()
        };
        assert_eq!(spec(&a, 1, None, None, None).unwrap().window_rows, 5_000);
        let a = IibenchArgs {
            max_table_rows: Some("10k".into()),
            ..args()
        };
        assert_eq!(
            spec(&a, 1, None, None, None).unwrap().max_table_rows,
            Some(10_000)
        );
        assert_eq!(
            spec(&args(), 1, None, None, None).unwrap().max_table_rows,
            None
        );
    }

    #[test]
    fn bad_values_are_usage_errors() {
        for a in [
            IibenchArgs {
                rows_per_commit: Some(0),
                ..args()
            },
            IibenchArgs {
                max_rows: Some("0".into()),
                ..args()
            },
            IibenchArgs {
                max_rows: Some("x".into()),
                ..args()
            },
            IibenchArgs {
                window_rows: Some("0".into()),
                ..args()
            },
            IibenchArgs {
                data_length_min: Some(20),
                data_length_max: Some(10),
                ..args()
            },
            IibenchArgs {
                data_length_max: Some(5000),
                ..args()
            },
            IibenchArgs {
                max_table_rows: Some("0".into()),
                ..args()
            },
        ] {
            let e = spec(&a, 1, None, None, None).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{}", e.message);
        }
        assert!(spec(&args(), 1, Some("0"), None, None).is_err());
        assert!(spec(&args(), 1, Some("abc"), None, None).is_err());
    }
}
