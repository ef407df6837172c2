//! One connection of a workload file: draws a transaction from the phase's weights, draws its
//! parameters, runs its statements in order (capturing values for later ones), and retries
//! it with the same parameters after the errors its retry rule names.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::gen::Zipf;
use super::{Gen, Spec};
use crate::contract::{Driver, Step};
use crate::db::{Conn, DbError, DbResult, Dbms, ErrorClass, StmtId, Value};
use crate::rng::Rng;

/// New keys of one table on this connection (`next_key`, and `latest` reading them).
#[derive(Debug, Clone)]
struct Keys {
    /// The table's first key.
    start: i64,
    /// Rows in the table when the connections opened.
    base: i64,
    /// Keys this connection has taken.
    mine: i64,
    /// The client's insert counter for the table (`Spec::inserted`) when this connection
    /// read `base`: inserts after that are past `base`.
    at_setup: i64,
    /// `latest`: a Zipf over the keys so far, grown as keys are added.
    zipf: Option<Zipf>,
}

pub struct CustomDriver {
    spec: Arc<Spec>,
    worker: i64,
    workers: i64,
    /// Cumulative weights of this operation's mix.
    cum: Vec<u64>,
    rng: Rng,
    dbms: Dbms,
    /// Per transaction, per statement, per variant.
    stmts: Vec<Vec<Vec<StmtId>>>,
    /// Per transaction: the slot values (parameters, then captures).
    vals: Vec<Vec<Value>>,
    /// Per transaction, per parameter: the index of an inline choice's value.
    inline_idx: Vec<Vec<usize>>,
    keys: Vec<Option<Keys>>,
    bind: Vec<Value>,
    captured: Vec<Option<String>>,
    /// A transaction that failed with an error its rule retries: (transaction, tries so far).
    pending: Option<(usize, u32)>,
    pub retries: u64,
}

impl CustomDriver {
    pub fn new(spec: Arc<Spec>, op: usize, worker: usize, workers: usize) -> Self {
        let mut acc = 0u64;
        let cum = spec
            .weights(op)
            .iter()
            .map(|w| {
                acc += *w as u64;
                acc
            })
            .collect();
        let vals = spec
            .txns
            .iter()
            .map(|t| vec![Value::Null; t.slots])
            .collect();
        let inline_idx = spec.txns.iter().map(|t| vec![0; t.params.len()]).collect();
        CustomDriver {
            rng: Rng::keyed(spec.seed, 0xC057_0000 + op as u64, worker as u64),
            worker: worker as i64,
            workers: workers.max(1) as i64,
            cum,
            dbms: Dbms::Sqlite,
            stmts: Vec::new(),
            vals,
            inline_idx,
            keys: vec![None; spec.tables.len()],
            bind: Vec::with_capacity(16),
            captured: Vec::with_capacity(16),
            pending: None,
            retries: 0,
            spec,
        }
    }

    fn pick(&mut self) -> usize {
        let total = *self.cum.last().unwrap_or(&0);
        if total == 0 {
            return 0;
        }
        let x = self.rng.range(0, total - 1);
        self.cum.partition_point(|&c| c <= x)
    }

    /// Transaction `t` succeeded: its `next_key` keys count in the client's insert counters.
    fn acknowledge(&self, t: usize) {
        for p in &self.spec.txns[t].params {
            if let Gen::NextKey { table } = p.gen {
                self.spec.inserted[table].fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Draw the parameters of transaction `t` into its slots.
    fn draw(&mut self, t: usize) {
        let spec = self.spec.clone();
        let txn = &spec.txns[t];
        for (i, p) in txn.params.iter().enumerate() {
            let v = match &p.gen {
                Gen::NextKey { table } => {
                    let k = self.keys[*table].as_mut().expect("keys read in setup");
                    let n = k.base + self.worker + k.mine * self.workers;
                    k.mine += 1;
                    p.fmt.value(k.start + n)
                }
                Gen::Latest { table, theta } => {
                    let k = self.keys[*table].as_mut().expect("keys read in setup");
                    // The client's global insert counter (all connections): the keys
                    // base .. base + done are taken as inserted (see notes()).
                    let done = spec.inserted[*table].load(Ordering::Relaxed) - k.at_setup;
                    let n = (k.base + done.max(0)).max(1) as u64;
                    let z = k.zipf.get_or_insert_with(|| Zipf::new(n, *theta));
                    z.grow(n);
                    let back = z.next(&mut self.rng) as i64;
                    p.fmt.value(k.start + n as i64 - 1 - back)
                }
                g if p.inline.is_some() => {
                    self.inline_idx[t][i] = g.choice_index(&mut self.rng);
                    Value::Null
                }
                g => g.draw(&mut self.rng, 0, &p.fmt),
            };
            self.vals[t][i] = v;
        }
    }

    async fn run(&mut self, conn: &mut Conn, t: usize) -> DbResult<Step> {
        let spec = self.spec.clone();
        let txn = &spec.txns[t];
        let mut step = Step {
            kind: t as u8,
            ..Step::default()
        };
        if txn.transaction {
            step.statements += 1;
            let sql = match (self.dbms, txn.writes) {
                (Dbms::Sqlite, true) => "BEGIN IMMEDIATE",
                (Dbms::Mysql, _) => "START TRANSACTION",
                _ => "BEGIN",
            };
            if txn.pipeline {
                conn.begin_pipelined(sql).await?;
            } else {
                conn.begin(sql).await?;
            }
        }
        for (si, st) in txn.statements.iter().enumerate() {
            let variant = st.inline.map_or(0, |p| self.inline_idx[t][p]);
            let id = self.stmts[t][si][variant];
            self.bind.clear();
            for &s in &st.binds {
                self.bind.push(self.vals[t][s].clone());
            }
            step.statements += 1;
            if st.capture.is_empty() && txn.transaction && txn.pipeline {
                step.rows += conn.exec_pipelined(id, &self.bind).await?;
            } else if st.capture.is_empty() {
                step.rows += conn.exec_rows(id, &self.bind).await?;
            } else {
                self.captured.clear();
                let n = conn.exec_text(id, &self.bind, &mut self.captured).await?;
                step.rows += n;
                let cols = if n == 0 {
                    0
                } else {
                    self.captured.len() / n as usize
                };
                if n > 0 && cols < st.capture.len() {
                    return Err(DbError::new(
                        ErrorClass::Other,
                        format!(
                            "{}: statement {si} returned {cols} column(s) but captures {}",
                            txn.name,
                            st.capture.len()
                        ),
                    ));
                }
                // The first row's first columns; no row captures NULL.
                for (j, &slot) in st.capture.iter().enumerate() {
                    self.vals[t][slot] = match self.captured.get_mut(j) {
                        Some(v) if n > 0 => captured_value(v.take()),
                        _ => Value::Null,
                    };
                }
            }
        }
        if txn.transaction {
            step.statements += 1;
            if txn.pipeline {
                conn.commit_pipelined().await?;
            } else {
                conn.execute("COMMIT").await?;
            }
            step.rows += conn.take_pipelined_rows();
        }
        Ok(step)
    }
}

/// A captured column as a value to bind: an integer when the server's text is one (in its
/// plain form: "007" stays text), otherwise the text itself — floats, numerics, dates and
/// strings are bound back as the server printed them, and the server converts them to the
/// parameter's type.
fn captured_value(v: Option<String>) -> Value {
    match v {
        None => Value::Null,
        Some(s) => match s.parse::<i64>() {
            Ok(i) if i.to_string() == s => Value::Int(i),
            _ => Value::Text(s),
        },
    }
}

/// The first key number of `t` from which no key exists, starting at its row count `n`.
/// Connections insert at different speeds, so an earlier run's new keys may stop short of
/// their share and leave holes below the highest key: the keys past the row count are looked
/// up in batches (keys may be hashed text, so MAX() would not tell).
async fn past_holes(conn: &mut Conn, t: &super::Table, start: i64, n: i64) -> DbResult<i64> {
    const BATCH: i64 = 1000;
    let Some(col) = t
        .columns
        .iter()
        .find(|c| matches!(c.gen, Gen::Sequence { .. }))
    else {
        return Ok(n);
    };
    let dbms = conn.dbms();
    let mut base = n;
    loop {
        let keys: Vec<String> = (0..BATCH)
            .map(|i| match col.fmt.value(start + base + i) {
                Value::Text(s) => s,
                Value::Int(v) => v.to_string(),
                _ => String::new(),
            })
            .collect();
        let mut sql = format!(
            "SELECT {} FROM {} WHERE {} IN (",
            col.name, t.name, col.name
        );
        for (i, k) in keys.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            let v = match col.fmt.text {
                true => Value::Text(k.clone()),
                false => Value::Int(k.parse().unwrap_or(0)),
            };
            crate::db::push_literal(&mut sql, dbms, &v);
        }
        sql.push(')');
        let found = conn.query(&sql).await?;
        let last = found
            .iter()
            .filter_map(|r| r.first().cloned().flatten())
            .filter_map(|v| keys.iter().position(|k| *k == v))
            .max();
        match last {
            Some(i) => base += i as i64 + 1,
            None => return Ok(base),
        }
    }
}

impl Driver for CustomDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.dbms = conn.dbms();
        let spec = self.spec.clone();
        let mut all = Vec::with_capacity(spec.txns.len());
        for txn in &spec.txns {
            let mut per = Vec::with_capacity(txn.statements.len());
            for st in &txn.statements {
                let mut ids = Vec::with_capacity(st.variants.len());
                for sql in &st.variants {
                    ids.push(conn.prepare(sql).await.map_err(|e| {
                        DbError::new(
                            e.class,
                            format!("{}: preparing `{sql}`: {}", txn.name, e.message),
                        )
                    })?);
                }
                per.push(ids);
            }
            all.push(per);
        }
        self.stmts = all;
        // Tables that get new keys: their row count now is where the new keys continue.
        for txn in &spec.txns {
            for p in &txn.params {
                if let Gen::NextKey { table } | Gen::Latest { table, .. } = p.gen {
                    if self.keys[table].is_none() {
                        let t = &spec.tables[table];
                        let n = conn
                            .query_one(&format!("SELECT COUNT(*) FROM {}", t.name))
                            .await?
                            .and_then(|s| s.parse::<i64>().ok())
                            .unwrap_or(0);
                        let start = t.key_start.unwrap_or(1);
                        let base = past_holes(conn, t, start, n).await?;
                        self.keys[table] = Some(Keys {
                            start,
                            base,
                            mine: 0,
                            at_setup: spec.inserted[table].load(Ordering::Relaxed),
                            zipf: None,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        let (t, tries) = match self.pending.take() {
            Some(p) => {
                self.retries += 1;
                p
            }
            None => {
                let t = self.pick();
                self.draw(t);
                (t, 0)
            }
        };
        match self.run(conn, t).await {
            Ok(s) => {
                self.acknowledge(t);
                Ok(s)
            }
            Err(mut e) => {
                let txn = &self.spec.txns[t];
                if txn.transaction && e.class != ErrorClass::ConnectionLost {
                    // Whatever the server still holds of the transaction goes (with the
                    // replies of pipelined statements not read yet).
                    let _ = conn.execute("ROLLBACK").await;
                    conn.take_pipelined_rows();
                }
                if txn.retry_on.contains(&e.class) && tries < txn.retry_max {
                    self.pending = Some((t, tries + 1));
                }
                e.kind = t as u8;
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"
name = "two"
[transactions.a]
weight = 3
statements = [{ sql = "SELECT 1" }]
[transactions.b]
weight = 1
statements = [{ sql = "SELECT 2" }]
[[phases]]
name = "only-b"
weights = { b = 1 }
"#;

    #[test]
    fn mix_follows_weights_and_phases() {
        let spec = Arc::new(super::super::file::parse("two.toml", TWO, &[], 1).unwrap());
        let mut d = CustomDriver::new(spec.clone(), 99, 0, 1);
        let n = 40_000;
        let a = (0..n).filter(|_| d.pick() == 0).count() as f64 / n as f64;
        assert!((a - 0.75).abs() < 0.01, "{a}");
        let mut d = CustomDriver::new(spec, 0, 0, 1);
        assert!((0..1000).all(|_| d.pick() == 1));
    }

    #[test]
    fn next_keys_partition_across_connections() {
        let text = r#"
name = "k"
[tables.t]
rows = 10
[tables.t.columns]
id = { type = "int", kind = "sequence" }
[transactions.ins]
params = { id = { kind = "next_key", table = "t" } }
statements = [{ sql = "INSERT INTO t (id) VALUES (:id)" }]
"#;
        let spec = Arc::new(super::super::file::parse("k.toml", text, &[], 1).unwrap());
        let mut seen = std::collections::BTreeSet::new();
        for w in 0..3 {
            let mut d = CustomDriver::new(spec.clone(), 0, w, 3);
            d.keys[0] = Some(Keys {
                start: 1,
                base: 10,
                mine: 0,
                at_setup: 0,
                zipf: None,
            });
            for _ in 0..5 {
                d.draw(0);
                let Value::Int(k) = d.vals[0][0] else {
                    panic!()
                };
                assert!(seen.insert(k), "key {k} twice");
            }
        }
        // 15 new keys 11..=25, no gap and no overlap.
        assert_eq!(
            seen.iter().copied().collect::<Vec<_>>(),
            (11..=25).collect::<Vec<_>>()
        );
    }

    #[test]
    fn latest_follows_the_inserts_of_every_connection() {
        let text = r#"
name = "l"
[tables.t]
rows = 10
[tables.t.columns]
id = { type = "int", kind = "sequence" }
[transactions.ins]
params = { id = { kind = "next_key", table = "t" } }
statements = [{ sql = "INSERT INTO t (id) VALUES (:id)" }]
[transactions.read]
params = { id = { kind = "latest", table = "t" } }
statements = [{ sql = "SELECT * FROM t WHERE id = :id" }]
"#;
        let spec = Arc::new(super::super::file::parse("l.toml", text, &[], 1).unwrap());
        let keys = Keys {
            start: 1,
            base: 10,
            mine: 0,
            at_setup: 0,
            zipf: None,
        };
        // Connection 0 of 2 only inserts; connection 1 only reads.
        let mut writer = CustomDriver::new(spec.clone(), 0, 0, 2);
        let mut reader = CustomDriver::new(spec.clone(), 0, 1, 2);
        writer.keys[0] = Some(keys.clone());
        reader.keys[0] = Some(keys);
        let newest = |reader: &mut CustomDriver| {
            (0..2000)
                .map(|_| {
                    reader.draw(1);
                    let Value::Int(k) = reader.vals[1][0] else {
                        panic!()
                    };
                    assert!(k >= 1);
                    k
                })
                .max()
                .unwrap()
        };
        assert_eq!(newest(&mut reader), 10);
        for _ in 0..25 {
            writer.draw(0);
            writer.acknowledge(0);
        }
        // The reader made no insert of its own, yet its newest key is the 25th new one.
        assert_eq!(spec.inserted[0].load(Ordering::Relaxed), 25);
        assert_eq!(newest(&mut reader), 35);
        // A failed transaction is not acknowledged: the counter stays.
        writer.draw(0);
        assert_eq!(newest(&mut reader), 35);
    }

    #[test]
    fn captured_values_keep_their_type() {
        assert_eq!(captured_value(None), Value::Null);
        assert_eq!(captured_value(Some("-42".into())), Value::Int(-42));
        // Not a plain integer: kept as the server's text.
        for t in [
            "007",
            "1.5",
            "-0.25",
            "1e+300",
            "hello",
            "2001-02-03",
            "+3",
            "",
        ] {
            assert_eq!(captured_value(Some(t.into())), Value::Text(t.into()), "{t}");
        }
    }
}
