//! enginebench: a storage-engine benchmark lab. Data flows one way:
//! cli → config → (workload, db) → harness → runner → measure → report.

pub mod catalog;
pub mod catalog_commands;
pub mod cli;
pub mod commands;
pub mod config;
pub mod contract;
pub mod db;
pub mod error;
pub mod files;
pub mod fleet;
#[doc(hidden)]
pub mod fuzz;
pub mod harness;
pub mod interrupt;
pub mod live;
pub mod load;
pub mod measure;
pub mod model;
pub mod registry;
pub mod report;
pub mod rng;
pub mod runner;
pub mod server;
pub mod suite;
#[cfg(test)]
mod testing;
pub mod units;
pub mod workload;

use std::process::ExitCode;

pub use error::{Error, Result};

/// Run one parsed command line with the built-in workloads.
pub fn run(cli: cli::Cli) -> Result<ExitCode> {
    run_with(cli, &registry::Registry::default())
}

/// Run one parsed command line with the workloads of `reg` (the built-in ones and any a
/// program embedding enginebench registered).
pub fn run_with(cli: cli::Cli, reg: &registry::Registry) -> Result<ExitCode> {
    reg.check()?;
    match &cli.command {
        cli::Command::Prepare(a) => commands::prepare(a, reg),
        cli::Command::Run(a) => commands::run(a, reg),
        cli::Command::Cleanup(a) => commands::cleanup(a, reg),
        cli::Command::List => commands::list(reg),
        cli::Command::Report(a) => commands::report(a, reg),
        cli::Command::Compare(a) => commands::compare(a, reg),
        cli::Command::Merge(a) => commands::merge(a, reg),
        cli::Command::Server(a) => commands::server(a),
        cli::Command::Suite(a) => suite::run(a, reg),
        cli::Command::Reproduce(a) => suite::reproduce(a, reg),
        cli::Command::Check(a) => commands::check(a, reg),
        cli::Command::InitWorkload(a) => commands::init_workload(a),
        cli::Command::History(a) => catalog_commands::history(a, reg),
        cli::Command::Catalog(a) => catalog_commands::catalog(a),
    }
}
