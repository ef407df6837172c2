//! What the unit tests of the workloads need from above them: a `run` command line resolved
//! as `run` resolves it (the common options, then the workload's own, which may set the run's
//! shape), with one workload's entry alone and no registry. A workload's code reaches the
//! harness through the contract only; its tests come here rather than to the harness.

use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::contract::parse::parse_workload;
use crate::contract::Entry;
use crate::error::Result;

/// `run NAME ARGS...` resolved with `entry` alone: the run's config.
pub fn resolved_run(entry: &'static dyn Entry, name: &str, args: &[&str]) -> Result<RunConfig> {
    let reg = [entry];
    let argv: Vec<String> = std::iter::once(name)
        .chain(args.iter().copied())
        .map(str::to_string)
        .collect();
    let p = parse_workload::<RunArgs>(&reg, "run", &argv)?.expect("not help");
    Ok(crate::harness::resolve_run(&p.common, p.entry, &p.name, &p.matches)?.0)
}
