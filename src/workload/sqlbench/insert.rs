//! test-insert: one table `bench1` (id, id2, id3, dummy1; primary key (id, id2), an index on
//! id3) filled row by row (a third in order, a third in reverse order, a third in random
//! order), then read by key, by range, sorted, grouped and joined with itself; updated by key
//! and in bulk; rows deleted by key and by range; then a table with 16 keys, and multi-row
//! inserts.

use super::exec::{permutation, Runner};
use crate::db::{DbResult, Value};

const T: &str = "bench1";
const COLS: [&str; 4] = ["id", "id2", "id3", "dummy1"];

/// The ids in insert order: 0..a ascending, R-1 down to R-a, then the middle in random order.
fn insert_order(rows: u64) -> Vec<(u64, &'static str)> {
    let a = rows / 3;
    let mut v: Vec<(u64, &str)> = (0..a).map(|i| (i, "ABCDEFGHIJ")).collect();
    v.extend((0..a).map(|i| (rows - 1 - i, "BCDEFGHIJK")));
    let mid = rows - 2 * a;
    v.extend(
        permutation(mid, 3)
            .into_iter()
            .map(|i| (a + i, "CDEFGHIJKL")),
    );
    v
}

/// Range predicates on one column (`{c}`), for select_range_prefix/select_range_key2: single
/// ranges, ORs of ranges, overlapping and empty ones (the kinds of the script's list, not its
/// list).
const RANGES: [&str; 12] = [
    "{c} IN (3,2,1,4,16,10)",
    "{c} >= {last} OR {c} < 1",
    "{c} >= 1 AND {c} <= 2",
    "({c} >= 1 AND {c} <= 2) OR ({c} >= 1 AND {c} <= 2)",
    "{c} >= 1 AND {c} <= 10 AND {c} <= 5",
    "({c} > 0 AND {c} < 2) OR {c} >= {last}",
    "({c} >= 5 AND {c} <= 10) OR ({c} >= 1 AND {c} <= 4)",
    "({c} = 1 OR {c} = 2) AND ({c} = 3 OR {c} = 4)",
    "({c} = 1 OR {c} = 2) AND ({c} = 2 OR {c} = 3)",
    "({c} >= 0 AND {c} < 4) OR ({c} >= 4 AND {c} < 6)",
    "{c} <= -1 OR ({c} >= 0 AND {c} <= 5) OR ({c} >= 6 AND {c} <= 8)",
    "({c} > 1 OR {c} < 1) AND {c} <= 2",
];

pub async fn insert(r: &mut Runner<'_>) -> DbResult<()> {
    let main_ops = [
        "insert",
        "insert_duplicates",
        "prepared_select",
        "once_prepared_select",
        "order_by_big_key",
        "order_by_big_key_desc",
        "order_by_big_key_prefix",
        "order_by_big_key2",
        "order_by_big_key_diff",
        "order_by_big",
        "order_by_range",
        "order_by_key_prefix",
        "order_by_key2_diff",
        "select_diff_key",
        "select_range_prefix",
        "select_range_key2",
        "select_key_prefix",
        "select_key",
        "select_key_return_key",
        "select_key2",
        "select_key2_return_key",
        "select_key2_return_prim",
        "min_max",
        "count",
        "update_of_key",
        "update_of_key_big",
        "update_with_key",
        "update_with_key_prefix",
        "update_big",
        "outer_join_on_key",
        "outer_join",
        "outer_join_found",
        "outer_join_not_found",
        "insert_select_1_key",
        "insert_select_2_keys",
        "delete_key",
        "delete_range",
    ];
    if r.any(&main_ops) {
        main_table(r).await?;
    }
    many_keys(r).await?;
    multi_value(r).await
}

async fn main_table(r: &mut Runner<'_>) -> DbResult<()> {
    // Rows: the planned count of `insert` (the report's 350,768 x scale).
    let rows = r.spec.tests("insert");
    let order = insert_order(rows);
    r.drop_table(T).await?;
    let sql = r.create_sql(
        T,
        "id int NOT NULL, id2 int NOT NULL, id3 int NOT NULL, dummy1 char(30), PRIMARY KEY (id, id2)",
    );
    r.must(&sql).await?;
    r.must(&format!("CREATE INDEX {T}_ix_id3 ON {T} (id3)"))
        .await?;
    if let Some(n) = r.want("insert") {
        r.begin("insert").await;
        for &(v, s) in &order {
            r.exec(&format!(
                "INSERT INTO {T} (id,id2,id3,dummy1) VALUES ({v},{v},{v},'{s}')"
            ))
            .await?;
        }
        r.end(n).await;
    } else {
        r.load(
            T,
            &COLS,
            order.iter().map(|&(v, s)| {
                vec![
                    Value::Int(v as i64),
                    Value::Int(v as i64),
                    Value::Int(v as i64),
                    Value::Text(s.into()),
                ]
            }),
        )
        .await?;
    }
    crate::contract::after_load(&mut r.conn, &[T])
        .await
        .map_err(|e| crate::db::DbError::new(crate::db::ErrorClass::Other, e.message))?;
    let perm = permutation(rows, 11);
    ordered(r, rows, &perm).await?;
    lookups(r, rows, &perm).await?;
    updates(r, rows, &perm).await?;
    joins_and_copies(r).await?;
    deletes(r, rows, &perm).await?;
    r.drop_table(T).await
}

/// Duplicate inserts, prepared selects and sorted reads, of the whole table and of ranges.
async fn ordered(r: &mut Runner<'_>, rows: u64, perm: &[u64]) -> DbResult<()> {
    let key = |j: u64| perm[(j % rows) as usize];
    r.simple("insert_duplicates", false, |j| {
        let k = key(j);
        format!("INSERT INTO {T} (id,id2,id3,dummy1) VALUES ({k},{k},2,'D')")
    })
    .await?;
    r.simple("prepared_select", true, |j| {
        format!("SELECT * FROM {T} WHERE id={}", key(j))
    })
    .await?;
    if let Some(n) = r.want("once_prepared_select") {
        r.begin("once_prepared_select").await;
        let id = r
            .conn
            .prepare(&format!("SELECT * FROM {T} WHERE id=?"))
            .await?;
        for j in 0..n {
            r.exec_prepared(id, &[Value::Int(key(j) as i64)]).await?;
        }
        r.end(n).await;
    }
    for (name, sql) in [
        ("order_by_big_key", "SELECT id,id2 FROM {T} ORDER BY id,id2"),
        (
            "order_by_big_key_desc",
            "SELECT id,id2 FROM {T} ORDER BY id DESC, id2 DESC",
        ),
        (
            "order_by_big_key_prefix",
            "SELECT id FROM {T} ORDER BY id DESC",
        ),
        ("order_by_big_key2", "SELECT id3 FROM {T} ORDER BY id3"),
        ("order_by_big_key_diff", "SELECT id2 FROM {T} ORDER BY id3"),
        ("order_by_big", "SELECT id FROM {T} ORDER BY id2,id3"),
    ] {
        let q = sql.replace("{T}", T);
        r.simple(name, true, |_| q.clone()).await?;
    }
    // Small ranges that move through the table.
    let third = (rows / 3).max(1);
    let range_start = |j: u64, n: u64| third * (j + 1) / n.max(1);
    let n = r.want("order_by_range").unwrap_or(1);
    r.simple("order_by_range", true, |j| {
        let s = range_start(j, n);
        format!(
            "SELECT dummy1 FROM {T} WHERE id >= {s} AND id <= {} ORDER BY id3",
            s + j + 1
        )
    })
    .await?;
    let n = r.want("order_by_key_prefix").unwrap_or(1);
    r.simple("order_by_key_prefix", true, |j| {
        let s = range_start(j, n);
        format!(
            "SELECT dummy1 FROM {T} WHERE id >= {s} AND id <= {} ORDER BY id",
            s + j + 1
        )
    })
    .await?;
    let n = r.want("order_by_key2_diff").unwrap_or(1);
    r.simple("order_by_key2_diff", true, |j| {
        let s = range_start(j, n);
        format!(
            "SELECT id2 FROM {T} WHERE id3 >= {s} AND id3 <= {} ORDER BY id3",
            s + n
        )
    })
    .await?;
    Ok(())
}

/// Selects by key (every other one misses), by range, min/max and count.
async fn lookups(r: &mut Runner<'_>, rows: u64, perm: &[u64]) -> DbResult<()> {
    let key = |j: u64| perm[(j % rows) as usize];
    r.simple("select_diff_key", true, |j| {
        format!("SELECT id2 FROM {T} WHERE id={} OR id3={}", j + 1, key(j))
    })
    .await?;
    let last = rows.saturating_sub(1);
    for (name, col) in [("select_range_prefix", "id"), ("select_range_key2", "id3")] {
        r.simple(name, true, |j| {
            let p = RANGES[(j % RANGES.len() as u64) as usize]
                .replace("{c}", col)
                .replace("{last}", &last.to_string());
            format!("SELECT * FROM {T} WHERE {p}")
        })
        .await?;
    }
    // Key lookups: every other one finds its row, the one between misses (key + rows).
    let probe = |j: u64| {
        let k = key(j / 2);
        if j % 2 == 0 {
            k
        } else {
            k + rows
        }
    };
    for (name, cols, cond) in [
        ("select_key_prefix", "*", "id={k}"),
        ("select_key", "*", "id={k} AND id2={k}"),
        ("select_key_return_key", "id,id2", "id={k} AND id2={k}"),
        ("select_key2", "*", "id3={k}"),
        ("select_key2_return_key", "id3", "id3={k}"),
        ("select_key2_return_prim", "id,id2", "id3={k}"),
    ] {
        r.simple(name, true, |j| {
            format!(
                "SELECT {cols} FROM {T} WHERE {}",
                cond.replace("{k}", &probe(j).to_string())
            )
        })
        .await?;
    }
    let min_max = [
        "SELECT min(id2) FROM {T}",
        "SELECT max(id2) FROM {T}",
        "SELECT min(id3) FROM {T} WHERE id2={t}",
        "SELECT max(id3) FROM {T} WHERE id2={t}",
        "SELECT min(dummy1) FROM {T} WHERE id2={t}",
        "SELECT max(dummy1) FROM {T} WHERE id2={t}",
    ];
    r.simple("min_max", true, |j| {
        min_max[(j % 6) as usize]
            .replace("{T}", T)
            .replace("{t}", &(j / 6 + 1).to_string())
    })
    .await?;
    r.simple("count", true, |j| {
        format!(
            "SELECT count(dummy1) FROM {T} WHERE id2 < {}",
            (j % 100) * rows / 100
        )
    })
    .await?;
    Ok(())
}

/// Updates of the indexed column (restored after), by key and of every row.
async fn updates(r: &mut Runner<'_>, rows: u64, perm: &[u64]) -> DbResult<()> {
    let key = |j: u64| perm[(j % rows) as usize];
    let restore = format!("UPDATE {T} SET id3 = id WHERE id3 <> id");
    if r.want("update_of_key").is_some() {
        // Keys taken in a scrambled order, each once while the count allows.
        r.simple("update_of_key", false, |j| {
            let k = key(j) + 1;
            format!("UPDATE {T} SET id3=-{k} WHERE id3={k}")
        })
        .await?;
        r.must(&restore).await?;
    }
    if let Some(n) = r.want("update_of_key_big") {
        r.simple("update_of_key_big", false, |j| {
            format!(
                "UPDATE {T} SET id3 = 0-id3 WHERE id3 >= 0 AND id3 <= {}",
                (j + 1) * rows / n
            )
        })
        .await?;
        r.must(&restore).await?;
    }
    r.simple("update_with_key", false, |j| {
        let i = j % rows;
        format!("UPDATE {T} SET dummy1='updated' WHERE id={i} AND id2={i}")
    })
    .await?;
    r.simple("update_with_key_prefix", false, |j| {
        format!(
            "UPDATE {T} SET dummy1='really updated' WHERE id={}",
            (1 + 3 * j) % rows
        )
    })
    .await?;
    r.simple("update_big", false, |j| {
        format!("UPDATE {T} SET dummy1='updated {j}'")
    })
    .await?;
    Ok(())
}

/// Outer joins of the table with itself, and copies of it into new tables.
async fn joins_and_copies(r: &mut Runner<'_>) -> DbResult<()> {
    let join = format!("FROM {T} a LEFT OUTER JOIN {T} b ON (a.id2=b.id3)");
    for (name, q) in [
        ("outer_join_on_key", format!("SELECT count(*) {join}")),
        (
            "outer_join",
            format!("SELECT count(a.dummy1),count(b.dummy1) {join}"),
        ),
        (
            "outer_join_found",
            format!("SELECT count(a.dummy1),count(b.dummy1) {join} WHERE b.id3 IS NOT NULL"),
        ),
        (
            "outer_join_not_found",
            format!("SELECT count(a.dummy1),count(b.dummy1) {join} WHERE b.id3 IS NULL"),
        ),
    ] {
        r.simple(name, true, |_| q.clone()).await?;
    }
    for (name, table, index) in [
        ("insert_select_1_key", "bench2", false),
        ("insert_select_2_keys", "bench3", true),
    ] {
        let Some(n) = r.want(name) else { continue };
        r.begin(name).await;
        for _ in 0..n {
            r.pause();
            r.drop_table(table).await?;
            let sql = r.create_sql(
                table,
                "id int NOT NULL, id2 int NOT NULL, id3 int NOT NULL, dummy1 char(30), PRIMARY KEY (id, id2)",
            );
            r.must(&sql).await?;
            if index {
                r.must(&format!("CREATE INDEX {table}_ix_id3 ON {table} (id3)"))
                    .await?;
            }
            r.resume();
            r.exec(&format!("INSERT INTO {table} SELECT * FROM {T}"))
                .await?;
        }
        r.pause();
        r.drop_table(table).await?;
        r.end(n).await;
    }
    Ok(())
}

/// Deletes by key, then of growing ranges until the table is empty.
async fn deletes(r: &mut Runner<'_>, rows: u64, perm: &[u64]) -> DbResult<()> {
    let key = |j: u64| perm[(j % rows) as usize];
    let third = (rows / 3).max(1);
    r.simple("delete_key", false, |j| {
        format!("DELETE FROM {T} WHERE id3={}", key(j))
    })
    .await?;
    if let Some(n) = r.want("delete_range") {
        // Growing ranges of id3, then a range of id, then everything left.
        r.simple("delete_range", false, |j| {
            if j + 1 == n {
                format!("DELETE FROM {T} WHERE id3 < {}", rows + 1)
            } else if j + 2 == n {
                format!(
                    "DELETE FROM {T} WHERE id >= {third} AND id <= {}",
                    2 * third
                )
            } else {
                format!(
                    "DELETE FROM {T} WHERE id3 >= 0 AND id3 <= {}",
                    third * j / n.saturating_sub(2).max(1)
                )
            }
        })
        .await?;
    }
    Ok(())
}

const MK: &str = "bench_mk";

/// The 16-key table: a 16-part primary key and an index on each other column.
async fn create_many_keys(r: &mut Runner<'_>) -> DbResult<()> {
    r.drop_table(MK).await?;
    let mut cols = vec![
        "field1 smallint not null".to_string(),
        "field_search smallint not null".into(),
        "field2 int not null".into(),
        "field3 smallint not null".into(),
        "field4 char(16) not null".into(),
        "field5 int not null".into(),
        "field6 float not null".into(),
        "field7 double precision not null".into(),
    ];
    for i in 8..=16 {
        cols.push(format!("field{i} char(6) not null"));
    }
    let mut pk = vec!["field1".to_string(), "field_search".into()];
    pk.extend((2..=15).map(|i| format!("field{i}")));
    cols.push(format!("PRIMARY KEY ({})", pk.join(",")));
    let sql = r.create_sql(MK, &cols.join(", "));
    r.must(&sql).await?;
    r.must(&format!("CREATE INDEX {MK}_index2 ON {MK} (field_search)"))
        .await?;
    for i in 3..=16 {
        r.must(&format!("CREATE INDEX {MK}_index{i} ON {MK} (field{i})"))
            .await?;
    }
    Ok(())
}

fn many_keys_row(i: u64, rand: u64) -> String {
    let id = i & 127;
    let mut s = format!(
        "({id},{id},{rand},{},'ABCDEF{rand}',0,{rand},{rand}.0",
        i & 32767
    );
    for _ in 8..=16 {
        s.push_str(&format!(",'{}'", rand % 1_000_000));
    }
    s.push(')');
    s
}

async fn many_keys(r: &mut Runner<'_>) -> DbResult<()> {
    let ops = [
        "insert_key",
        "update_of_primary_key_many_keys",
        "delete_big_many_keys",
        "delete_all_many_keys",
    ];
    if !r.any(&ops) {
        return Ok(());
    }
    create_many_keys(r).await?;
    let rows = r.spec.tests("insert_key");
    let perm = permutation(rows, 5);
    if let Some(n) = r.want("insert_key") {
        r.begin("insert_key").await;
        for i in 0..rows {
            r.exec(&format!(
                "INSERT INTO {MK} VALUES {}",
                many_keys_row(i, perm[i as usize])
            ))
            .await?;
        }
        r.end(n).await;
    } else {
        for chunk in (0..rows).collect::<Vec<_>>().chunks(1000) {
            let values: Vec<String> = chunk
                .iter()
                .map(|&i| many_keys_row(i, perm[i as usize]))
                .collect();
            r.must(&format!("INSERT INTO {MK} VALUES {}", values.join(",")))
                .await?;
        }
    }
    r.simple("update_of_primary_key_many_keys", false, |j| {
        format!("UPDATE {MK} SET field5=1 WHERE field_search={}", j % 256)
    })
    .await?;
    r.simple("delete_big_many_keys", false, |j| {
        format!("DELETE FROM {MK} WHERE field_search={}", j % 128)
    })
    .await?;
    r.simple("delete_all_many_keys", false, |_| {
        format!("DELETE FROM {MK}")
    })
    .await?;
    r.drop_table(MK).await
}

/// multiple_value_insert: rows in multi-row INSERTs of at most 1000 rows; a test is a row.
async fn multi_value(r: &mut Runner<'_>) -> DbResult<()> {
    let Some(n) = r.want("multiple_value_insert") else {
        return Ok(());
    };
    let t = "bench_mv";
    r.drop_table(t).await?;
    let sql = r.create_sql(
        t,
        "id int NOT NULL, id2 int NOT NULL, id3 int NOT NULL, dummy1 char(30), PRIMARY KEY (id, id2)",
    );
    r.must(&sql).await?;
    r.must(&format!("CREATE INDEX {t}_ix_id3 ON {t} (id3)"))
        .await?;
    r.begin("multiple_value_insert").await;
    let mut i = 0;
    while i < n {
        let end = (i + 1000).min(n);
        let values: Vec<String> = (i..end)
            .map(|k| format!("({k},{k},{k},'EFGHIJKLM')"))
            .collect();
        r.exec(&format!("INSERT INTO {t} VALUES {}", values.join(",")))
            .await?;
        i = end;
    }
    r.end(n).await;
    r.drop_table(t).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn insert_order_covers_every_id_once() {
        for rows in [1, 2, 10, 351] {
            let mut ids: Vec<u64> = super::insert_order(rows).into_iter().map(|x| x.0).collect();
            ids.sort();
            assert_eq!(ids, (0..rows).collect::<Vec<_>>());
        }
    }
}
