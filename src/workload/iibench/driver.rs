//! iiBench inserts as a driver of the shared runner: one step is one batch. iibench's own run
//! loop (`run.rs`) does not use it; it is there for workloads that run iiBench's inserts under
//! timed phases (a schema change while inserts run, a suite cell). Rows are partitioned across
//! connections: batch k of connection w holds rows ((k * threads + w) * rows_per_commit) + 1...
//! so the data is the same as the run loop's, whatever the number of connections.

use crate::runner::{Driver, Step};
use crate::db::{Conn, DbResult, Dbms, Value};

use super::Spec;

pub struct IibenchDriver {
    spec: Spec,
    worker: u64,
    threads: u64,
    next_batch: u64,
    dbms: Dbms,
    sql: String,
    rows: Vec<Vec<Value>>,
}

impl IibenchDriver {
    pub fn new(spec: &Spec, worker: usize, threads: usize) -> Self {
        IibenchDriver {
            spec: spec.clone(),
            worker: worker as u64,
            threads: threads.max(1) as u64,
            next_batch: 0,
            dbms: Dbms::Sqlite,
            sql: String::new(),
            rows: Vec::new(),
        }
    }

    /// The first row number of this connection's next batch.
    pub fn next_first_row(&self) -> u64 {
        (self.next_batch * self.threads + self.worker) * self.spec.rows_per_commit + 1
    }
}

impl Driver for IibenchDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.dbms = conn.dbms();
        Ok(())
    }

    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        let first = self.next_first_row();
        let n = self.spec.rows_per_commit;
        self.spec
            .batch(self.dbms, first, n, &mut self.sql, &mut self.rows);
        if self.dbms == Dbms::Sqlite {
            conn.insert_rows(super::TABLE, Spec::columns(), &self.rows)
                .await?;
        } else {
            conn.execute(&self.sql).await?;
        }
        // A failed batch is sent again with the same rows (the statement was rolled back).
        self.next_batch += 1;
        let mut statements = 1;
        if let Some((_, _, sql)) = self.spec.delete_for(first, n) {
            // --max-table-rows: a failed DELETE leaves its rows (counted as the step's error).
            conn.execute(&sql).await?;
            statements += 1;
        }
        Ok(Step {
            rows: n,
            statements,
            ..Step::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_partition_the_rows() {
        let spec = Spec {
            seed: 1,
            rows_per_commit: 10,
            max_rows: None,
            max_time: None,
            window_rows: 100,
            inserters: 3,
            query_threads: 0,
            text: crate::workload::textgen::TextGen::new(1.0, 1, 10, 10),
            max_table_rows: None,
        };
        let mut firsts = Vec::new();
        for w in 0..3 {
            let mut d = IibenchDriver::new(&spec, w, 3);
            for _ in 0..4 {
                firsts.push(d.next_first_row());
                d.next_batch += 1;
            }
        }
        firsts.sort_unstable();
        let want: Vec<u64> = (0..12).map(|k| k * 10 + 1).collect();
        assert_eq!(firsts, want);
    }
}
