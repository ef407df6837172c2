//! sql-bench: the operation suite of MySQL's old Perl benchmark (the first table of the
//! InnoDB-vs-PBXT report). 95 named operations, each a fixed number of tests run one after the
//! other on one connection (the connect operations open their own), each timed on its own:
//! wall seconds, client user/system CPU, server CPU when the server is local.
//!
//! It does not fit the duration-based thread-sweep runner (every operation is a count, not a
//! time), so it has its own sequential executor (`exec`) and its own run shape in the
//! harness (`run`); results still go into the standard result document, in its `sqlbench`
//! section. docs/sqlbench.md says what each operation does and where it differs from the Perl
//! scripts.

mod atis;
mod entry;
pub mod exec;
mod insert;
mod misc;
mod report;
pub mod run;
mod select;
pub mod table;
mod trx;
mod wisconsin;

pub use entry::{Sqlbench, SqlbenchArgs, SqlbenchEntry, ENTRY};
pub use report::Report;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub const NAME: &str = "sqlbench";

/// The groups, in the order they run (sql-bench's run-all-tests order of its test scripts).
/// The list names seven of them; `atis` and `big-tables` hold the operations of the two
/// scripts it does not name (test-ATIS, test-big-tables).
pub const GROUPS: [&str; 9] = [
    "alter",
    "atis",
    "big-tables",
    "connect",
    "create",
    "insert",
    "select",
    "transactions",
    "wisconsin",
];

/// Every operation: (name, group, tests at --scale 1). The counts are the report's table (its
/// InnoDB column); they sum to 3,486,247, the report's TOTALS row. Within a group the
/// operations run in this order (the order of the original script), which matters: later ones
/// read what earlier ones left (deletes come last).
pub const OPS: [(&str, &str, u64); 95] = [
    // test-alter-table
    ("alter_table_add", "alter", 100),
    ("create_index", "alter", 8),
    ("drop_index", "alter", 8),
    ("alter_table_drop", "alter", 91),
    // test-ATIS (generated airline tables, see atis.rs)
    ("select_simple_join", "atis", 500),
    ("select_join", "atis", 100),
    ("select_key_prefix_join", "atis", 100),
    ("select_distinct", "atis", 800),
    ("select_group", "atis", 2911),
    // test-big-tables
    ("select_many_fields", "big-tables", 2000),
    ("insert_many_fields", "big-tables", 2000),
    // test-connect
    ("connect", "connect", 10000),
    ("connect+select_simple", "connect", 10000),
    ("select_simple", "connect", 100000),
    ("select_simple_cache", "connect", 100000),
    ("connect+select_1_row", "connect", 10000),
    ("select_1_row", "connect", 100000),
    ("select_1_row_cache", "connect", 100000),
    ("select_2_rows", "connect", 100000),
    ("select_column+column", "connect", 100000),
    ("select_big_str", "connect", 10000),
    // test-create (create_table / drop_table: the ATIS and Wisconsin scripts' table setup)
    ("create_MANY_tables", "create", 9999),
    ("select_group_when_MANY_tables", "create", 9999),
    ("drop_table_when_MANY_tables", "create", 9999),
    ("create+drop", "create", 10000),
    ("create_key+drop", "create", 10000),
    ("create_table", "create", 31),
    ("drop_table", "create", 28),
    // test-insert
    ("insert", "insert", 350768),
    ("insert_duplicates", "insert", 100000),
    ("prepared_select", "insert", 100000),
    ("once_prepared_select", "insert", 100000),
    ("order_by_big_key", "insert", 10),
    ("order_by_big_key_desc", "insert", 10),
    ("order_by_big_key_prefix", "insert", 10),
    ("order_by_big_key2", "insert", 10),
    ("order_by_big_key_diff", "insert", 10),
    ("order_by_big", "insert", 10),
    ("order_by_range", "insert", 500),
    ("order_by_key_prefix", "insert", 500),
    ("order_by_key2_diff", "insert", 500),
    ("select_diff_key", "insert", 500),
    ("select_range_prefix", "insert", 25010),
    ("select_range_key2", "insert", 25010),
    ("select_key_prefix", "insert", 200000),
    ("select_key", "insert", 200000),
    ("select_key_return_key", "insert", 200000),
    ("select_key2", "insert", 200000),
    ("select_key2_return_key", "insert", 200000),
    ("select_key2_return_prim", "insert", 200000),
    ("min_max", "insert", 60),
    ("count", "insert", 100),
    ("update_of_key", "insert", 50000),
    ("update_of_key_big", "insert", 501),
    ("update_with_key", "insert", 300000),
    ("update_with_key_prefix", "insert", 100000),
    ("update_big", "insert", 10),
    ("outer_join_on_key", "insert", 10),
    ("outer_join", "insert", 10),
    ("outer_join_found", "insert", 10),
    ("outer_join_not_found", "insert", 500),
    ("insert_select_1_key", "insert", 1),
    ("insert_select_2_keys", "insert", 1),
    ("delete_key", "insert", 10000),
    ("delete_range", "insert", 12),
    ("insert_key", "insert", 100000),
    ("update_of_primary_key_many_keys", "insert", 256),
    ("delete_big_many_keys", "insert", 128),
    ("delete_all_many_keys", "insert", 1),
    ("multiple_value_insert", "insert", 100000),
    // test-select
    ("select_cache", "select", 10000),
    ("select_cache2", "select", 10000),
    ("select_big", "select", 80),
    ("select_range", "select", 410),
    ("min_max_on_key", "select", 85000),
    ("count_on_key", "select", 50100),
    ("count_group_on_key_parts", "select", 1000),
    ("count_distinct_key_prefix", "select", 1000),
    ("count_distinct", "select", 1000),
    ("count_distinct_2", "select", 1000),
    ("count_distinct_group_on_key", "select", 1000),
    ("count_distinct_group_on_key_parts", "select", 1000),
    ("count_distinct_group", "select", 1000),
    ("count_distinct_big", "select", 120),
    // test-transactions
    ("insert_commit", "transactions", 10000),
    ("insert_autocommit", "transactions", 10000),
    ("insert_rollback", "transactions", 100),
    ("update_rollback", "transactions", 100),
    ("delete_rollback", "transactions", 100),
    ("update_commit", "transactions", 10000),
    ("update_autocommit", "transactions", 10000),
    ("delete_commit", "transactions", 10000),
    ("delete_autocommit", "transactions", 10000),
    // test-wisconsin
    ("delete_big", "wisconsin", 1),
    ("wisc_benchmark", "wisconsin", 114),
];

/// Tests of an operation at `scale`: the report's count times the scale, at least 1.
pub fn scaled(base: u64, scale: f64) -> u64 {
    ((base as f64 * scale).round() as u64).max(1)
}

/// One planned operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    pub name: String,
    pub group: String,
    pub tests: u64,
}

/// The resolved options of a sqlbench run.
#[derive(Debug, Clone, Serialize)]
pub struct Spec {
    pub scale: f64,
    /// Indexes into `OPS` of the selected operations, in run order.
    #[serde(skip)]
    pub selected: Vec<usize>,
    /// Names of the selected operations (the result's config.operations).
    #[serde(skip)]
    pub operations: Vec<String>,
    /// MySQL engines to run the suite on, one after the other (empty: --engine or the default).
    pub engines: Vec<String>,
}

impl Spec {
    /// Validate `--scale`, `--ops`, `--groups` (no I/O).
    pub fn parse(
        scale: f64,
        ops: Option<&str>,
        groups: Option<&str>,
        engines: Option<&str>,
    ) -> Result<Spec> {
        if !(scale.is_finite() && scale > 0.0 && scale <= 100.0) {
            return Err(Error::usage(format!(
                "--scale: {scale} is out of range (more than 0, at most 100; 1 = the report's test counts)"
            )));
        }
        let list = |s: &str| -> Vec<String> {
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect()
        };
        let mut want = vec![ops.is_none() && groups.is_none(); OPS.len()];
        if let Some(g) = groups {
            let g = list(g);
            if g.is_empty() {
                return Err(Error::usage("--groups: the list is empty"));
            }
            for name in &g {
                if !GROUPS.contains(&name.as_str()) {
                    return Err(Error::usage(format!(
                        "--groups: unknown group '{name}'; groups: {}",
                        GROUPS.join(", ")
                    )));
                }
                for (i, op) in OPS.iter().enumerate() {
                    if op.1 == name {
                        want[i] = true;
                    }
                }
            }
        }
        if let Some(o) = ops {
            let o = list(o);
            if o.is_empty() {
                return Err(Error::usage("--ops: the list is empty"));
            }
            for name in &o {
                let i = OPS.iter().position(|op| op.0 == name).ok_or_else(|| {
                    Error::usage(format!(
                        "--ops: unknown operation '{name}' (`enginebench run sqlbench --dry-run` lists all 95)"
                    ))
                })?;
                want[i] = true;
            }
        }
        let mut engines_v = Vec::new();
        if let Some(e) = engines {
            for name in list(e) {
                if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(Error::usage(format!(
                        "--engines: '{name}' is not an engine name (letters, digits, _)"
                    )));
                }
                engines_v.push(name);
            }
            if engines_v.is_empty() {
                return Err(Error::usage("--engines: the list is empty"));
            }
        }
        let selected: Vec<usize> = run_order().into_iter().filter(|&i| want[i]).collect();
        Ok(Spec {
            scale,
            operations: selected.iter().map(|&i| OPS[i].0.to_string()).collect(),
            selected,
            engines: engines_v,
        })
    }

    /// Planned tests of operation `name` at this scale (selected or not: table sizes follow
    /// the planned counts of the operations that fill them).
    pub fn tests(&self, name: &str) -> u64 {
        let base = OPS
            .iter()
            .find(|o| o.0 == name)
            .map(|o| o.2)
            .unwrap_or_else(|| panic!("no sqlbench operation {name}"));
        scaled(base, self.scale)
    }

    /// The selected operations with their tests, in run order.
    pub fn plan(&self) -> Vec<Planned> {
        self.selected
            .iter()
            .map(|&i| Planned {
                name: OPS[i].0.to_string(),
                group: OPS[i].1.to_string(),
                tests: scaled(OPS[i].2, self.scale),
            })
            .collect()
    }

    pub fn notes(&self) -> Vec<String> {
        vec![
            format!("sqlbench: the operations of MySQL's sql-bench, re-implemented (not the Perl scripts); test counts are the report's times --scale {} (at least 1 each).", self.scale),
            "sqlbench: every operation runs its tests one after the other on one connection (the connect operations open a new connection per test); seconds are wall time of the operation's timed statements; untimed setup (loading tables an unselected operation would have filled, restoring rows between operations) is excluded.".into(),
            "sqlbench: usr_s/sys_s are the client process's CPU (getrusage) over the operation; server_cpu_s is the server process tree's CPU (/proc) when the server is local (--server or --server-pid).".into(),
            "sqlbench: the ATIS and Wisconsin tables are generated (the original data files are not shipped); table shapes, keys and query forms follow the scripts, values do not.".into(),
            "sqlbench: prepared_select sends each SELECT as text with the key inlined (DBD::mysql emulated prepare this way by default); once_prepared_select uses one server-side prepared statement.".into(),
        ]
    }
}

/// Operation indexes in run order: groups in `GROUPS` order, within a group the `OPS` order.
pub fn run_order() -> Vec<usize> {
    GROUPS
        .iter()
        .flat_map(|g| (0..OPS.len()).filter(move |&i| OPS[i].1 == *g))
        .collect()
}

/// The dry-run listing: one line per selected operation, sorted by name as the report's
/// table is, and the TOTAL line.
pub fn dry_run_text(spec: &Spec) -> String {
    use std::fmt::Write;
    let mut plan = spec.plan();
    plan.sort_by(|a, b| a.name.cmp(&b.name));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<36} {:<13} {:>10}   (--scale {})",
        "operation", "group", "tests", spec.scale
    );
    for p in &plan {
        let _ = writeln!(s, "{:<36} {:<13} {:>10}", p.name, p.group, p.tests);
    }
    let _ = writeln!(
        s,
        "{:<36} {:<13} {:>10}",
        "TOTAL",
        format!("{} ops", plan.len()),
        plan.iter().map(|p| p.tests).sum::<u64>()
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_whole() {
        assert_eq!(OPS.iter().map(|o| o.2).sum::<u64>(), 3_486_247);
        let mut names: Vec<_> = OPS.iter().map(|o| o.0).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 95);
        assert!(OPS.iter().all(|o| GROUPS.contains(&o.1)));
        assert_eq!(run_order().len(), 95);
    }

    #[test]
    fn selection_and_scale() {
        let s = Spec::parse(0.001, Some("insert,connect"), Some("alter"), None).unwrap();
        let names: Vec<_> = s.plan().into_iter().map(|p| (p.name, p.tests)).collect();
        assert_eq!(
            names,
            vec![
                ("alter_table_add".to_string(), 1),
                ("create_index".to_string(), 1),
                ("drop_index".to_string(), 1),
                ("alter_table_drop".to_string(), 1),
                ("connect".to_string(), 10),
                ("insert".to_string(), 351),
            ]
        );
        assert!(Spec::parse(0.0, None, None, None).is_err());
        assert!(Spec::parse(1.0, Some("nope"), None, None).is_err());
        assert!(Spec::parse(1.0, None, Some("nope"), None).is_err());
        assert!(Spec::parse(1.0, None, None, Some("InnoDB;drop")).is_err());
        assert_eq!(
            Spec::parse(2.0, None, None, None)
                .unwrap()
                .tests("delete_big"),
            2
        );
    }
}
