//! The registry: every workload a command can find by name. It stands on top, beside the
//! commands: nothing below it names a workload. Adding a built-in workload is one line in
//! `builtins()` (docs/architecture.md).

use clap::Args;

use crate::contract::parse::{self, Parsed};
use crate::contract::Entry;
use crate::error::{Error, Result};
use crate::report::SectionOwner;

/// The built-in workloads, in `list` order.
pub fn builtins() -> Vec<&'static dyn Entry> {
    vec![
        &crate::workload::micro_read::ENTRY,
        &crate::workload::oltp::ENTRY,
        &crate::workload::tpcc::ENTRY,
        &crate::workload::linkbench::ENTRY,
        &crate::workload::custom::ENTRY,
        &crate::workload::iibench::ENTRY,
        &crate::workload::compression::ENTRY,
        &crate::workload::schema_change::ENTRY,
        &crate::workload::sqlbench::ENTRY,
        &crate::workload::round_trip::ENTRY,
    ]
}

/// The workloads a command can find by name: the built-in ones, and any a program that embeds
/// enginebench adds (`Registry::with`).
#[derive(Clone)]
pub struct Registry {
    entries: Vec<&'static dyn Entry>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            entries: builtins(),
        }
    }
}

impl Registry {
    /// The built-in workloads plus `entry`. A name two entries answer to is refused by
    /// `check` (which `run_with` calls before any command), not taken from the first.
    pub fn with(mut self, entry: &'static dyn Entry) -> Self {
        self.entries.push(entry);
        self
    }
    /// Refuse a name that two workloads answer to: the registry would otherwise find the
    /// first and hide the second without a word.
    pub fn check(&self) -> Result<()> {
        let names = self.names();
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                let labels: Vec<&str> = self
                    .entries
                    .iter()
                    .filter(|e| e.names().contains(n))
                    .map(|e| e.label())
                    .collect();
                return Err(Error::usage(format!(
                    "two workloads are named {n} ({}): give the added one another name",
                    labels.join(" and ")
                )));
            }
        }
        Ok(())
    }
    pub fn entries(&self) -> &[&'static dyn Entry] {
        &self.entries
    }
    /// Every workload name, in `list` order.
    pub fn names(&self) -> Vec<&'static str> {
        parse::names(&self.entries)
    }
    pub fn find(&self, name: &str) -> Option<&'static dyn Entry> {
        parse::find(&self.entries, name)
    }
    /// The report sections of every workload that has some.
    pub fn owners(&self) -> Vec<&'static dyn SectionOwner> {
        self.entries.iter().filter_map(|e| e.report()).collect()
    }
}

/// The command line of `enginebench`, with the lists its help gives taken from the workloads
/// of `reg`: which workloads `check` checks, and the tables `report --table` can print.
pub fn command(reg: &Registry) -> clap::Command {
    use clap::CommandFactory;
    let checks: Vec<String> = reg
        .entries()
        .iter()
        .filter_map(|e| {
            Some(format!(
                "{}: {}",
                e.names().join(", "),
                e.check_conditions()?
            ))
        })
        .collect();
    let tables = crate::report::csv::table_names(&reg.owners()).join(", ");
    crate::cli::Cli::command()
        .mut_subcommand("check", |c| {
            c.about(format!(
                "Check a loaded workload's data for consistency ({})",
                checks.join("; ")
            ))
        })
        .mut_subcommand("report", |c| {
            c.mut_arg("table", |a| {
                a.help(format!(
                    "With --format csv: one of the report's tables instead of the runs ({tables})"
                ))
            })
        })
}

/// Parse `enginebench`'s arguments (`std::env::args`) with the help of `command`.
pub fn parse_cli(reg: &Registry) -> std::result::Result<crate::cli::Cli, clap::Error> {
    use clap::FromArgMatches;
    let m = command(reg).try_get_matches()?;
    crate::cli::Cli::from_arg_matches(&m)
}

/// Parse `enginebench SUB WORKLOAD [OPTIONS]` with the workloads of `reg`: the workload's own
/// options and the common ones `A`. `Ok(None)`: help was asked for and printed.
pub fn parse_workload<A: Args + clap::FromArgMatches>(
    reg: &Registry,
    sub: &str,
    argv: &[String],
) -> Result<Option<Parsed<A>>> {
    parse::parse_workload(&reg.entries, sub, argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words between `before` and `after` on the lines of `text` (`pub mod NAME;`).
    fn idents<'a>(text: &'a str, before: &str, after: &str) -> Vec<&'a str> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix(before)?.strip_suffix(after))
            .collect()
    }

    /// Every folder of `src/workload` with a `mod.rs` is declared in `src/workload/mod.rs`,
    /// and every workload folder (one with an `entry.rs`; shared parts such as `sbtest` have
    /// none) is registered in `builtins()`, read from the files at test time: a new folder
    /// that misses either line fails here rather than compiling into nothing.
    #[test]
    fn every_folder_is_declared_and_registered() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let with = |file: &str| {
            let mut v: Vec<String> = std::fs::read_dir(root.join("src/workload"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.join(file).is_file())
                .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
                .collect();
            v.sort();
            v
        };
        let (modules, folders) = (with("mod.rs"), with("entry.rs"));
        assert!(folders.len() >= 10, "{folders:?}");
        let decl = std::fs::read_to_string(root.join("src/workload/mod.rs")).unwrap();
        let reg = std::fs::read_to_string(root.join("src/registry.rs")).unwrap();
        let declared = idents(&decl, "pub mod ", ";");
        let mut registered = idents(&reg, "&crate::workload::", "::ENTRY,");
        for f in &modules {
            assert!(
                declared.contains(&f.as_str()),
                "src/workload/{f}/ has no `pub mod {f};` in src/workload/mod.rs"
            );
        }
        for f in &folders {
            assert!(
                modules.contains(f),
                "src/workload/{f}/ has an entry.rs but no mod.rs"
            );
            assert!(
                registered.contains(&f.as_str()),
                "src/workload/{f}/ has no `&crate::workload::{f}::ENTRY,` in registry::builtins()"
            );
        }
        registered.sort();
        assert_eq!(
            registered, folders,
            "builtins() names a folder that is not there"
        );
        assert_eq!(builtins().len(), folders.len());
    }

    /// The built-ins answer to distinct names; a second workload with a taken name is refused.
    #[test]
    fn duplicate_names_refused() {
        Registry::default().check().unwrap();
        let twice = Registry::default().with(&crate::workload::round_trip::ENTRY);
        let e = twice.check().unwrap_err();
        assert!(
            e.message.contains("two workloads are named round-trip"),
            "{e}"
        );
    }
}

// The config's tests resolve whole command lines, which needs the registry.
#[cfg(test)]
mod config_tests {
    use crate::cli::RunArgs;
    use crate::config::*;
    use crate::error::Result;

    fn resolved(args: &[&str]) -> Result<RunConfig> {
        let mut argv = vec!["enginebench", "run"];
        argv.extend_from_slice(args);
        let reg = super::Registry::default();
        let argv: Vec<String> = argv[2..].iter().map(|s| s.to_string()).collect();
        let p = super::parse_workload::<RunArgs>(&reg, "run", &argv)?.expect("not help");
        Ok(crate::harness::resolve_run(&p.common, p.entry, &p.name, &p.matches)?.0)
    }

    /// A fleet numbers its connections across the shards, so that over a cluster's nodes it
    /// spreads as one process with all of them would: 3 shards of 2 connections over 3 nodes
    /// put 2 on each node (numbered from 0 in every shard, all 6 would start on node 0).
    #[test]
    fn fleet_connections_spread_over_nodes() {
        use crate::contract::Access;
        use crate::runner::node_for;
        let url = "mysql://u@a:1,b:2,c:3/db";
        let mut per_node = [0; 3];
        for i in 0..3 {
            let shard = format!("{i}/3");
            let cfg = resolved(&[
                "oltp_point_select",
                "--target",
                url,
                "--shard",
                &shard,
                "--run-id",
                "r",
            ])
            .unwrap();
            assert_eq!(cfg.first_worker(2), i * 2);
            for w in 0..2 {
                let t = &cfg.target_spec;
                per_node[node_for(cfg.first_worker(2) + w, 3, t.read, Access::ReadOnly)] += 1;
            }
        }
        assert_eq!(per_node, [2, 2, 2]);
        let alone = resolved(&["oltp_point_select", "--target", url]).unwrap();
        assert_eq!(alone.first_worker(8), 0);
    }

    /// Client loops: 2 for PostgreSQL, 1 otherwise, unless --client-threads says; 0 refused.
    #[test]
    fn client_threads_default_per_dbms() {
        let pg = [
            "oltp_point_select",
            "--target",
            "postgres://u@127.0.0.1:5432/db",
        ];
        let my = [
            "oltp_point_select",
            "--target",
            "mysql://u@127.0.0.1:3306/db",
        ];
        assert_eq!(resolved(&pg).unwrap().client_threads, 2);
        assert_eq!(resolved(&my).unwrap().client_threads, 1);
        assert_eq!(resolved(&["oltp_point_select"]).unwrap().client_threads, 1);
        let mut pg1 = pg.to_vec();
        pg1.extend(["--client-threads", "1"]);
        assert_eq!(resolved(&pg1).unwrap().client_threads, 1);
        let mut my3 = my.to_vec();
        my3.extend(["--client-threads", "3"]);
        assert_eq!(resolved(&my3).unwrap().client_threads, 3);
        let mut zero = my.to_vec();
        zero.extend(["--client-threads", "0"]);
        assert!(resolved(&zero).is_err());
    }

    #[test]
    fn pin_lists() {
        let p = Pin::parse("client=0,server=1").unwrap();
        assert_eq!(p.client_cpus, Some(vec![0]));
        assert_eq!(p.server_cpus, Some(vec![1]));
        let p = Pin::parse("server=0").unwrap();
        assert_eq!((p.client_cpus, p.server_cpus), (None, Some(vec![0])));
        assert!(Pin::parse("0,1").is_err());
        assert!(Pin::parse("cpu=1").is_err());
        assert!(Pin::parse("client=99999").is_err());
    }
}
