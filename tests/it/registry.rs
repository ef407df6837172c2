//! The registry is open: a workload defined here, in the test crate, registered with one call,
//! gets `list`, `prepare`, `run` (as a sweep and as phases of its own), the JSON result and an
//! HTML section from the harness, with no edit of enginebench itself. Both workloads are written
//! against the contract (`toy` with a driver on the shared runner, whose workers it starts with
//! `enginebench::runner::start`; `phased` with phases of its own, the contract's
//! `Harness::measure`, and nothing else); the test's side that runs them uses the registry and
//! the command line.

use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser};
use futures_util::future::{FutureExt, LocalBoxFuture};

// The workloads: the contract (and, for toy's workers, the runner).
use enginebench::contract::{
    self, Conn, DbResult, Driver, Entry, Harness, Labeled, Listing, LoadStats, PrepareCx,
    ResolveCx, ResultDoc, SectionOwner, Session, SessionConfig, Step, StmtId, TargetSpec, Value,
    Workload,
};
// The program that embeds them: the registry.
use enginebench::registry::Registry;

use crate::common::tempdir;

const ROWS: i64 = 500;

/// The toy workloads' own option.
#[derive(Debug, Clone, Args)]
struct ToyArgs {
    /// Rows in toy_kv.
    #[arg(long, default_value_t = ROWS)]
    toy_rows: i64,
}

struct ToyEntry;
static TOY: ToyEntry = ToyEntry;

/// `toy` sweeps point reads; `toy-phases` runs two phases of its own at 1 and 2 connections.
#[derive(Debug, Clone)]
struct Toy {
    name: &'static str,
    rows: i64,
}

impl Entry for ToyEntry {
    fn names(&self) -> Vec<&'static str> {
        vec!["toy", "toy-phases"]
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "toy          a key-value table read by key (defined in the test crate)"
                .into(),
            operations: vec![("get".into(), "SELECT v FROM toy_kv WHERE k = ?".into())],
        }
    }
    fn label(&self) -> &'static str {
        "the toy workloads"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        ToyArgs::augment_args(cmd)
    }
    fn resolve(
        &self,
        name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> contract::Result<Arc<dyn Workload>> {
        let a: ToyArgs = contract::args::of(m)?;
        cx.shape.size = a.toy_rows as u64;
        let name = if name == "toy" { "toy" } else { "toy-phases" };
        Ok(Arc::new(Toy {
            name,
            rows: a.toy_rows,
        }))
    }
    fn report(&self) -> Option<&'static dyn SectionOwner> {
        Some(&ToyReport)
    }
}

struct ToyDriver {
    rows: i64,
    next: i64,
    stmt: StmtId,
}

impl Driver for ToyDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.stmt = conn.prepare("SELECT v FROM toy_kv WHERE k = ?").await?;
        Ok(())
    }
    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        self.next = (self.next + 7) % self.rows;
        conn.exec_rows(self.stmt, &[Value::Int(self.next)])
            .await
            .map(Step::query)
    }
}

impl Workload for Toy {
    fn name(&self) -> &str {
        self.name
    }
    fn operations(&self) -> Vec<String> {
        vec!["get".into()]
    }
    fn main_table(&self) -> &str {
        "toy_kv"
    }
    fn options(&self) -> serde_json::Value {
        serde_json::json!({ "toy_rows": self.rows })
    }
    fn prepare<'a>(
        &'a self,
        cx: PrepareCx<'a>,
    ) -> LocalBoxFuture<'a, contract::Result<Vec<LoadStats>>> {
        async move {
            let c = cx.conn;
            let sql = |e: contract::DbError| contract::Error::run(e.message);
            c.execute("DROP TABLE IF EXISTS toy_kv")
                .await
                .map_err(sql)?;
            c.execute("CREATE TABLE toy_kv (k integer PRIMARY KEY, v integer)")
                .await
                .map_err(sql)?;
            let values: Vec<String> = (0..self.rows)
                .map(|k| format!("({k}, {})", k * 2))
                .collect();
            c.execute(&format!("INSERT INTO toy_kv VALUES {}", values.join(",")))
                .await
                .map_err(sql)?;
            Ok(Vec::new())
        }
        .boxed_local()
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, contract::Result<()>> {
        async move {
            conn.execute("DROP TABLE IF EXISTS toy_kv")
                .await
                .map_err(|e| contract::Error::run(e.message))
        }
        .boxed_local()
    }
    fn start(
        &self,
        _op: usize,
        _threads: usize,
        target: &TargetSpec,
        cfg: &SessionConfig,
    ) -> contract::Result<Box<dyn Session>> {
        let rows = self.rows;
        enginebench::runner::start(target, cfg, move |w| ToyDriver {
            rows,
            next: w as i64,
            stmt: StmtId(0),
        })
    }
    fn run(&self, h: &mut dyn Harness) -> contract::Result<()> {
        if self.name == "toy" {
            return h.sweep();
        }
        // Phases of its own: its operation on the shared runner, measured by the harness.
        for (i, threads) in [1usize, 2].into_iter().enumerate() {
            let name = format!("phase{}", i + 1);
            h.phase(&name, 0, threads, Duration::from_millis(300))?;
        }
        h.doc()
            .set_section("toy-phases", &serde_json::json!({ "phases": 2 }));
        Ok(())
    }
}

struct ToyReport;

impl SectionOwner for ToyReport {
    fn key(&self) -> &'static str {
        "toy-phases"
    }
    fn html(&self, results: &[Labeled]) -> String {
        results
            .iter()
            .filter_map(|r| r.doc.sections.get("toy-phases"))
            .map(|s| {
                format!(
                    "<section id=\"toy-phases\"><h2>Toy phases</h2><p>{} phases</p></section>",
                    s["phases"]
                )
            })
            .collect()
    }
}

fn registry() -> Registry {
    Registry::default().with(&TOY).with(&phased::PHASED)
}

fn run(args: &[&str]) -> enginebench::Result<std::process::ExitCode> {
    let mut argv = vec!["enginebench"];
    argv.extend_from_slice(args);
    let cli = enginebench::cli::Cli::try_parse_from(argv).expect("valid command line");
    enginebench::run_with(cli, &registry())
}

fn result_of(results: &std::path::Path) -> ResultDoc {
    let dir = std::fs::read_dir(results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(dir.join("result.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_workload_registered_from_outside_gets_every_command() {
    let dir = tempdir();
    let db = dir.path().join("toy.db");
    let target = format!("sqlite://{}", db.display());
    assert!(registry().names().contains(&"toy-phases"));
    assert!(run(&["list"]).is_ok());

    // prepare, then a sweep on the shared runner.
    run(&["prepare", "toy", "--target", &target, "--toy-rows", "300"]).unwrap();
    let sweep = dir.path().join("sweep");
    let code = run(&[
        "run",
        "toy",
        "--target",
        &target,
        "--toy-rows",
        "300",
        "--threads",
        "1,2",
        "--warmup",
        "0",
        "--duration",
        "300ms",
        "--runs",
        "1",
        "--results-dir",
        sweep.to_str().unwrap(),
        "--format",
        "json",
    ])
    .unwrap();
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    let doc = result_of(&sweep);
    assert_eq!(doc.status, enginebench::report::Status::Complete);
    assert_eq!(doc.points.len(), 2, "one point per thread count");
    assert!(doc
        .points
        .iter()
        .all(|p| p.operation == "get" && p.runs[0].ops > 0));
    assert_eq!(doc.config["workload_options"]["toy_rows"], 300);
    assert_eq!(doc.target.engine, "sqlite-btree");

    // Phases of its own, its section in the result and on the page.
    let phases = dir.path().join("phases");
    run(&[
        "run",
        "toy-phases",
        "--target",
        &target,
        "--toy-rows",
        "300",
        "--results-dir",
        phases.to_str().unwrap(),
    ])
    .unwrap();
    let doc = result_of(&phases);
    assert_eq!(doc.status, enginebench::report::Status::Complete);
    let ops: Vec<&str> = doc.points.iter().map(|p| p.operation.as_str()).collect();
    assert_eq!(ops, ["phase1", "phase2"]);
    assert_eq!(doc.points[1].threads, 2);
    assert!(doc.points.iter().all(|p| p.runs[0].ops > 0));
    assert_eq!(doc.sections["toy-phases"]["phases"], 2);
    let folder = std::fs::read_dir(&phases)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let html = std::fs::read_to_string(folder.join("report.html")).unwrap();
    assert!(
        html.contains("<section id=\"toy-phases\">"),
        "the owner drew its section"
    );

    // cleanup through the same contract.
    run(&["cleanup", "toy", "--target", &target]).unwrap();
}

#[test]
fn a_registered_workload_has_its_own_help_and_options() {
    // Another workload's option is refused, naming whose it is.
    let e = run(&["run", "toy", "--warehouses", "2"]).unwrap_err();
    assert!(
        e.message.contains("--warehouses") && e.message.contains("tpcc"),
        "{}",
        e.message
    );
    let e = run(&["run", "micro-read", "--toy-rows", "2"]).unwrap_err();
    assert!(e.message.contains("the toy workloads"), "{}", e.message);
}

#[test]
fn a_workload_with_phases_of_its_own_measures_them_through_the_contract() {
    let dir = tempdir();
    let db = dir.path().join("phased.db");
    let target = format!("sqlite://{}", db.display());
    let results = dir.path().join("results");
    let code = run(&[
        "run",
        "phased",
        "--target",
        &target,
        "--results-dir",
        results.to_str().unwrap(),
        "--format",
        "json",
    ])
    .unwrap();
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    let doc = result_of(&results);
    assert_eq!(doc.status, enginebench::report::Status::Complete);
    // Both named phases landed in the result, each a point with its record.
    let ops: Vec<&str> = doc.points.iter().map(|p| p.operation.as_str()).collect();
    assert_eq!(ops, ["fill", "scan"]);
    let (fill, scan) = (&doc.points[0].runs[0], &doc.points[1].runs[0]);
    assert_eq!(fill.ops, phased::ROWS as u64);
    assert_eq!(fill.rows, phased::ROWS as u64);
    assert_eq!(scan.ops, phased::SCANS);
    assert!(fill.elapsed_s > 0.0 && scan.elapsed_s > 0.0);
    assert!(doc
        .points
        .iter()
        .all(|p| p.workload == "phased" && p.threads == 1));
    run(&["cleanup", "phased", "--target", &target]).unwrap();
}

/// A workload with phases of its own, written against the contract alone (its one import of
/// enginebench: `enginebench::contract`): `fill` inserts its rows, `scan` counts them, each a
/// phase the harness measures and records.
mod phased {
    use std::sync::Arc;
    use std::time::Instant;

    use futures_util::future::{FutureExt, LocalBoxFuture};

    use enginebench::contract::{
        Conn, DbError, Entry, Error, Harness, Listing, LoadStats, PrepareCx, ResolveCx, Result,
        Tally, Workload,
    };

    pub const ROWS: i64 = 200;
    pub const SCANS: u64 = 20;

    pub struct PhasedEntry;
    pub static PHASED: PhasedEntry = PhasedEntry;

    struct Phased;

    fn sql(e: DbError) -> Error {
        Error::run(e.message)
    }

    impl Entry for PhasedEntry {
        fn names(&self) -> Vec<&'static str> {
            vec!["phased"]
        }
        fn listing(&self) -> Listing {
            Listing {
                heading: "phased       two phases of its own (defined in the test crate)".into(),
                operations: vec![
                    ("fill".into(), "insert the rows".into()),
                    ("scan".into(), "count them".into()),
                ],
            }
        }
        fn label(&self) -> &'static str {
            "the phased workload"
        }
        fn args(&self, cmd: clap::Command) -> clap::Command {
            cmd
        }
        fn resolve(
            &self,
            _name: &str,
            _m: &clap::ArgMatches,
            _cx: &mut ResolveCx,
        ) -> Result<Arc<dyn Workload>> {
            Ok(Arc::new(Phased))
        }
    }

    impl Workload for Phased {
        fn name(&self) -> &str {
            "phased"
        }
        fn operations(&self) -> Vec<String> {
            vec!["fill".into(), "scan".into()]
        }
        fn main_table(&self) -> &str {
            ""
        }
        fn options(&self) -> serde_json::Value {
            serde_json::json!({})
        }
        fn prepare<'a>(&'a self, cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
            async move {
                cx.conn
                    .execute("DROP TABLE IF EXISTS phased_kv")
                    .await
                    .map_err(sql)?;
                cx.conn
                    .execute("CREATE TABLE phased_kv (k integer PRIMARY KEY, v integer)")
                    .await
                    .map_err(sql)?;
                Ok(Vec::new())
            }
            .boxed_local()
        }
        fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
            async move {
                conn.execute("DROP TABLE IF EXISTS phased_kv")
                    .await
                    .map_err(sql)
            }
            .boxed_local()
        }
        fn run(&self, h: &mut dyn Harness) -> Result<()> {
            h.measure("fill", 1, |h| {
                let rt = h.rt();
                let conn = h.conn()?;
                let mut t = Tally::default();
                for k in 0..ROWS {
                    let at = Instant::now();
                    let insert = format!("INSERT INTO phased_kv VALUES ({k}, {})", k * 3);
                    rt.block_on(conn.execute(&insert)).map_err(sql)?;
                    t.hist.record_us(at.elapsed().as_micros() as u64);
                    t.ops += 1;
                    t.rows += 1;
                    t.statements += 1;
                }
                Ok(t)
            })?;
            h.measure("scan", 1, |h| {
                let rt = h.rt();
                let conn = h.conn()?;
                let mut t = Tally::default();
                for _ in 0..SCANS {
                    let at = Instant::now();
                    let n = rt
                        .block_on(conn.query_one("SELECT COUNT(*) FROM phased_kv"))
                        .map_err(sql)?;
                    assert_eq!(n.as_deref(), Some(ROWS.to_string().as_str()));
                    t.hist.record_us(at.elapsed().as_micros() as u64);
                    t.ops += 1;
                    t.rows += ROWS as u64;
                    t.statements += 1;
                }
                Ok(t)
            })?;
            Ok(())
        }
    }
}
