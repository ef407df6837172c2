//! enginebench: a storage-engine benchmark lab. Data flows one way:
//! cli → config → (workload, target) → runner → measure → report.

pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
#[doc(hidden)]
pub mod fuzz;
pub mod load;
pub mod measure;
pub mod report;
pub mod runner;
pub mod server;
pub mod suite;
pub mod db;
pub mod workload;

use std::process::ExitCode;

pub use error::{Error, Result};

/// Run one parsed command line.
pub fn run(cli: cli::Cli) -> Result<ExitCode> {
    match &cli.command {
        cli::Command::Prepare(a) => commands::prepare(a),
        cli::Command::Run(a) => commands::run(a),
        cli::Command::Cleanup(a) => commands::cleanup(a),
        cli::Command::List => commands::list(),
        cli::Command::Report(a) => commands::report(a),
        cli::Command::Compare(a) => commands::compare(a),
        cli::Command::Server(a) => commands::server(a),
        cli::Command::Suite(a) => suite::run(a),
        cli::Command::Check(a) => commands::check(a),
        cli::Command::InitWorkload(a) => commands::init_workload(a),
    }
}
