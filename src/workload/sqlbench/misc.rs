//! The small groups: alter (test-alter-table), big-tables (test-big-tables), connect
//! (test-connect) and create (test-create).

use super::exec::Runner;
use crate::db::{DbResult, Value};

const ALTER: &str = "bench_alter";
/// Columns the alter table starts with (the script's start field count).
const ALTER_START: u64 = 8;

/// test-alter-table: a table of 8 int columns and 1000 rows (x scale, at least 10); columns are
/// added one ALTER at a time, 8 indexes built and dropped, then the added columns dropped.
pub async fn alter(r: &mut Runner<'_>) -> DbResult<()> {
    if !r.any(&[
        "alter_table_add",
        "create_index",
        "drop_index",
        "alter_table_drop",
    ]) {
        return Ok(());
    }
    r.drop_table(ALTER).await?;
    let cols: Vec<String> = (1..=ALTER_START)
        .map(|i| format!("i{i} int not null"))
        .collect();
    let sql = r.create_sql(ALTER, &cols.join(", "));
    r.must(&sql).await?;
    let rows = ((1000.0 * r.spec.scale).round() as i64).max(10);
    let names: Vec<String> = (1..=ALTER_START).map(|i| format!("i{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    r.load(
        ALTER,
        &names,
        (0..rows).map(|i| vec![Value::Int(i); ALTER_START as usize]),
    )
    .await?;
    // Columns i9.. added so far; indexes made so far.
    let mut added: u64 = 0;
    let add = |k: u64| {
        format!(
            "ALTER TABLE {ALTER} ADD COLUMN i{} integer",
            ALTER_START + k + 1
        )
    };
    if let Some(n) = r.want("alter_table_add") {
        r.begin("alter_table_add").await;
        for k in 0..n {
            r.exec(&add(k)).await?;
        }
        added = n;
        r.end(n).await;
    }
    let mut indexes: u64 = 0;
    // The index of test k is on column i(k mod 8 + 1), as the script's on i1..i8.
    let index = |k: u64| {
        format!(
            "CREATE INDEX {ALTER}_ind{k} ON {ALTER} (i{})",
            k % ALTER_START + 1
        )
    };
    if let Some(n) = r.want("create_index") {
        r.begin("create_index").await;
        for k in 0..n {
            r.exec(&index(k)).await?;
        }
        indexes = n;
        r.end(n).await;
    }
    if let Some(n) = r.want("drop_index") {
        r.begin("drop_index").await;
        r.pause();
        for k in indexes..n {
            r.must(&index(k)).await?;
        }
        r.resume();
        for k in 0..n {
            let sql = r.drop_index_sql(ALTER, &format!("{ALTER}_ind{k}"));
            r.exec(&sql).await?;
        }
        r.end(n).await;
    }
    if let Some(n) = r.want("alter_table_drop") {
        r.begin("alter_table_drop").await;
        r.pause();
        for k in added..n {
            r.must(&add(k)).await?;
        }
        added = added.max(n);
        r.resume();
        for k in 0..n {
            // Newest first, as the script drops from the end.
            r.exec(&format!(
                "ALTER TABLE {ALTER} DROP COLUMN i{}",
                ALTER_START + added - k
            ))
            .await?;
        }
        r.end(n).await;
    }
    r.drop_table(ALTER).await
}

const WIDE: &str = "bench_wide";
/// Columns of the big table (the script's 1000 fields).
const WIDE_COLS: usize = 1000;

/// test-big-tables: a table of 1000 int columns with one row; SELECT * of it, then INSERTs of
/// whole rows (half with the column list, half without).
pub async fn big_tables(r: &mut Runner<'_>) -> DbResult<()> {
    if !r.any(&["select_many_fields", "insert_many_fields"]) {
        return Ok(());
    }
    r.drop_table(WIDE).await?;
    let cols: Vec<String> = (1..=WIDE_COLS).map(|i| format!("i{i} int")).collect();
    let sql = r.create_sql(WIDE, &cols.join(", "));
    r.must(&sql).await?;
    let values = vec!["1"; WIDE_COLS].join(",");
    let names: Vec<String> = (1..=WIDE_COLS).map(|i| format!("i{i}")).collect();
    let names = names.join(",");
    r.must(&format!("INSERT INTO {WIDE} VALUES ({values})"))
        .await?;
    r.simple("select_many_fields", true, |_| {
        format!("SELECT * FROM {WIDE}")
    })
    .await?;
    if let Some(n) = r.want("insert_many_fields") {
        r.begin("insert_many_fields").await;
        let plain = format!("INSERT INTO {WIDE} VALUES ({values})");
        let named = format!("INSERT INTO {WIDE} ({names}) VALUES ({values})");
        for j in 0..n {
            r.exec(if j < n / 2 { &plain } else { &named }).await?;
        }
        r.end(n).await;
    }
    r.drop_table(WIDE).await
}

const CONN_TABLE: &str = "bench_conn";
const BLOB_TABLE: &str = "bench_blob";
/// Length of the big string of select_big_str (the script's 65000 bytes).
const BIG_STR: usize = 65000;

/// One connect (+ optional statement) + disconnect per test.
async fn connect_op(r: &mut Runner<'_>, name: &str, stmt: Option<&str>) -> DbResult<()> {
    let Some(n) = r.want(name) else {
        return Ok(());
    };
    r.begin(name).await;
    for j in 0..n {
        if let Some(mut c) = r.connect().await? {
            if let Some(s) = stmt {
                let q = s.replace("{j}", &j.to_string());
                if let Err(e) = c.query(&q).await {
                    r.count_other(e);
                }
            }
            drop(c);
        }
        if r.too_many_errors() {
            r.note = Some("stopped after 100 errors".into());
            break;
        }
    }
    r.end(n).await;
    Ok(())
}

/// test-connect: connects, trivial SELECTs, a one- and two-row table, a 65,000-byte string.
pub async fn connect(r: &mut Runner<'_>) -> DbResult<()> {
    connect_op(r, "connect", None).await?;
    connect_op(r, "connect+select_simple", Some("SELECT {j}")).await?;
    r.simple("select_simple", true, |j| format!("SELECT {j}"))
        .await?;
    r.simple("select_simple_cache", true, |_| "SELECT 10000".into())
        .await?;
    let table_ops = [
        "connect+select_1_row",
        "select_1_row",
        "select_1_row_cache",
        "select_2_rows",
        "select_column+column",
    ];
    if r.any(&table_ops) {
        r.drop_table(CONN_TABLE).await?;
        let sql = r.create_sql(
            CONN_TABLE,
            "a int NOT NULL, i int, s char(10), PRIMARY KEY (a)",
        );
        r.must(&sql).await?;
        r.must(&format!("INSERT INTO {CONN_TABLE} VALUES (1,100,'AAA')"))
            .await?;
        let one_row = format!("SELECT a,i,s,{{j}} FROM {CONN_TABLE}");
        connect_op(r, "connect+select_1_row", Some(&one_row)).await?;
        r.simple("select_1_row", true, |j| {
            format!("SELECT a,i,s,{j} FROM {CONN_TABLE}")
        })
        .await?;
        r.simple("select_1_row_cache", true, |_| {
            format!("SELECT a,i,s FROM {CONN_TABLE}")
        })
        .await?;
        r.must(&format!("INSERT INTO {CONN_TABLE} VALUES (2,200,'BBB')"))
            .await?;
        r.simple("select_2_rows", true, |j| {
            format!("SELECT a,i,s,{j} FROM {CONN_TABLE}")
        })
        .await?;
        r.simple("select_column+column", true, |j| {
            format!("SELECT a+a+a+a+a+a+a+a+a+{j} FROM {CONN_TABLE}")
        })
        .await?;
        r.drop_table(CONN_TABLE).await?;
    }
    if r.want("select_big_str").is_some() {
        r.drop_table(BLOB_TABLE).await?;
        let sql = r.create_sql(BLOB_TABLE, "b text");
        r.must(&sql).await?;
        r.conn
            .insert_rows(
                BLOB_TABLE,
                &["b"],
                &[vec![Value::Text("A".repeat(BIG_STR))]],
            )
            .await?;
        r.simple("select_big_str", true, |j| {
            format!("SELECT b,{j} FROM {BLOB_TABLE}")
        })
        .await?;
        r.drop_table(BLOB_TABLE).await?;
    }
    Ok(())
}

/// The 5-column table of test-create.
const SMALL_TABLE: &str =
    "i int NOT NULL, d double precision, f float, s char(10), v varchar(100), PRIMARY KEY (i)";

/// The 16-key table of test-create (create_key+drop): its body and the statements that add its
/// indexes. MySQL takes the indexes inside CREATE TABLE (one statement, as sql-bench sent it);
/// PostgreSQL and SQLite need a CREATE INDEX each (index names carry the table's name because
/// PostgreSQL's are per schema).
fn many_keys_body(table: &str, inline: bool) -> (String, Vec<String>) {
    let mut cols = vec![
        "field1 smallint not null".to_string(),
        "field2 int not null".into(),
        "field3 smallint not null".into(),
        "field4 char(16) not null".into(),
        "field5 int not null".into(),
        "field6 float not null".into(),
        "field7 double precision not null".into(),
    ];
    for i in 8..=16 {
        cols.push(format!("field{i} char(5) not null"));
    }
    let pk: Vec<String> = (1..=16).map(|i| format!("field{i}")).collect();
    cols.push(format!("PRIMARY KEY ({})", pk.join(",")));
    if inline {
        cols.extend((2..=16).map(|i| format!("INDEX {table}_index{i} (field{i})")));
        return (cols.join(", "), Vec::new());
    }
    let idx = (2..=16)
        .map(|i| format!("CREATE INDEX {table}_index{i} ON {table} (field{i})"))
        .collect();
    (cols.join(", "), idx)
}

/// test-create: many tables created, read and dropped; create+drop pairs (a small table and a
/// 16-key one); create_table/drop_table of assorted table shapes.
pub async fn create(r: &mut Runner<'_>) -> DbResult<()> {
    let many = |i: u64| format!("bench_{i}");
    let mut created: u64 = 0;
    if r.any(&[
        "create_MANY_tables",
        "select_group_when_MANY_tables",
        "drop_table_when_MANY_tables",
    ]) {
        if let Some(n) = r.want("create_MANY_tables") {
            r.begin("create_MANY_tables").await;
            for i in 1..=n {
                let sql = r.create_sql(&many(i), SMALL_TABLE);
                r.exec(&sql).await?;
            }
            created = n;
            r.end(n).await;
        }
        let need = r
            .want("select_group_when_MANY_tables")
            .max(r.want("drop_table_when_MANY_tables"))
            .unwrap_or(0);
        for i in created + 1..=need {
            let sql = r.create_sql(&many(i), SMALL_TABLE);
            r.must(&sql).await?;
        }
        created = created.max(need);
        r.simple("select_group_when_MANY_tables", true, |j| {
            format!("SELECT count(*) FROM {}", many(j + 1))
        })
        .await?;
        r.simple("drop_table_when_MANY_tables", false, |j| {
            format!("DROP TABLE {}", many(j + 1))
        })
        .await?;
        let dropped = r.want("drop_table_when_MANY_tables").unwrap_or(0);
        for i in dropped + 1..=created {
            r.drop_table(&many(i)).await?;
        }
    }
    if let Some(n) = r.want("create+drop") {
        r.begin("create+drop").await;
        for i in 1..=n {
            let sql = r.create_sql(&many(i), SMALL_TABLE);
            r.exec(&sql).await?;
            r.exec(&format!("DROP TABLE {}", many(i))).await?;
            if r.too_many_errors() {
                break;
            }
        }
        r.end(n).await;
    }
    if let Some(n) = r.want("create_key+drop") {
        r.begin("create_key+drop").await;
        for i in 1..=n {
            let t = many(i);
            let (body, idx) = many_keys_body(&t, r.dbms == crate::db::Dbms::Mysql);
            let sql = r.create_sql(&t, &body);
            r.exec(&sql).await?;
            for s in idx {
                r.exec(&s).await?;
            }
            r.exec(&format!("DROP TABLE {t}")).await?;
            if r.too_many_errors() {
                break;
            }
        }
        r.end(n).await;
    }
    if r.any(&["create_table", "drop_table"]) {
        // Shapes of the tables the ATIS and Wisconsin scripts create, in turn.
        let shapes = [
            super::wisconsin::TABLE_BODY,
            SMALL_TABLE,
            "code char(4) NOT NULL, name varchar(40) NOT NULL, state char(2), PRIMARY KEY (code)",
        ];
        let t = |i: u64| format!("bench_ct{i}");
        let mut made = 0;
        if let Some(n) = r.want("create_table") {
            r.begin("create_table").await;
            for i in 0..n {
                let sql = r.create_sql(&t(i), shapes[i as usize % shapes.len()]);
                r.exec(&sql).await?;
            }
            made = n;
            r.end(n).await;
        }
        let n_drop = r.want("drop_table").unwrap_or(0);
        for i in made..n_drop {
            let sql = r.create_sql(&t(i), shapes[i as usize % shapes.len()]);
            r.must(&sql).await?;
        }
        r.simple("drop_table", false, |i| format!("DROP TABLE {}", t(i)))
            .await?;
        for i in n_drop..made.max(n_drop) {
            r.drop_table(&t(i)).await?;
        }
    }
    Ok(())
}
