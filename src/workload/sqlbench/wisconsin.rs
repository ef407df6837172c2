//! test-wisconsin: the Wisconsin benchmark's tables (onek, tenk1, tenk2, Bprime; generated
//! here) and its query list: range and point selects, two- and three-way joins, projections,
//! an aggregate, and single-row inserts, deletes and key updates.

use super::exec::{permutation, Runner};
use crate::db::{DbResult, Value};

/// The Wisconsin relation's columns (also used by create_table).
pub const TABLE_BODY: &str = "unique1 int NOT NULL, unique2 int NOT NULL, two int, four int, ten int, twenty int, hundred int NOT NULL, thousand int, twothousand int, fivethous int, tenthous int, odd int, even int, stringu1 char(16), stringu2 char(16), string4 char(16)";

const COLS: [&str; 16] = [
    "unique1",
    "unique2",
    "two",
    "four",
    "ten",
    "twenty",
    "hundred",
    "thousand",
    "twothousand",
    "fivethous",
    "tenthous",
    "odd",
    "even",
    "stringu1",
    "stringu2",
    "string4",
];

/// A 16-character string naming `n` (letters, as the benchmark's unique strings).
fn ustr(n: u64) -> String {
    let mut s = String::with_capacity(16);
    let mut x = n;
    for _ in 0..7 {
        s.push((b'A' + (x % 26) as u8) as char);
        x /= 26;
    }
    s.push_str("xxxxxxxxx");
    s
}

fn rows(n: u64, seed: u64) -> impl Iterator<Item = Vec<Value>> {
    let perm = permutation(n, seed);
    const S4: [&str; 4] = [
        "AAAAxxxxxxxxxxxx",
        "HHHHxxxxxxxxxxxx",
        "OOOOxxxxxxxxxxxx",
        "VVVVxxxxxxxxxxxx",
    ];
    (0..n).map(move |u2| {
        let u1 = perm[u2 as usize];
        let i = |v: u64| Value::Int(v as i64);
        vec![
            i(u1),
            i(u2),
            i(u1 % 2),
            i(u1 % 4),
            i(u1 % 10),
            i(u1 % 20),
            i(u1 % 100),
            i(u1 % 1000),
            i(u1 % 2000),
            i(u1 % 5000),
            i(u1 % 10000),
            i((u1 % 100) * 2 + 1),
            i((u1 % 100) * 2),
            Value::Text(ustr(u1)),
            Value::Text(ustr(u2)),
            Value::Text(S4[(u2 % 4) as usize].into()),
        ]
    })
}

const TABLES: [&str; 4] = ["onek", "tenk1", "tenk2", "bprime"];

pub async fn wisconsin(r: &mut Runner<'_>) -> DbResult<()> {
    if !r.any(&["delete_big", "wisc_benchmark"]) {
        return Ok(());
    }
    // The benchmark's sizes (1,000 and 10,000 rows); below --scale 1 shrunk, at least 1,000.
    let tenk = ((10_000.0 * r.spec.scale.min(1.0)).round() as u64).max(1000);
    let onek = tenk / 10;
    for (k, t) in TABLES.iter().enumerate() {
        r.drop_table(t).await?;
        let sql = r.create_sql(t, TABLE_BODY);
        r.must(&sql).await?;
        r.must(&format!("CREATE UNIQUE INDEX {t}_u1 ON {t} (unique1)"))
            .await?;
        r.must(&format!("CREATE UNIQUE INDEX {t}_u2 ON {t} (unique2)"))
            .await?;
        r.must(&format!("CREATE INDEX {t}_hundred ON {t} (hundred)"))
            .await?;
        let n = if *t == "onek" { onek } else { tenk };
        r.load(t, &COLS, rows(n, 17 + k as u64)).await?;
    }
    crate::contract::after_load(&mut r.conn, &TABLES)
        .await
        .map_err(|e| crate::db::DbError::new(crate::db::ErrorClass::Other, e.message))?;
    // Bprime keeps the first 1/10 of its rows.
    let cut = onek;
    if let Some(n) = r.want("delete_big") {
        r.begin("delete_big").await;
        for k in 0..n {
            if k > 0 {
                r.pause();
                r.must("DELETE FROM bprime").await?;
                r.load("bprime", &COLS, rows(tenk, 20)).await?;
                r.resume();
            }
            r.exec(&format!("DELETE FROM bprime WHERE bprime.unique2 >= {cut}"))
                .await?;
        }
        r.end(n).await;
    } else {
        r.must(&format!("DELETE FROM bprime WHERE bprime.unique2 >= {cut}"))
            .await?;
    }
    let t2_cols = COLS
        .iter()
        .map(|c| format!("t2.{c} AS t2{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let b_cols = COLS
        .iter()
        .map(|c| format!("b.{c} AS b{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let o_cols = COLS
        .iter()
        .map(|c| format!("o.{c} AS o{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let u_lo = tenk / 33;
    let selects = [
        format!("SELECT * FROM tenk1 WHERE (unique2 > {u_lo}) AND (unique2 < {})", u_lo + 101),
        format!("SELECT * FROM tenk1 WHERE (unique1 > {}) AND (unique1 < {})", tenk / 15, tenk / 15 + 1001),
        format!("SELECT * FROM tenk1 WHERE unique2 = {}", tenk / 5 + 1),
        format!("SELECT t1.*, {t2_cols} FROM tenk1 t1, tenk1 t2 WHERE (t1.unique2 = t2.unique2) AND (t2.unique2 < {onek})"),
        format!("SELECT t.*, {b_cols} FROM tenk1 t, bprime b WHERE t.unique2 = b.unique2"),
        format!("SELECT t1.*, {o_cols} FROM onek o, tenk1 t1, tenk1 t2 WHERE (o.unique2 = t1.unique2) AND (t1.unique2 = t2.unique2) AND (t1.unique2 < {onek}) AND (t2.unique2 < {onek})"),
        "SELECT two, four, ten, twenty, hundred, string4 FROM tenk1".to_string(),
        "SELECT * FROM onek".to_string(),
        "SELECT min(unique2) AS x FROM tenk1".to_string(),
    ];
    let names = COLS.join(", ");
    // One round: the selects, then single-row changes; new keys start past the data.
    r.simple("wisc_benchmark", true, |j| {
        let round = j / 16;
        let base = tenk * 10 + round * 100;
        match j % 16 {
            k @ 0..=8 => selects[k as usize].clone(),
            9 | 10 => format!(
                "INSERT INTO tenk1 ({names}) VALUES ({}, {}, 0, 2, 0, 10, 50, 688, 1950, 4950, 9950, 1, 100, 'ron may choi', 'jae kwang choi', 'u. c. berkeley')",
                base + j % 16,
                base + 50 + j % 16
            ),
            11 => format!("DELETE FROM tenk1 WHERE tenk1.unique2 = {}", tenk / 11 + round),
            12 => format!("DELETE FROM tenk1 WHERE tenk1.unique2 = {}", base + 59),
            13 => format!(
                "UPDATE tenk1 SET unique2 = {} WHERE tenk1.unique2 = {}",
                base + 70,
                tenk / 7 + round
            ),
            14 => format!(
                "UPDATE tenk1 SET unique2 = {} WHERE tenk1.unique2 = {}",
                base + 71,
                tenk / 9 + round
            ),
            _ => format!("DELETE FROM tenk1 WHERE tenk1.unique2 = {}", base + 60),
        }
    })
    .await?;
    for t in TABLES {
        r.drop_table(t).await?;
    }
    Ok(())
}
