//! test-transactions: inserts, updates and deletes by primary key, all in one transaction
//! (`_commit`) or each its own (`_autocommit`), and transactions of 100 changes rolled back
//! (`_rollback`), which must leave the table as it was (checked). The rollback operations are
//! "not supported" on an engine without transactions: its rollback cannot undo.

use super::exec::{OpStatus, Runner};
use crate::db::{DbResult, Value};

const T1: &str = "bench_trx1";
const T2: &str = "bench_trx2";
/// Letters of the region column (the script's 27 groups).
const LETTERS: u64 = 27;
/// Changes per rolled-back transaction (the script's comments: 100 rows then a rollback).
const PER_ROLLBACK: u64 = 100;

fn row(id: u64, rev: u64) -> String {
    let region = (b'A' + (id % LETTERS) as u8) as char;
    format!("({id},{rev},'{region}',{},0)", id / LETTERS)
}

fn values(id: u64, rev: u64) -> Vec<Value> {
    vec![
        Value::Int(id as i64),
        Value::Int(rev as i64),
        Value::Text(((b'A' + (id % LETTERS) as u8) as char).to_string()),
        Value::Int((id / LETTERS) as i64),
        Value::Int(0),
    ]
}

const COLS: [&str; 5] = ["idn", "rev_idn", "region", "grp", "updated"];

pub async fn transactions(r: &mut Runner<'_>) -> DbResult<()> {
    let ops: Vec<&str> = super::OPS
        .iter()
        .filter(|o| o.1 == "transactions")
        .map(|o| o.0)
        .collect();
    if !r.any(&ops) {
        return Ok(());
    }
    for t in [T1, T2] {
        r.drop_table(t).await?;
        let sql = r.create_sql(
            t,
            "idn int NOT NULL, rev_idn int NOT NULL, region char(1) NOT NULL, grp int NOT NULL, updated smallint NOT NULL, PRIMARY KEY (idn)",
        );
        r.must(&sql).await?;
        r.must(&format!("CREATE UNIQUE INDEX {t}_rg ON {t} (region, grp)"))
            .await?;
    }
    // Rows: insert_commit's count in T1, insert_autocommit's in T2 (loaded untimed when the
    // insert operation is not selected).
    let n1 = r.spec.tests("insert_commit");
    let n2 = r.spec.tests("insert_autocommit");
    for (name, t, n, commit) in [
        ("insert_commit", T1, n1, true),
        ("insert_autocommit", T2, n2, false),
    ] {
        if r.want(name).is_some() {
            r.begin(name).await;
            if commit {
                r.exec("BEGIN").await?;
            }
            for id in 0..n {
                r.exec(&format!("INSERT INTO {t} VALUES {}", row(id, n - 1 - id)))
                    .await?;
            }
            if commit {
                r.exec("COMMIT").await?;
            }
            r.end(n).await;
        } else {
            r.load(t, &COLS, (0..n).map(|id| values(id, n - 1 - id)))
                .await?;
        }
    }
    rollback(r, "insert_rollback", |id| {
        format!("INSERT INTO {T1} VALUES {}", row(n1 + id, id))
    })
    .await?;
    rollback(r, "update_rollback", |id| {
        format!("UPDATE {T1} SET updated=2 WHERE idn={}", id % n1)
    })
    .await?;
    rollback(r, "delete_rollback", |id| {
        format!("DELETE FROM {T1} WHERE idn={}", id % n1)
    })
    .await?;
    for (name, t, n, commit, sql) in [
        (
            "update_commit",
            T1,
            n1,
            true,
            "UPDATE {t} SET updated=1 WHERE idn={id}",
        ),
        (
            "update_autocommit",
            T2,
            n2,
            false,
            "UPDATE {t} SET updated=1 WHERE idn={id}",
        ),
        (
            "delete_commit",
            T1,
            n1,
            true,
            "DELETE FROM {t} WHERE idn={id}",
        ),
        (
            "delete_autocommit",
            T2,
            n2,
            false,
            "DELETE FROM {t} WHERE idn={id}",
        ),
    ] {
        let Some(tests) = r.want(name) else { continue };
        r.begin(name).await;
        if commit {
            r.exec("BEGIN").await?;
        }
        for j in 0..tests {
            let id = j % n;
            r.exec(&sql.replace("{t}", t).replace("{id}", &id.to_string()))
                .await?;
        }
        if commit {
            r.exec("COMMIT").await?;
        }
        r.end(tests).await;
    }
    r.drop_table(T1).await?;
    r.drop_table(T2).await
}

/// Rows, and rows with updated=2, of T1: what a rollback must leave unchanged.
async fn state(r: &mut Runner<'_>) -> DbResult<(i64, i64)> {
    Ok((
        r.int(&format!("SELECT count(*) FROM {T1}")).await?,
        r.int(&format!("SELECT count(*) FROM {T1} WHERE updated=2"))
            .await?,
    ))
}

/// Tests of transactions of 100 statements each ended by ROLLBACK; checked (untimed) that the
/// table's rows are as before.
async fn rollback(r: &mut Runner<'_>, name: &str, sql: impl Fn(u64) -> String) -> DbResult<()> {
    let Some(n) = r.want(name) else {
        return Ok(());
    };
    if !r.transactional {
        r.skip(
            name,
            OpStatus::NotSupported,
            "the engine has no transactions: a rollback cannot undo",
        );
        return Ok(());
    }
    let before = state(r).await?;
    r.begin(name).await;
    for k in 0..n {
        r.exec("BEGIN").await?;
        for i in 0..PER_ROLLBACK {
            r.exec(&sql(k * PER_ROLLBACK + i)).await?;
        }
        r.exec("ROLLBACK").await?;
    }
    r.pause();
    let after = state(r).await?;
    if after != before {
        r.failed = true;
        r.note = Some(format!(
            "the rollback did not undo: {} rows ({} marked) before, {} ({}) after",
            before.0, before.1, after.0, after.1
        ));
    } else {
        r.note = Some(format!(
            "checked: {} rows before and after the rollbacks",
            after.0
        ));
    }
    r.end(n).await;
    Ok(())
}
