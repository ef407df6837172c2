//! The sysbench OLTP workloads' options, and the resolve that checks them.

use clap::Args;

use super::{data, Kind, Spec};
use crate::error::{Error, Result};

/// sysbench's on/off option values.
fn sb_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{s}' is not on or off")),
    }
}

/// sysbench's OLTP workload options, with sysbench 1.0.20's names and defaults (they apply to
/// the oltp_*, select_random_* and bulk_insert workloads; docs/oltp.md maps every flag).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "sysbench OLTP options")]
pub struct OltpArgs {
    /// Number of tables sbtest1..N.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub tables: u32,
    /// Rows per range SELECT (id BETWEEN x AND x + N - 1).
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub range_size: u32,
    /// Point SELECTs per transaction (oltp_point_select always runs 1).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub point_selects: u32,
    /// Simple range SELECTs per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub simple_ranges: u32,
    /// SELECT SUM(k) ranges per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub sum_ranges: u32,
    /// SELECT ... ORDER BY c ranges per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub order_ranges: u32,
    /// SELECT DISTINCT ... ORDER BY c ranges per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub distinct_ranges: u32,
    /// UPDATEs of the indexed column k per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub index_updates: u32,
    /// UPDATEs of c per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub non_index_updates: u32,
    /// DELETE + INSERT pairs per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub delete_inserts: u32,
    /// Run the range SELECTs at all.
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub range_selects: bool,
    /// No BEGIN/COMMIT: every statement in autocommit mode.
    #[arg(long, default_value = "off", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub skip_trx: bool,
    /// id is AUTO_INCREMENT (MySQL) / SERIAL (PostgreSQL) / rowid (SQLite); off: client ids.
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub auto_inc: bool,
    /// A secondary index on id (xid) in place of the primary key.
    #[arg(long, default_value = "off", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub secondary: bool,
    /// Create the secondary index k_N on k (after the load).
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub create_secondary: bool,
    /// Distribution of ids and k values (sysbench 1.0.20's default: special).
    #[arg(long, value_enum, default_value_t = super::rand::RandType::Special)]
    pub rand_type: super::rand::RandType,
    /// Uniform draws summed by the gaussian and special distributions.
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub rand_spec_iter: u32,
    /// special: percentage of the range where the 'special' values fall.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub rand_spec_pct: u32,
    /// special: percentage of draws that are 'special' values.
    #[arg(long, default_value_t = 75, value_name = "N")]
    pub rand_spec_res: u32,
    /// pareto: shape parameter h (0 < h < 1).
    #[arg(long, default_value_t = 0.2, value_name = "H")]
    pub rand_pareto_h: f64,
    /// select_random_points: values in the IN() list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub random_points: u32,
    /// select_random_ranges: BETWEEN ranges per SELECT.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub number_of_ranges: u32,
    /// select_random_ranges: width of each BETWEEN range.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub delta: u32,
    /// bulk_insert: rows per INSERT statement (enginebench's unit of one operation).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub bulk_rows: u32,
}

/// Build the spec of `kind` from its options (shared with schema-change, which runs one of
/// these workloads while it alters the table).
pub fn spec(
    kind: Kind,
    o: &OltpArgs,
    table_size: u64,
    seed: u64,
    engine: Option<&str>,
    compressed_fraction: Option<&str>,
) -> Result<Spec> {
    let name = kind.name();
    let at_least_1 = [
        ("--tables", o.tables),
        ("--range-size", o.range_size),
        ("--rand-spec-iter", o.rand_spec_iter),
        ("--random-points", o.random_points),
        ("--number-of-ranges", o.number_of_ranges),
        ("--bulk-rows", o.bulk_rows),
    ];
    for (flag, v) in at_least_1 {
        if v == 0 {
            return Err(Error::usage(format!("{flag}: must be at least 1")));
        }
    }
    if o.tables > 10_000 {
        return Err(Error::usage("--tables: at most 10000"));
    }
    if o.rand_spec_pct > 100 || o.rand_spec_res >= 100 {
        return Err(Error::usage(
            "--rand-spec-pct must be 0..100 and --rand-spec-res 0..99 (percentages)",
        ));
    }
    if !(o.rand_pareto_h > 0.0 && o.rand_pareto_h < 1.0) {
        return Err(Error::usage(
            "--rand-pareto-h: must be between 0 and 1 (exclusive)",
        ));
    }
    if matches!(kind, Kind::SelectRandomPoints | Kind::SelectRandomRanges) && o.tables != 1 {
        return Err(Error::usage(format!(
            "{name} supports --tables 1 only (as in sysbench)"
        )));
    }
    if table_size > i32::MAX as u64 {
        return Err(Error::usage(
            "--table-size: at most 2147483647 rows per table (sysbench's id is a signed INTEGER)",
        ));
    }
    Ok(Spec {
        shard: None,
        kind,
        seed,
        table_size: table_size as u32,
        tables: o.tables,
        range_size: o.range_size,
        point_selects: o.point_selects,
        simple_ranges: o.simple_ranges,
        sum_ranges: o.sum_ranges,
        order_ranges: o.order_ranges,
        distinct_ranges: o.distinct_ranges,
        index_updates: o.index_updates,
        non_index_updates: o.non_index_updates,
        delete_inserts: o.delete_inserts,
        range_selects: o.range_selects,
        skip_trx: o.skip_trx,
        auto_inc: o.auto_inc,
        secondary: o.secondary,
        create_secondary: o.create_secondary,
        rand_type: o.rand_type,
        rand_spec_iter: o.rand_spec_iter,
        rand_spec_pct: o.rand_spec_pct,
        rand_spec_res: o.rand_spec_res,
        rand_pareto_h: o.rand_pareto_h,
        random_points: o.random_points,
        number_of_ranges: o.number_of_ranges,
        delta: o.delta,
        bulk_rows: o.bulk_rows,
        engine: engine.map(str::to_string),
        text: data::SbText::from_flag(compressed_fraction, seed)?,
    })
}
