//! test-select: a table keyed on (region, idn) with two more multi-part unique keys, read with
//! aggregates, big ORs, MIN/MAX and COUNT on key parts, GROUP BY and COUNT(DISTINCT).

use super::exec::Runner;
use crate::db::{DbResult, Value};

const T: &str = "bench_sel";
const REGIONS: u64 = 6;
const GROUPS: u64 = 100;

fn region(i: u64) -> char {
    (b'A' + (i % REGIONS) as u8) as char
}

pub async fn select(r: &mut Runner<'_>) -> DbResult<()> {
    let ops: Vec<&str> = super::OPS
        .iter()
        .filter(|o| o.1 == "select")
        .map(|o| o.0)
        .collect();
    if !r.any(&ops) {
        return Ok(());
    }
    // Rows: the script's 10,000 x scale, at least 100.
    let rows = ((10_000.0 * r.spec.scale).round() as u64).max(100);
    fill(r, rows).await?;
    caches_and_ranges(r).await?;
    keys_and_counts(r).await?;
    r.drop_table(T).await
}

/// The table, with its unique keys, loaded with `rows` rows.
async fn fill(r: &mut Runner<'_>, rows: u64) -> DbResult<()> {
    r.drop_table(T).await?;
    let sql = r.create_sql(
        T,
        "region char(1) NOT NULL, idn int NOT NULL, rev_idn int NOT NULL, grp int NOT NULL, grp_no_key int NOT NULL, PRIMARY KEY (region, idn)",
    );
    r.must(&sql).await?;
    r.must(&format!(
        "CREATE UNIQUE INDEX {T}_rev ON {T} (region, rev_idn)"
    ))
    .await?;
    r.must(&format!(
        "CREATE UNIQUE INDEX {T}_grp ON {T} (region, grp, idn)"
    ))
    .await?;
    r.load(
        T,
        &["region", "idn", "rev_idn", "grp", "grp_no_key"],
        (0..rows).map(|i| {
            let grp = (i * 3 % GROUPS) as i64;
            vec![
                Value::Text(region(i).to_string()),
                Value::Int(i as i64),
                Value::Int((rows - 1 - i) as i64),
                Value::Int(grp),
                Value::Int(grp),
            ]
        }),
    )
    .await?;
    crate::contract::after_load(&mut r.conn, &[T])
        .await
        .map_err(|e| crate::db::DbError::new(crate::db::ErrorClass::Other, e.message))?;
    Ok(())
}

/// Sums over the table, and big selects and ORs over its key parts.
async fn caches_and_ranges(r: &mut Runner<'_>) -> DbResult<()> {
    r.simple("select_cache", true, |_| {
        format!("SELECT sum(idn+100),sum(rev_idn-100) FROM {T}")
    })
    .await?;
    r.simple("select_cache2", true, |j| {
        format!("SELECT sum(idn+{j}),sum(rev_idn-{j}) FROM {T}")
    })
    .await?;
    // Seven selects per round; the region cycles through one more letter than exists (misses).
    r.simple("select_big", true, |j| {
        let i = j / 7;
        let grp = i * 11 % GROUPS;
        let reg = (b'A' + (i % (REGIONS + 1)) as u8) as char;
        match j % 7 {
            0 => format!("SELECT idn FROM {T} WHERE region='{reg}'"),
            1 => format!("SELECT idn FROM {T} WHERE region='{reg}' AND idn={i}"),
            2 => format!("SELECT idn FROM {T} WHERE region='{reg}' AND rev_idn={i}"),
            3 => format!("SELECT idn FROM {T} WHERE region='{reg}' AND grp={grp}"),
            4 => format!("SELECT idn FROM {T} WHERE region>='B' AND region<='C' AND grp={grp}"),
            5 => format!("SELECT idn FROM {T} WHERE region>='B' AND region<='E' AND grp={grp}"),
            _ => format!("SELECT idn FROM {T} WHERE grp={grp}"),
        }
    })
    .await?;
    // Many ORs over grp values (and an IN list, and extra ranges), as the script's select_range.
    r.simple("select_range", true, |j| {
        let i = j / 5;
        let reg = (b'A' + (i % (REGIONS + 1)) as u8) as char;
        let mut x: u64 = 1 + i;
        let grps: Vec<u64> = (0..100)
            .map(|k| {
                x = (x * 31 + 7 + k) % 100_003;
                x % GROUPS
            })
            .collect();
        let ors: Vec<String> = grps.iter().map(|g| format!("grp={g}")).collect();
        let ors = ors.join(" OR ");
        let pairs: Vec<String> = grps
            .iter()
            .take(40)
            .enumerate()
            .map(|(k, g)| format!("(region='{}' AND grp={g})", region(k as u64 + i)))
            .collect();
        let in_list: Vec<String> = grps.iter().map(u64::to_string).collect();
        match j % 5 {
            0 => format!(
                "SELECT * FROM {T} WHERE region='{reg}' AND grp IN ({})",
                in_list.join(",")
            ),
            1 => format!("SELECT * FROM {T} WHERE region='{reg}' AND ({ors})"),
            2 => format!("SELECT * FROM {T} WHERE {}", pairs.join(" OR ")),
            3 => format!("SELECT * FROM {T} WHERE (region='{reg}' AND ({ors})) AND idn < 50"),
            _ => format!(
                "SELECT * FROM {T} WHERE ((region='{reg}' AND ({ors})) OR (region='A' AND grp < 10)) AND region <= 'B'"
            ),
        }
    })
    .await?;
    Ok(())
}

/// MIN/MAX and COUNT on key parts, GROUP BY and COUNT(DISTINCT).
async fn keys_and_counts(r: &mut Runner<'_>) -> DbResult<()> {
    r.simple("min_max_on_key", true, |j| {
        let i = j / 7;
        let reg = region(i);
        let grp = i * 3 % GROUPS;
        match j % 7 {
            0 => format!("SELECT min(region) FROM {T}"),
            1 => format!("SELECT max(region) FROM {T}"),
            2 => format!("SELECT min(region),max(region) FROM {T}"),
            3 => format!("SELECT min(rev_idn) FROM {T} WHERE region='{reg}'"),
            4 => format!("SELECT max(grp) FROM {T} WHERE region='{reg}'"),
            5 => format!("SELECT max(idn) FROM {T} WHERE region='{reg}' AND grp={grp}"),
            _ => format!("SELECT max(region) FROM {T} WHERE region<'{reg}'"),
        }
    })
    .await?;
    r.simple("count_on_key", true, |j| {
        let i = j / 5;
        let reg = region(i);
        let grp = i * 3 % GROUPS;
        match j % 5 {
            0 => format!("SELECT count(*) FROM {T} WHERE region='{reg}'"),
            1 => format!("SELECT count(*) FROM {T} WHERE region='{reg}' AND grp={grp}"),
            2 => format!("SELECT count(*) FROM {T} WHERE region>'{reg}'"),
            3 => format!("SELECT count(*) FROM {T} WHERE region<='{reg}'"),
            _ => format!("SELECT count(*) FROM {T} WHERE region='{reg}' AND grp>{grp}"),
        }
    })
    .await?;
    for (name, q) in [
        (
            "count_group_on_key_parts",
            "SELECT grp,count(*) FROM {T} GROUP BY grp",
        ),
        (
            "count_distinct_key_prefix",
            "SELECT count(distinct region) FROM {T}",
        ),
        ("count_distinct", "SELECT count(distinct grp) FROM {T}"),
        (
            "count_distinct_2",
            "SELECT count(distinct grp),count(distinct rev_idn) FROM {T}",
        ),
        (
            "count_distinct_group_on_key",
            "SELECT region,count(distinct idn) FROM {T} GROUP BY region",
        ),
        (
            "count_distinct_group_on_key_parts",
            "SELECT grp,count(distinct idn) FROM {T} GROUP BY grp",
        ),
        (
            "count_distinct_group",
            "SELECT grp,count(distinct rev_idn) FROM {T} GROUP BY grp",
        ),
        (
            "count_distinct_big",
            "SELECT idn,count(distinct region) FROM {T} GROUP BY idn",
        ),
    ] {
        let q = q.replace("{T}", T);
        r.simple(name, true, |_| q.clone()).await?;
    }
    Ok(())
}
