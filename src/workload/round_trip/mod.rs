//! `round-trip`: one constant SELECT per operation and no table, the floor that every statement
//! pays on a target (client, socket or network, parser, executor, protocol), whatever the
//! engine. It is also the smallest built-in workload: the template that docs/architecture.md
//! points to (its options, a report section, its registry line, its docs and its tests).

mod entry;
mod report;

pub use entry::{RoundTripArgs, ENTRY};

use crate::contract::{Driver, Step};
use crate::db::{Conn, DbResult, StmtId};

pub const NAME: &str = "round-trip";

/// The one operation, under the name the result and `list` show.
pub const OPERATION: &str = "SELECT_CONSTANTS";

/// The resolved options.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Constants per SELECT (`--round-trip-columns`): a wider row costs the protocol more.
    pub columns: u32,
}

impl Spec {
    /// `SELECT 1, 2, ..., columns`: constants only, so no table and no storage engine.
    pub fn sql(&self) -> String {
        let cols: Vec<String> = (1..=self.columns).map(|c| c.to_string()).collect();
        format!("SELECT {}", cols.join(", "))
    }
}

/// One connection's loop: the statement prepared once, executed once per step.
pub struct RoundTripDriver {
    sql: String,
    stmt: StmtId,
}

impl Driver for RoundTripDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.stmt = conn.prepare(&self.sql).await?;
        Ok(())
    }
    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        conn.exec_rows(self.stmt, &[]).await.map(Step::query)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sql_has_the_columns() {
        assert_eq!(super::Spec { columns: 1 }.sql(), "SELECT 1");
        assert_eq!(super::Spec { columns: 3 }.sql(), "SELECT 1, 2, 3");
    }
}
