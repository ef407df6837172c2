//! tpcc in the registry: its options, and the contract that `run`, `prepare`, `cleanup` and
//! `check` call.

use std::sync::Arc;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};

use super::report::{RunSection, TPM_C, TPM_TOTAL};
use super::{constraints, Isolation, Spec, TpccDriver, DEFAULT_WEIGHTS, KINDS, NAME, NEW_ORDER};
use crate::cli::Method;
use crate::contract::args;
use crate::contract::{Checked, Entry, Listing, PrepareCx, ResolveCx, Workload};
use crate::contract::{Session, SessionConfig};
use crate::db::{Conn, TargetSpec};
use crate::error::{Error, Result};
use crate::model::{KindTick, LoadStats, RunRecord};
use crate::runner;

/// tpcc's own options.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "tpcc options")]
pub struct TpccArgs {
    /// tpcc: warehouses to load (default 1 with --method quick, 10 with --method classic).
    #[arg(long, value_name = "N")]
    pub warehouses: Option<u32>,

    /// tpcc: the transaction mix as five weights for NewOrder, Payment, OrderStatus, Delivery,
    /// StockLevel [default: 45,43,4,4,4].
    #[arg(long, value_name = "LIST")]
    pub weights: Option<String>,

    /// tpcc: transaction isolation set on every connection: read-committed, repeatable-read or
    /// serializable [default: the server's].
    #[arg(long, value_name = "LEVEL")]
    pub isolation: Option<String>,

    /// tpcc: wait TPC-C 5.2.5's keying and think times between transactions (outside the
    /// latency), like the spec's terminals; use 10 terminals per warehouse.
    #[arg(long)]
    pub spec_timing: bool,

    /// tpcc: N emulated terminals sharing the run's connections (--threads M, at most N):
    /// terminal k runs on connection k mod M, keeps its own home warehouse, district and
    /// keying/think times, and the time it waits for its busy connection counts in its
    /// response time, like terminals behind a TP monitor [default: one terminal per
    /// connection].
    #[arg(long, value_name = "N")]
    pub terminals: Option<u32>,

    /// tpcc: load the nine tables at once, biggest first, each by one loader connection in one
    /// transaction (MariaDB's bulk path), or one by one, each split over every loader
    /// connection.
    #[arg(long, value_enum, value_name = "ORDER", default_value_t = crate::load::TableOrder::AtOnce)]
    pub load_tables: crate::load::TableOrder,

    /// tpcc: run each transaction as one CALL of a stored procedure created at prepare time
    /// from the same statements (MariaDB/MySQL only), as HammerDB does; recorded and reported
    /// as its own mode.
    #[arg(long)]
    pub procedures: bool,
}

/// TPC-C warehouses by method when --warehouses is not given.
fn default_warehouses(m: Method) -> u32 {
    match m {
        Method::Classic => 10,
        Method::Quick => 1,
    }
}

pub struct TpccEntry;

/// The registry's line.
pub static ENTRY: TpccEntry = TpccEntry;

impl Entry for TpccEntry {
    fn names(&self) -> Vec<&'static str> {
        vec![NAME]
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "tpcc         TPC-C: the five transactions in the 45/43/4/4/4 mix (no keying or think times)".into(),
            operations: vec![("mix".into(), KINDS.join(", "))],
        }
    }
    fn label(&self) -> &'static str {
        "the tpcc workload"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        TpccArgs::augment_args(cmd)
    }
    fn resolve(
        &self,
        _name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        let a: TpccArgs = args::of(m)?;
        let warehouses = a.warehouses.unwrap_or(default_warehouses(cx.method));
        if warehouses == 0 || warehouses > 10_000 {
            return Err(Error::usage(format!(
                "--warehouses: {warehouses} is out of range (1 to 10000)"
            )));
        }
        let weights = match &a.weights {
            Some(w) => super::parse_weights(w)?,
            None => DEFAULT_WEIGHTS,
        };
        let isolation = match &a.isolation {
            Some(i) => Some(Isolation::parse(i, cx.dbms)?),
            None => None,
        };
        if let Some(sh) = cx.shard {
            sh.block(warehouses as u64, "--warehouses")?;
        }
        if let Some(n) = a.terminals {
            check_terminals(n, &cx.shape)?;
        }
        if a.procedures && cx.dbms != crate::db::Dbms::Mysql {
            return Err(Error::usage(format!(
                "--procedures: stored procedures are built for MariaDB (and MySQL) targets only, not {}; leave it out",
                cx.dbms.name()
            )));
        }
        // tpcc's size is its number of warehouses.
        cx.shape.size = warehouses as u64;
        Ok(Arc::new(Spec {
            warehouses,
            seed: cx.seed,
            weights,
            isolation,
            spec_timing: a.spec_timing,
            shard: cx.shard,
            terminals: a.terminals,
            load_tables: a.load_tables,
            procedures: a.procedures,
        }))
    }
    fn check_conditions(&self) -> Option<&'static str> {
        Some("TPC-C 3.3.2.1 to 3.3.2.4")
    }
    fn report(&self) -> Option<&'static dyn crate::report::SectionOwner> {
        Some(&super::Report)
    }
}

/// `--terminals N` over the run's connection counts: every connection serves at least one
/// terminal, and the terminals' own cycle paces them (not an open-loop rate).
fn check_terminals(n: u32, shape: &crate::contract::Shape) -> Result<()> {
    if n == 0 {
        return Err(Error::usage(
            "--terminals: 0 terminals; give at least 1 (and at least as many as --threads)",
        ));
    }
    if shape.given.rate {
        return Err(Error::usage(
            "--terminals: with --rate a fixed rate paces the connections, not terminals; leave out one of them",
        ));
    }
    if let Some(m) = shape.threads.iter().find(|m| **m > n as usize) {
        let whose = if shape.given.threads {
            "of --threads"
        } else {
            "of the default --threads"
        };
        return Err(Error::usage(format!(
            "--terminals {n}: fewer terminals than the {m} connections {whose}; every connection serves at least one terminal, so give --threads {n} or fewer"
        )));
    }
    Ok(())
}

/// TPC-C: the run's response-time and mix conditions, from its per-type records.
fn check_constraints(run: &RunRecord, weights: &[u32; 5]) -> constraints::Constraints {
    let figures = std::array::from_fn(|k| {
        run.by_kind
            .get(KINDS[k])
            .map_or_else(Default::default, |r| constraints::KindFigures {
                ops: r.ops,
                p90_us: r.latency_us.p90_us,
            })
    });
    constraints::check_spec(&figures, weights)
}

impl Workload for Spec {
    fn name(&self) -> &str {
        NAME
    }
    /// One operation: the mix of the five transactions.
    fn operations(&self) -> Vec<String> {
        vec!["mix".to_string()]
    }
    fn kinds(&self) -> Vec<&'static str> {
        KINDS.to_vec()
    }
    fn main_table(&self) -> &str {
        "stock"
    }
    fn options(&self) -> serde_json::Value {
        Spec::options(self)
    }
    fn partition(&self) -> Option<String> {
        let (lo, hi) = self.homes();
        Some(format!(
            "home warehouses: each shard's terminals have theirs in its own block (here {lo}..{hi}); remote warehouses of Payment and NewOrder are drawn from all, as TPC-C says"
        ))
    }
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        Spec::notes(self)
    }
    fn load_partition(&self) -> Option<String> {
        Some("each shard loads a block of whole warehouses (their districts, customers, history, orders, order lines and stock) and a block of the 100,000 items".into())
    }
    fn shard_keys(&self) -> Option<crate::contract::shard::ShardKeys> {
        Some(super::shard_keys())
    }
    fn prepare<'a>(&'a self, cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
        super::prepare(cx.conn, cx.target, self, cx.engine, cx.load, cx.fleet).boxed_local()
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        super::cleanup(conn).boxed_local()
    }
    /// The consistency conditions 3.3.2.1 to 3.3.2.4.
    fn check<'a>(&'a self, conn: &'a mut Conn) -> Option<LocalBoxFuture<'a, Result<Checked>>> {
        Some(
            async move {
                let r = super::check::run(conn).await?;
                let summary = if r.failures.is_empty() {
                    format!(
                        "tpcc consistency: conditions 3.3.2.1 to 3.3.2.4 hold for {} warehouse(s), {} district(s)",
                        r.warehouses, r.districts
                    )
                } else {
                    format!(
                        "tpcc consistency: {} condition(s) failed (listed above)",
                        r.failures.len()
                    )
                };
                Ok(Checked {
                    failures: r.failures.iter().map(|f| f.to_string()).collect(),
                    summary,
                })
            }
            .boxed_local(),
        )
    }
    fn start(
        &self,
        _op: usize,
        threads: usize,
        target: &TargetSpec,
        cfg: &SessionConfig,
    ) -> Result<Box<dyn Session>> {
        let spec = self.clone();
        match self.terminals {
            None => runner::start(target, cfg, move |w| TpccDriver::new(&spec, w, threads)),
            // Terminal k on connection k mod threads (resolve checked threads <= n).
            Some(n) => runner::start(target, cfg, move |w| {
                TpccDriver::shared(&spec, (w..n as usize).step_by(threads), n as usize)
            }),
        }
    }
    /// tpmC (committed NewOrders per minute), tpmTotal (finished transactions per minute) and
    /// the constraints of TPC-C 5.2.5.3 and 5.2.3.
    fn derive(&self, threads: usize, run: &mut RunRecord) -> Vec<String> {
        let per_min = 60.0 / run.elapsed_s.max(1e-9);
        let committed = run
            .by_kind
            .get(KINDS[NEW_ORDER as usize])
            .map_or(0, |k| k.ops - k.rolled_back);
        let c = committed as f64 * per_min;
        let t = run.ops as f64 * per_min;
        run.figures.insert(TPM_C.into(), c);
        run.figures.insert(TPM_TOTAL.into(), t);
        let k = check_constraints(run, &self.weights);
        let summary = constraints::summary_line(&k);
        let terminals = self.terminals.map_or(threads, |n| n as usize);
        run.set_section(
            NAME,
            &RunSection {
                constraints: Some(k),
                terminals: Some(terminals as u64),
                connections: Some(threads as u64),
            },
        );
        let r = run.run;
        let extra: String = run
            .workload_counters
            .iter()
            .map(|(k, v)| format!("  {k} {v}"))
            .collect();
        let mut over = match self.terminals {
            Some(n) => format!(" ({n} terminals)"),
            None => String::new(),
        };
        if self.procedures {
            over.push_str(" (stored procedures)");
        }
        vec![
            format!("tpcc threads {threads}{over} run {r}: tpmC {c:.0}  tpmTotal {t:.0}{extra}"),
            format!("tpcc threads {threads} run {r}: constraints {summary}"),
        ]
    }
    /// tpmC of the interval: its committed NewOrders per minute.
    fn interval_figures(&self, kinds: &[KindTick], len_s: f64) -> Vec<(String, f64)> {
        if len_s <= 0.0 {
            return Vec::new();
        }
        let no = kinds.get(NEW_ORDER as usize).copied().unwrap_or_default();
        vec![(
            TPM_C.to_string(),
            (no.ops - no.rolled_back) as f64 * 60.0 / len_s,
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunConfig;
    use crate::model::KindRecord;

    fn resolved(args: &[&str]) -> Result<RunConfig> {
        // Only this workload: its tests do not need the registry (a floor above).
        crate::testing::resolved_run(&super::ENTRY, "tpcc", args)
    }

    #[test]
    fn warehouses_weights_isolation() {
        assert_eq!(resolved(&[]).unwrap().table_size, 1);
        assert_eq!(resolved(&["--method", "classic"]).unwrap().table_size, 10);
        assert_eq!(resolved(&["--warehouses", "3"]).unwrap().table_size, 3);
        assert!(resolved(&["--warehouses", "0"]).is_err());
        assert!(resolved(&["--warehouses", "10001"]).is_err());
        assert!(resolved(&["--weights", "1,2,3"]).is_err());
        // The default target is SQLite: always serializable.
        assert!(resolved(&["--isolation", "read-committed"]).is_err());
        assert!(resolved(&["--isolation", "serializable"]).is_ok());
        assert!(resolved(&["--table-size", "10"]).is_err());
        // Stored procedures only on MariaDB/MySQL (the default target is SQLite).
        let e = resolved(&["--procedures"]).unwrap_err();
        assert!(e.to_string().contains("MariaDB"), "{e}");
    }

    #[test]
    fn terminals_over_connections() {
        let ok = resolved(&["--terminals", "10", "--threads", "2,10"]).unwrap();
        assert_eq!(ok.workload_options["terminals"], 10);
        assert!(resolved(&["--terminals", "0", "--threads", "1"]).is_err());
        let e = resolved(&["--terminals", "10", "--threads", "4,20"]).unwrap_err();
        assert!(e.to_string().contains("--threads 10 or fewer"), "{e}");
        // The default thread counts (1, 4, 16) do not fit 10 terminals either.
        let e = resolved(&["--terminals", "10"]).unwrap_err();
        assert!(e.to_string().contains("default --threads"), "{e}");
        assert!(resolved(&["--terminals", "10", "--threads", "2", "--rate", "100"]).is_err());
    }

    #[test]
    fn derived_figures_and_lines() {
        let spec = Spec {
            warehouses: 1,
            seed: 1,
            weights: DEFAULT_WEIGHTS,
            isolation: None,
            spec_timing: false,
            shard: None,
            terminals: None,
            load_tables: Default::default(),
            procedures: false,
        };
        let mut run = RunRecord {
            run: 2,
            ops: 300,
            elapsed_s: 30.0,
            ..Default::default()
        };
        run.by_kind.insert(
            "NewOrder".into(),
            KindRecord {
                ops: 110,
                rolled_back: 10,
                ..Default::default()
            },
        );
        run.workload_counters.insert("retries".into(), 4);
        let lines = spec.derive(8, &mut run);
        assert_eq!(run.figure(TPM_C), Some(200.0));
        assert_eq!(run.figure(TPM_TOTAL), Some(600.0));
        assert!(super::super::constraints_of(&run).is_some());
        assert_eq!(
            lines[0],
            "tpcc threads 8 run 2: tpmC 200  tpmTotal 600  retries 4"
        );
        assert!(lines[1].starts_with("tpcc threads 8 run 2: constraints "));
        let ticks = [KindTick {
            ops: 21,
            rolled_back: 1,
        }];
        assert_eq!(
            spec.interval_figures(&ticks, 10.0),
            vec![(TPM_C.to_string(), 120.0)]
        );
    }
}
