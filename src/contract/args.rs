//! Options that several workloads take, each with the same meaning (a workload flattens the
//! ones it uses into its own `Args`).

use clap::Args;

use crate::error::{Error, Result};
use crate::measure::Method;
use crate::units;

/// `--table-size`.
#[derive(Debug, Clone, Args, Default)]
pub struct SizeArgs {
    /// Rows in the benchmark table, per table for the sysbench workloads (k/M suffixes
    /// allowed). Default: sysbench workloads 10000 (sysbench's default); micro-read,
    /// compression and schema-change 100k with --method quick, 1M with --method classic.
    #[arg(long, value_name = "ROWS")]
    pub table_size: Option<String>,
}

impl SizeArgs {
    /// The rows asked for, or `default`; checked against the range every loader takes.
    pub fn rows(&self, default: u64) -> Result<u64> {
        let n = match &self.table_size {
            Some(s) => units::count(s).map_err(|e| Error::usage(format!("--table-size: {e}")))?,
            None => default,
        };
        if n == 0 || n > u32::MAX as u64 {
            return Err(Error::usage(format!(
                "--table-size: {n} is out of range (1 to 4294967295 rows)"
            )));
        }
        Ok(n)
    }
}

/// The table size of a method preset (micro-read's report: 1M rows with classic).
pub fn method_rows(m: Method) -> u64 {
    match m {
        Method::Quick => 100_000,
        // The 2007 read report: 1,000,000 rows.
        Method::Classic => 1_000_000,
    }
}

/// `--compressed-fraction`.
#[derive(Debug, Clone, Args, Default)]
pub struct TextArgs {
    /// Generated text compresses to about F of its raw size with zstd level 3 (0 < F <= 1;
    /// 1 = random text, which compresses to about 0.76: docs/compressed-fraction.md)
    /// [default: the workload's own text].
    #[arg(long, value_name = "F")]
    pub compressed_fraction: Option<String>,
}

/// `--queries LIST` over a workload's named parts (compression's formats, schema-change's
/// algorithms): the parts `list` names (comma-separated, in its order), or every one of `all`
/// when it is not given. `what` is what a part is, for the error ("storage format of mysql").
pub fn pick<T: Copy>(
    all: &[T],
    name: impl Fn(&T) -> &str,
    list: Option<&str>,
    what: &str,
) -> Result<Vec<T>> {
    match list {
        None => Ok(all.to_vec()),
        Some(list) => list
            .split(',')
            .map(|n| {
                all.iter()
                    .find(|x| name(x) == n.trim())
                    .copied()
                    .ok_or_else(|| {
                        Error::usage(format!(
                            "--queries: '{n}' is not a {what}; known: {}",
                            all.iter().map(&name).collect::<Vec<_>>().join(", ")
                        ))
                    })
            })
            .collect(),
    }
}

/// Parse a workload's own `Args` from the matches of its command.
pub fn of<A: clap::FromArgMatches>(m: &clap::ArgMatches) -> Result<A> {
    A::from_arg_matches(m).map_err(|e| Error::usage(super::parse::first_line(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_names_in_their_order_or_all() {
        let all = ["a", "b", "c"];
        assert_eq!(pick(&all, |x| *x, None, "part").unwrap(), all);
        assert_eq!(
            pick(&all, |x| *x, Some("c, a"), "part").unwrap(),
            ["c", "a"]
        );
        let e = pick(&all, |x| *x, Some("a,d"), "part of x").unwrap_err();
        assert_eq!(
            e.message,
            "--queries: 'd' is not a part of x; known: a, b, c"
        );
    }
}
