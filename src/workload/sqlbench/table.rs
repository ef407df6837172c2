//! The terminal tables of sqlbench results: one engine in detail (seconds, usr, sys, cpu,
//! server cpu, tests, as the report's per-engine columns), several side by side (operation x
//! engine seconds, as the report's comparison table).

use std::fmt::Write;

use super::exec::{EngineRun, OpResult, OpStatus, Section};

/// A column's name: the engine (MySQL family), or the DBMS for PostgreSQL and SQLite.
fn label(e: &EngineRun) -> String {
    match e.dbms.as_str() {
        "postgres" => "PostgreSQL".into(),
        "sqlite" => "SQLite".into(),
        _ => e.engine.clone(),
    }
}

fn cell(o: Option<&OpResult>, v: impl Fn(&OpResult) -> f64) -> String {
    match o {
        None => "-".into(),
        Some(o) => match o.status {
            OpStatus::Ok => format!("{:.2}", v(o)),
            OpStatus::Failed if o.tests > 0 => format!("{:.2}!", v(o)),
            OpStatus::Failed => "failed".into(),
            OpStatus::NotSupported => "n/s".into(),
            OpStatus::NotRun => "-".into(),
        },
    }
}

/// An operation's seconds, `*` when other processes disturbed it.
fn wall(o: Option<&OpResult>) -> String {
    let c = cell(o, |o| o.wall_s);
    match o {
        Some(o) if o.disturbed && o.status == OpStatus::Ok => c + "*",
        _ => c,
    }
}

/// The totals' seconds, marked as an operation's.
fn total(e: &EngineRun) -> String {
    let mark = if e.totals.disturbed { "*" } else { "" };
    format!("{:.2}{mark}", e.totals.wall_s)
}

/// Every engine run of every result's section (a result of `--engines` holds several).
pub fn engines(sections: &[Section]) -> Vec<&EngineRun> {
    sections.iter().flat_map(|s| s.engines.iter()).collect()
}

/// The sqlbench sections of results: one engine in detail, several side by side.
pub fn render(sections: &[Section]) -> String {
    let runs = engines(sections);
    if runs.is_empty() {
        return "no sqlbench results\n".into();
    }
    let mut names: Vec<&str> = runs
        .iter()
        .flat_map(|e| e.ops.iter().map(|o| o.name.as_str()))
        .collect();
    names.sort();
    names.dedup();
    let find = |e: &EngineRun, n: &str| e.ops.iter().find(|o| o.name == n).cloned();
    let tests_of = |n: &str| {
        runs.iter()
            .filter_map(|e| find(e, n))
            .find(|o| o.tests > 0)
            .map_or(0, |o| o.tests)
    };
    let mut s = String::new();
    if runs.len() == 1 {
        let e = runs[0];
        let srv = e.totals.server_cpu_s.is_some();
        let _ = writeln!(
            s,
            "sqlbench on {}: seconds per operation (usr/sys: client CPU; server: the server's CPU)",
            label(e)
        );
        let _ = writeln!(
            s,
            "{:<34} {:>10} {:>9} {:>9} {:>9} {:>10} {:>10}",
            "operation",
            "seconds",
            "usr",
            "sys",
            "cpu",
            if srv { "server" } else { "" },
            "tests"
        );
        for n in &names {
            let o = find(e, n);
            let o = o.as_ref();
            let _ = writeln!(
                s,
                "{:<34} {:>10} {:>9} {:>9} {:>9} {:>10} {:>10}",
                n,
                wall(o),
                cell(o, |o| o.usr_s),
                cell(o, |o| o.sys_s),
                cell(o, |o| o.usr_s + o.sys_s),
                if srv {
                    cell(o, |o| o.server_cpu_s.unwrap_or(0.0))
                } else {
                    String::new()
                },
                tests_of(n)
            );
        }
        let t = &e.totals;
        let _ = writeln!(
            s,
            "{:<34} {:>10} {:>9.2} {:>9.2} {:>9.2} {:>10} {:>10}",
            "TOTALS",
            total(e),
            t.usr_s,
            t.sys_s,
            t.usr_s + t.sys_s,
            t.server_cpu_s
                .map(|v| format!("{v:.2}"))
                .unwrap_or_default(),
            t.tests
        );
    } else {
        let _ = writeln!(s, "sqlbench: seconds per operation");
        let _ = write!(s, "{:<34}", "operation");
        for e in &runs {
            let _ = write!(s, " {:>11}", label(e));
        }
        let _ = writeln!(s, " {:>10}", "tests");
        for n in &names {
            let _ = write!(s, "{n:<34}");
            for e in &runs {
                let _ = write!(s, " {:>11}", wall(find(e, n).as_ref()));
            }
            let _ = writeln!(s, " {:>10}", tests_of(n));
        }
        let _ = write!(s, "{:<34}", "TOTALS");
        for e in &runs {
            let _ = write!(s, " {:>11}", total(e));
        }
        let _ = writeln!(s, " {:>10}", runs[0].totals.tests);
    }
    let ns = runs.iter().any(|e| e.totals.ops_not_supported > 0);
    let failed = runs.iter().any(|e| e.totals.ops_failed > 0);
    if ns {
        let _ = writeln!(
            s,
            "n/s: not supported by this engine (no transactions: a rollback cannot undo)"
        );
    }
    if failed {
        let _ = writeln!(
            s,
            "!: the operation failed (unexpected errors or a failed check; see errors and note in the JSON)"
        );
    }
    if runs
        .iter()
        .any(|e| e.totals.disturbed || e.ops.iter().any(|o| o.disturbed))
    {
        let _ = writeln!(
            s,
            "*: disturbed: other processes used more than 0.1 CPU while it ran (others_cpus in the JSON)"
        );
    }
    s
}
