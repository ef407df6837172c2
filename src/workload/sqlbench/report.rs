//! The sql-bench part of the outputs, from the result's `sections["sqlbench"]` (its results
//! are not points). HTML: the side-by-side table (operation × engine seconds, with a totals
//! row), seconds per test group as bars, and each operation's detail (client and server CPU,
//! status), CSV from the same rows; `report --format table`: the terminal tables of
//! [`super::table`].

use std::fmt::Write;

use serde_json::Value;

use super::exec::{EngineRun, OpResult, OpStatus, Section, Totals};
use super::NAME;
use crate::model::ResultDoc;
use crate::report::html::Labeled;
use crate::report::svg_bar::BarChart;
use crate::report::tables::{Cell, Table};
use crate::report::terminal::Pick;
use crate::report::SectionOwner;

/// sqlbench's part of every output.
pub struct Report;

impl SectionOwner for Report {
    fn key(&self) -> &'static str {
        NAME
    }

    fn claim_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "sqlbench.total_s",
                "the suite's total wall time (s) on the cell's engine",
            ),
            (
                "sqlbench.op_s",
                "one operation's wall time (s): sqlbench.op_s:insert",
            ),
        ]
    }

    fn claim_value(
        &self,
        doc: &ResultDoc,
        metric: &str,
        _op: Option<&str>,
    ) -> Option<crate::report::MetricValues> {
        let v = match claimed(doc, metric)? {
            Measured::Totals(t) => t.wall_s,
            Measured::Op(o) => (o.status == OpStatus::Ok).then_some(o.wall_s)?,
        };
        Some(crate::report::MetricValues::Once(v))
    }

    /// The totals' or the operation's own flag; unknown in results made before it was
    /// measured.
    fn claim_disturbed(&self, doc: &ResultDoc, metric: &str, _op: Option<&str>) -> Option<bool> {
        match claimed(doc, metric)? {
            Measured::Totals(t) => t.others_cpus.map(|_| t.disturbed),
            Measured::Op(o) => o.others_cpus.map(|_| o.disturbed),
        }
    }

    /// Disturbed operations, and totals disturbed, of every engine.
    fn disturbed_parts(&self, doc: &ResultDoc) -> usize {
        doc.section::<Section>(NAME).map_or(0, |s| {
            s.engines
                .iter()
                .map(|e| {
                    e.ops.iter().filter(|o| o.disturbed).count() + usize::from(e.totals.disturbed)
                })
                .sum()
        })
    }

    fn html(&self, results: &[Labeled]) -> String {
        let mut h = String::new();
        section(&mut h, &sections(results));
        h
    }

    fn tables(&self, results: &[Labeled]) -> Vec<Table> {
        tables(&sections(results))
    }

    /// `run sqlbench`'s table on stdout: seconds per operation of every engine of the run.
    fn terminal(&self, doc: &ResultDoc, _pick: Pick) -> String {
        doc.section::<Section>(NAME)
            .map(|s| super::table::render(std::slice::from_ref(&s)))
            .unwrap_or_default()
    }

    fn side_by_side(&self, docs: &[ResultDoc]) -> Option<String> {
        let ss: Vec<Section> = docs.iter().filter_map(|d| d.section(NAME)).collect();
        if ss.iter().all(|s| s.engines.is_empty()) {
            return None;
        }
        Some(super::table::render(&ss))
    }

    /// v1 kept the section in the document's `sqlbench` field.
    fn upgrade_v1(&self, doc: &mut Value) {
        crate::report::move_into(doc, "sqlbench", "sections", NAME);
    }
}

/// What a claim's metric reads: the totals or one operation.
enum Measured {
    Totals(Totals),
    Op(Box<OpResult>),
}

/// The measurement behind `metric` in a result: of its first engine (a cell runs one).
fn claimed(doc: &ResultDoc, metric: &str) -> Option<Measured> {
    let run = doc.section::<Section>(NAME)?.engines.into_iter().next()?;
    match metric.split_once(':') {
        None if metric == "sqlbench.total_s" => Some(Measured::Totals(run.totals)),
        Some(("sqlbench.op_s", op)) => run
            .ops
            .into_iter()
            .find(|o| o.name == op)
            .map(|o| Measured::Op(Box::new(o))),
        _ => None,
    }
}

/// The sqlbench section of every result that has one, in the results' order.
fn sections(rs: &[Labeled]) -> Vec<Section> {
    rs.iter().filter_map(|r| r.doc.section(NAME)).collect()
}

/// Every engine run of every result, with a column name unique on the page.
fn engines(ss: &[Section]) -> Vec<(String, &EngineRun)> {
    let runs: Vec<&EngineRun> = ss.iter().flat_map(|s| s.engines.iter()).collect();
    let base: Vec<String> = runs
        .iter()
        .map(|e| match e.dbms.as_str() {
            "postgres" => "PostgreSQL".into(),
            "sqlite" => "SQLite".into(),
            _ => e.engine.clone(),
        })
        .collect();
    runs.iter()
        .enumerate()
        .map(|(i, e)| {
            let name = if base.iter().filter(|b| **b == base[i]).count() > 1 {
                format!("{} #{}", base[i], i + 1)
            } else {
                base[i].clone()
            };
            (name, *e)
        })
        .collect()
}

/// Operation names in first-seen order (the suite's order).
fn op_names(es: &[(String, &EngineRun)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (_, e) in es {
        for o in &e.ops {
            if !out.iter().any(|x| x.0 == o.name) {
                out.push((o.name.clone(), o.group.clone()));
            }
        }
    }
    out
}

/// The side-by-side cell, marked like the terminal table.
fn seconds(o: Option<&OpResult>) -> Cell {
    match o {
        None => Cell::Empty,
        Some(o) => match o.status {
            OpStatus::Ok => Cell::Num(o.wall_s, 2),
            OpStatus::Failed if o.tests > 0 => Cell::text(format!("{:.2}!", o.wall_s)),
            OpStatus::Failed => Cell::text("failed"),
            OpStatus::NotSupported => Cell::text("n/s"),
            OpStatus::NotRun => Cell::text("not run"),
        },
    }
}

/// Writes the section when any result holds sqlbench runs; nothing otherwise.
fn section(h: &mut String, ss: &[Section]) {
    let es = engines(ss);
    if es.is_empty() {
        return;
    }
    let scales: Vec<String> = ss.iter().map(|s| s.scale.to_string()).collect();
    let _ = write!(
        h,
        "<h2>sql-bench</h2><p class=note>Wall seconds of each operation, one column per engine (scale {}); lower is better. n/s: not supported by the engine (no transactions: a rollback cannot undo); !: the operation failed (unexpected errors or a failed check); not run: the run stopped before it. Totals add the operations that ran.</p>",
        scales.join(", ")
    );
    // Seconds per test group: where the time goes.
    let mut groups: Vec<String> = Vec::new();
    for (_, g) in op_names(&es) {
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let chart = BarChart {
        title: "sql-bench seconds per test group".into(),
        y_label: "seconds".into(),
        categories: groups.clone(),
        series: es
            .iter()
            .map(|(name, e)| {
                let v = groups
                    .iter()
                    .map(|g| {
                        let ran: Vec<&OpResult> = e
                            .ops
                            .iter()
                            .filter(|o| &o.group == g && o.tests > 0)
                            .collect();
                        (!ran.is_empty()).then(|| ran.iter().map(|o| o.wall_s).sum())
                    })
                    .collect();
                (name.clone(), v)
            })
            .collect(),
        reference: None,
    };
    if chart.bar_count() > 0 {
        let _ = write!(h, "<div class=charts>{}</div>", chart.to_svg());
    }
    // The seconds stay numbers (the CSV is read back as data): what was disturbed is said here.
    let disturbed: Vec<String> = es
        .iter()
        .flat_map(|(name, e)| {
            let ops = e.ops.iter().filter(|o| o.disturbed).map(|o| o.name.clone());
            let total = e.totals.disturbed.then(|| "the totals".to_string());
            ops.chain(total).map(move |o| format!("{o} ({name})"))
        })
        .collect();
    if !disturbed.is_empty() {
        let _ = write!(
            h,
            "<p class=warn>Disturbed (other processes used more than 0.1 CPU while it ran): {}.</p>",
            crate::report::svg::escape(&disturbed.join(", "))
        );
    }
    let t = tables(ss);
    h.push_str(&t[0].to_html());
    let _ = write!(
        h,
        "<details><summary>Each operation on each engine: client and server CPU, status ({} rows)</summary>{}</details>",
        t[1].rows.len(),
        t[1].to_html()
    );
}

/// The side-by-side table and the per-operation detail.
fn tables(ss: &[Section]) -> Vec<Table> {
    let es = engines(ss);
    let mut side = Table::new(
        "sqlbench",
        &[("operation", "operation"), ("group", "group")],
    );
    for (name, _) in &es {
        side.columns.push(format!(
            "seconds_{}",
            name.to_lowercase().replace([' ', '#'], "_")
        ));
        side.headers.push(format!("{name} s"));
    }
    side.columns.push("tests".into());
    side.headers.push("tests".into());
    for (n, g) in op_names(&es) {
        let mut row = vec![Cell::text(&n), Cell::text(&g)];
        for (_, e) in &es {
            row.push(seconds(e.ops.iter().find(|o| o.name == n)));
        }
        let tests = es
            .iter()
            .filter_map(|(_, e)| e.ops.iter().find(|o| o.name == n && o.tests > 0))
            .map(|o| o.tests)
            .next()
            .unwrap_or(0);
        row.push(Cell::Int(tests));
        side.rows.push(row);
    }
    if !es.is_empty() {
        let mut total = vec![Cell::text("TOTALS"), Cell::Empty];
        for (_, e) in &es {
            total.push(Cell::Num(e.totals.wall_s, 2));
        }
        total.push(Cell::Int(es[0].1.totals.tests));
        side.footer.push(total);
    }
    let mut detail = Table::new(
        "sqlbench-ops",
        &[
            ("engine", "engine"),
            ("operation", "operation"),
            ("status", "status"),
            ("tests", "tests"),
            ("wall_s", "seconds"),
            ("usr_s", "client usr s"),
            ("sys_s", "client sys s"),
            ("server_cpu_s", "server CPU s"),
            ("others_cpus", "others' CPUs"),
            ("disturbed", "disturbed"),
            ("errors", "errors"),
            ("note", "note"),
        ],
    );
    for (name, e) in &es {
        for o in &e.ops {
            detail.rows.push(vec![
                Cell::text(name),
                Cell::text(&o.name),
                Cell::text(o.status.label()),
                Cell::Int(o.tests),
                Cell::Num(o.wall_s, 3),
                Cell::Num(o.usr_s, 3),
                Cell::Num(o.sys_s, 3),
                Cell::opt(o.server_cpu_s, 3),
                Cell::opt(o.others_cpus, 2),
                Cell::text(if o.disturbed { "yes" } else { "" }),
                Cell::Int(o.errors.values().sum()),
                o.note.as_deref().map_or(Cell::Empty, Cell::text),
            ]);
        }
    }
    vec![side, detail]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn op(name: &str, wall_s: f64, others_cpus: Option<f64>) -> OpResult {
        OpResult {
            name: name.into(),
            group: "insert".into(),
            tests: 10,
            status: OpStatus::Ok,
            wall_s,
            usr_s: 0.0,
            sys_s: 0.0,
            server_cpu_s: None,
            errors: BTreeMap::new(),
            error_samples: Vec::new(),
            note: None,
            server_counters: BTreeMap::new(),
            others_cpus,
            disturbed: others_cpus.is_some_and(|c| crate::measure::disturbed(c, wall_s)),
            server_profile: None,
        }
    }

    fn doc(ops: Vec<OpResult>) -> ResultDoc {
        let mut d = ResultDoc::default();
        d.set_section(
            NAME,
            &Section {
                scale: 1.0,
                engines: vec![EngineRun {
                    engine: "InnoDB".into(),
                    dbms: "mysql".into(),
                    transactions: true,
                    totals: Totals::of(&ops),
                    ops,
                }],
            },
        );
        d
    }

    #[test]
    fn claims_read_the_operations_and_totals_flags() {
        // insert: 1 CPU of others over 10 s; select_key: quiet; count: 2 CPUs over 10 ms
        // (within the sampler's rounding: not disturbed).
        let d = doc(vec![
            op("insert", 10.0, Some(1.0)),
            op("select_key", 30.0, Some(0.01)),
            op("count", 0.01, Some(2.0)),
        ]);
        let r = Report;
        let dis = |m: &str| r.claim_disturbed(&d, m, None);
        assert_eq!(dis("sqlbench.op_s:insert"), Some(true));
        assert_eq!(dis("sqlbench.op_s:select_key"), Some(false));
        assert_eq!(dis("sqlbench.op_s:count"), Some(false));
        assert_eq!(dis("sqlbench.op_s:nope"), None);
        assert_eq!(dis("sqlbench.nope"), None);
        // Totals: (10 + 0.3 + 0.02) others' seconds over 40.01 s = 0.26 CPU.
        assert_eq!(dis("sqlbench.total_s"), Some(true));
        let s: Section = d.section(NAME).unwrap();
        let c = s.engines[0].totals.others_cpus.unwrap();
        assert!((c - 10.32 / 40.01).abs() < 1e-9, "{c}");
        assert_eq!(r.disturbed_parts(&d), 2);

        let quiet = doc(vec![op("insert", 10.0, Some(0.05))]);
        assert_eq!(
            r.claim_disturbed(&quiet, "sqlbench.total_s", None),
            Some(false)
        );
        assert_eq!(r.disturbed_parts(&quiet), 0);
        assert!(!super::super::table::render(&[quiet.section(NAME).unwrap()]).contains('*'));
        let mut h = String::new();
        section(&mut h, std::slice::from_ref(&s));
        assert!(
            h.contains("Disturbed (other processes used more than 0.1 CPU while it ran): insert (InnoDB), the totals (InnoDB).</p>"),
            "{h}"
        );
        // The CSV keeps numbers.
        let t = tables(std::slice::from_ref(&s));
        assert!(matches!(t[0].rows[0][2], Cell::Num(..)));
        assert!(matches!(t[0].footer[0][2], Cell::Num(..)));
        let marked = super::super::table::render(&[s]);
        assert!(marked.contains("*: disturbed"), "{marked}");
    }

    #[test]
    fn older_results_say_unknown() {
        // Made before the measure: no others_cpus anywhere (as deserialized without it).
        let d = doc(vec![op("insert", 10.0, None)]);
        let r = Report;
        assert_eq!(r.claim_disturbed(&d, "sqlbench.op_s:insert", None), None);
        assert_eq!(r.claim_disturbed(&d, "sqlbench.total_s", None), None);
        assert_eq!(r.disturbed_parts(&d), 0);
        let old = serde_json::json!({"name": "insert", "group": "insert", "tests": 1,
            "status": "ok", "wall_s": 1.0, "usr_s": 0.0, "sys_s": 0.0});
        let o: OpResult = serde_json::from_value(old).unwrap();
        assert!(o.others_cpus.is_none() && !o.disturbed);
    }
}
