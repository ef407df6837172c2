//! The options of the catalog: where results are recorded, which ones to read, and the
//! `history` and `catalog` commands. Doc comments here are the `--help` text.

use clap::{Args, Subcommand, ValueEnum};

/// Where results are recorded (docs/catalog.md).
#[derive(Debug, Clone, Args, Default)]
pub struct CatalogArgs {
    /// The catalog to use: an SQLite file (a path or sqlite:///path) or a PostgreSQL database
    /// (postgres://user@host/db; the password from PGPASSWORD) shared by a team. Default:
    /// ENGINEBENCH_CATALOG, else $XDG_DATA_HOME/enginebench/catalog.db
    /// (~/.local/share/enginebench/catalog.db); ENGINEBENCH_CATALOG=off records nothing.
    #[arg(long, value_name = "PATH|URL", global = true)]
    pub catalog: Option<String>,
    /// Record nothing in the catalog (and read none).
    #[arg(long, conflicts_with = "catalog", global = true)]
    pub no_catalog: bool,
}

impl CatalogArgs {
    /// The catalog chosen (a value that cannot name one: exit 2).
    pub fn location(&self) -> crate::Result<crate::catalog::Location> {
        crate::catalog::Location::choose(self.catalog.as_deref(), self.no_catalog)
    }
}

/// Which catalogued results to read (history, trends, a catalog baseline).
#[derive(Debug, Clone, Args, Default)]
pub struct FilterArgs {
    /// Results of this workload only (micro-read, tpcc, ...).
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Points of this operation only.
    #[arg(long, value_name = "NAME")]
    pub operation: Option<String>,
    /// Points at this thread count only.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Results of this storage engine (as the server reports it; case does not matter).
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,
    /// Results started at or after this: a date (2026-11-01), a time (2026-11-01T12:00:00Z)
    /// or an age (7d, 12h).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Results against this kind of target (sqlite, mariadb, postgres) or whose target URL
    /// contains this text.
    #[arg(long, value_name = "KIND|TEXT")]
    pub target: Option<String>,
    /// Results of this client host (its hostname).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Results whose server had this setting at this value (repeatable), e.g.
    /// --where innodb_flush_log_at_trx_commit=2.
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Results of this status only: complete, interrupted or failed.
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// The newest N results that pass the other filters.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// Results of the same configuration as RESULT only (a result.json, its folder, or a
    /// catalogued result's id, #12): the same work, options, server, settings, client path
    /// and host (docs/catalog.md, "What makes two results comparable").
    #[arg(long, value_name = "RESULT")]
    pub same_as: Option<String>,
}

impl FilterArgs {
    /// The filter, checked (no I/O).
    pub fn filter(&self) -> crate::Result<crate::catalog::Filter> {
        use crate::catalog::Filter;
        if let Some(s) = &self.status {
            if !["complete", "interrupted", "failed", "running"].contains(&s.as_str()) {
                return Err(crate::Error::usage(format!(
                    "--status {s}: one of complete, interrupted, failed"
                )));
            }
        }
        Ok(Filter {
            workload: self.workload.clone(),
            operation: self.operation.clone(),
            engine: self.engine.clone(),
            since: self.since.as_deref().map(Filter::since).transpose()?,
            target: self.target.clone(),
            host: self.host.clone(),
            threads: self.threads,
            settings: self
                .settings
                .iter()
                .map(|s| Filter::setting(s))
                .collect::<crate::Result<_>>()?,
            status: self.status.clone(),
            last: self.last,
            // `--same-as` names a result: resolved where the catalog is open.
            config: None,
        })
    }
}

#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// What to print: a table (80 columns, the points grouped by configuration), CSV (every
    /// column) or JSON (an array of rows).
    #[arg(long, value_enum, default_value_t = HistoryFormat::Table)]
    pub format: HistoryFormat,
    /// The table with every headline column (client CPU, sleeps, target, status), one line
    /// per point, wider than a terminal.
    #[arg(long)]
    pub wide: bool,
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HistoryAction {
    /// Add result folders (or result.json files, or folders holding result folders, such as
    /// a suite's) to the catalog; results already there are counted, not added again.
    Import {
        #[arg(required = true, value_name = "DIR")]
        paths: Vec<std::path::PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    Table,
    Csv,
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct CatalogCommandArgs {
    #[command(subcommand)]
    pub action: CatalogAction,
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum CatalogAction {
    /// Print where the catalog is (the path, or the URL without its password).
    Path,
}
