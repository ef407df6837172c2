//! linkbench in the registry: its options, and the contract that `run`, `prepare`, `cleanup`
//! and `check` call.

use std::sync::Arc;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};

use super::{LinkbenchDriver, Props, Spec, DEFAULT_REQUESTERS, KINDS, NAME};
use crate::cli::Method;
use crate::contract::args;
use crate::contract::{Checked, Entry, Listing, PrepareCx, ResolveCx, Workload};
use crate::contract::{Session, SessionConfig};
use crate::db::{Conn, TargetSpec};
use crate::error::{Error, Result};
use crate::model::LoadStats;
use crate::runner;
use crate::units;

/// linkbench's own options.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "linkbench options")]
pub struct LinkbenchArgs {
    /// linkbench: LinkBench's maxid1, the graph size: nodes 1..maxid1-1 (k/M suffixes
    /// allowed; default 100001 with --method quick, 10000001 with --method classic).
    #[arg(long, value_name = "N")]
    pub maxid1: Option<String>,

    /// linkbench: a workload file of LinkBench `key = value` settings (its .properties files
    /// or flat TOML) over the built-in defaults of FBWorkload.properties; docs/linkbench.md.
    #[arg(long, value_name = "FILE")]
    pub linkbench_config: Option<String>,

    /// linkbench: requesters (connections), LinkBench's name for --threads [default: 64, as
    /// in the MariaDB-vs-MySQL report].
    // conflicts_with = "threads" is added in `Entry::args` when the command has --threads
    // (prepare, cleanup and check do not: clap refuses a conflict with an unknown argument).
    #[arg(long, value_name = "N")]
    pub requesters: Option<usize>,
}

fn flag<T>(name: &str, r: std::result::Result<T, String>) -> Result<T> {
    r.map_err(|e| Error::usage(format!("{name}: {e}")))
}

pub struct LinkbenchEntry;

/// The registry's line.
pub static ENTRY: LinkbenchEntry = LinkbenchEntry;

impl Entry for LinkbenchEntry {
    fn names(&self) -> Vec<&'static str> {
        vec![NAME]
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "linkbench    LinkBench: a social graph of --maxid1 nodes and the 10 request types in its production mix".into(),
            operations: vec![("requests".into(), KINDS.join(", "))],
        }
    }
    fn label(&self) -> &'static str {
        "the linkbench workload"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        let has_threads = cmd.get_arguments().any(|a| a.get_id() == "threads");
        let cmd = LinkbenchArgs::augment_args(cmd);
        if has_threads {
            cmd.mut_arg("requesters", |a| a.conflicts_with("threads"))
        } else {
            cmd
        }
    }
    /// LinkBench's defaults, a workload file over them, then --maxid1; requesters, maxtime and
    /// warmup_time may come from the workload file when the flags are not given.
    fn resolve(
        &self,
        _name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        let a: LinkbenchArgs = args::of(m)?;
        let config = a.linkbench_config.as_deref();
        let (props, file_cli) = match config {
            Some(f) => {
                let text = std::fs::read_to_string(f).map_err(|e| {
                    Error::usage(format!("--linkbench-config: cannot read {f}: {e}"))
                })?;
                super::props::parse(&text, f)?
            }
            None => (Props::default(), Vec::new()),
        };
        let from_file = file_cli
            .iter()
            .find(|(k, _)| k == "maxid1")
            .map(|(_, v)| v.as_str());
        let maxid1 = match a.maxid1.as_deref().or(from_file) {
            Some(s) => flag("--maxid1", units::count(s))?,
            None => match cx.method {
                // FBWorkload.properties' default graph (about 10 GB in LinkBench's words).
                Method::Classic => 10_000_001,
                Method::Quick => 100_001,
            },
        };
        let mut spec = Spec::new(maxid1, cx.seed, props, config.map(str::to_string))?;
        spec.file_settings = file_cli;
        if let Some(s) = cx.shard {
            spec.set_shard(s)?;
        }

        // Its size is maxid1.
        cx.shape.size = spec.maxid1;
        let setting = |k: &str| spec.setting(k);
        if !cx.shape.given.threads {
            let n = match (a.requesters, setting("requesters")) {
                (Some(n), _) => n,
                (None, Some(v)) => v.parse::<usize>().map_err(|_| {
                    Error::usage(format!(
                        "--linkbench-config: requesters = '{v}' is not a count"
                    ))
                })?,
                (None, None) => DEFAULT_REQUESTERS,
            };
            if n == 0 || n > 10_000 {
                return Err(Error::usage("--requesters: 1 to 10000"));
            }
            cx.shape.threads = vec![n];
        }
        if let (false, Some(v)) = (cx.shape.given.duration, setting("maxtime")) {
            cx.shape.duration = flag("maxtime (--linkbench-config)", units::duration(v))?;
        }
        if let (false, Some(v)) = (cx.shape.given.warmup, setting("warmup_time")) {
            cx.shape.warmup = flag("warmup_time (--linkbench-config)", units::duration(v))?;
        }
        if setting("requests").is_some() {
            return Err(Error::usage(
                "--linkbench-config: the requests key is not read; give --requests N (requests over all requesters) or set maxtime",
            ));
        }
        Ok(Arc::new(spec))
    }
    fn check_conditions(&self) -> Option<&'static str> {
        Some("counttable equals the visible links per (id1, link_type)")
    }
    fn report(&self) -> Option<&'static dyn crate::report::SectionOwner> {
        Some(&super::Report)
    }
}

impl Workload for Spec {
    fn name(&self) -> &str {
        NAME
    }
    /// LinkBench's request phase: the ten request types, drawn per request.
    fn operations(&self) -> Vec<String> {
        vec!["requests".to_string()]
    }
    fn kinds(&self) -> Vec<&'static str> {
        KINDS.to_vec()
    }
    fn main_table(&self) -> &str {
        "linktable"
    }
    fn options(&self) -> serde_json::Value {
        Spec::options(self)
    }
    fn partition(&self) -> Option<String> {
        let (lo, hi) = self.dists.ids?;
        Some(format!(
            "id1 ranges: each shard's requests pick their id1 and node ids in its own block of the nodes (here {lo}..{hi}), from LinkBench's distributions restricted to the block (redrawn until inside), so no two shards write the same links, counts or nodes; added nodes take their ids from the server (auto-increment)"
        ))
    }
    fn load_partition(&self) -> Option<String> {
        Some("each shard loads a block of the node ids (nodetable, their counttable rows) and a block of the links (in id1 order)".into())
    }
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        Spec::notes(self)
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
    /// counttable against the visible links (at most 20 disagreeing pairs listed).
    fn check<'a>(&'a self, conn: &'a mut Conn) -> Option<LocalBoxFuture<'a, Result<Checked>>> {
        Some(
            async move {
                let r = super::check::run(conn).await?;
                let summary = if r.mismatches.is_empty() {
                    format!(
                        "linkbench consistency: counttable equals the visible links for all {} (id1, link_type) pairs ({} visible links)",
                        r.pairs, r.visible_links
                    )
                } else {
                    format!(
                        "linkbench consistency: {} (id1, link_type) pair(s) disagree with counttable (up to 20 listed above)",
                        r.mismatches.len()
                    )
                };
                Ok(Checked {
                    failures: r
                        .mismatches
                        .iter()
                        .take(20)
                        .map(|(id1, t, n, c)| {
                            format!(
                                "id1 {id1} link_type {t}: {n} visible link(s) but counttable says {c}"
                            )
                        })
                        .collect(),
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
        runner::start(target, cfg, move |w| {
            LinkbenchDriver::new(&spec, w, threads)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{CheckArgs, PrepareArgs};
    use crate::config::RunConfig;
    use crate::contract::parse::parse_workload;
    use crate::contract::Entry;
    use crate::error::Result;

    /// Only this workload: its tests do not need the registry (a floor above).
    fn registry() -> [&'static dyn Entry; 1] {
        [&super::ENTRY]
    }

    fn argv(args: &[&str]) -> Vec<String> {
        std::iter::once("linkbench")
            .chain(args.iter().copied())
            .map(str::to_string)
            .collect()
    }

    fn resolved(args: &[&str]) -> Result<RunConfig> {
        crate::testing::resolved_run(&super::ENTRY, "linkbench", args)
    }

    #[test]
    fn requesters_size_and_workload_file() {
        let c = resolved(&[]).unwrap();
        assert_eq!(c.threads, vec![super::DEFAULT_REQUESTERS]);
        assert_eq!(c.table_size, 100_001);
        let c = resolved(&["--requesters", "8", "--maxid1", "1k"]).unwrap();
        assert_eq!((c.threads, c.table_size), (vec![8], 1000));
        let c = resolved(&["--threads", "1,2"]).unwrap();
        assert_eq!(c.threads, vec![1, 2]);
        assert!(resolved(&["--threads", "2", "--requesters", "8"]).is_err());
        assert!(resolved(&["--requesters", "0"]).is_err());

        let dir = std::env::temp_dir().join(format!("eb-lb-entry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("w.properties");
        std::fs::write(
            &f,
            "requesters = 3\nmaxtime = 7\nwarmup_time = 2\nmaxid1 = 501\n",
        )
        .unwrap();
        let f = f.to_str().unwrap();
        let c = resolved(&["--linkbench-config", f]).unwrap();
        assert_eq!(c.threads, vec![3]);
        assert_eq!((c.duration_s, c.warmup_s, c.table_size), (7.0, 2.0, 501));
        let c = resolved(&["--linkbench-config", f, "--duration", "3s"]).unwrap();
        assert_eq!((c.duration_s, c.warmup_s), (3.0, 2.0));
        std::fs::write(dir.join("r.properties"), "requests = 10\n").unwrap();
        let r = dir.join("r.properties");
        assert!(resolved(&["--linkbench-config", r.to_str().unwrap()]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// prepare and check have no --threads: --requesters carries no conflict there.
    #[test]
    fn commands_without_threads_parse() {
        let reg = registry();
        assert!(
            parse_workload::<PrepareArgs>(&reg, "prepare", &argv(&["--maxid1", "100"]))
                .unwrap()
                .is_some()
        );
        assert!(parse_workload::<CheckArgs>(&reg, "check", &argv(&[]))
            .unwrap()
            .is_some());
    }
}
