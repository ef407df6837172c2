//! `enginebench check tpcc`: the consistency conditions of TPC-C 3.3.2.1 to 3.3.2.4, per
//! warehouse and district. Money is compared in integer cents.

use super::sql_for;
use crate::db::Conn;
use crate::error::{Error, Result};

const WAREHOUSE_YTD: &str = "SELECT w_id, CAST(ROUND(w_ytd * 100) AS {int}), \
(SELECT CAST(ROUND(SUM(d_ytd) * 100) AS {int}) FROM district WHERE d_w_id = w_id) \
FROM warehouse ORDER BY w_id";

const DISTRICTS: &str = "SELECT d_w_id, d_id, d_next_o_id, \
(SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id), \
(SELECT MAX(no_o_id) FROM new_orders WHERE no_w_id = d_w_id AND no_d_id = d_id), \
(SELECT MIN(no_o_id) FROM new_orders WHERE no_w_id = d_w_id AND no_d_id = d_id), \
(SELECT COUNT(*) FROM new_orders WHERE no_w_id = d_w_id AND no_d_id = d_id), \
(SELECT SUM(o_ol_cnt) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id), \
(SELECT COUNT(*) FROM order_line WHERE ol_w_id = d_w_id AND ol_d_id = d_id) \
FROM district ORDER BY d_w_id, d_id";

/// One failed condition, said in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub condition: u8,
    pub warehouse: i64,
    pub district: Option<i64>,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "condition {} (TPC-C 3.3.2.{}) fails for warehouse {}",
            self.condition, self.condition, self.warehouse
        )?;
        if let Some(d) = self.district {
            write!(f, " district {d}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// What `check` found: the number of warehouses and districts looked at, and the failures.
pub struct Report {
    pub warehouses: usize,
    pub districts: usize,
    pub failures: Vec<Failure>,
}

fn num(v: &Option<String>) -> Option<i64> {
    v.as_deref()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .map(|f| f.round() as i64)
}

fn show(v: Option<i64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "NULL".into())
}

pub async fn run(conn: &mut Conn) -> Result<Report> {
    for t in super::data::TABLES {
        if !conn
            .table_exists(t)
            .await
            .map_err(|e| super::db(e, "reading the catalog"))?
        {
            return Err(Error::usage(format!(
                "table {t} is missing: prepare the tpcc workload first (enginebench prepare tpcc)"
            )));
        }
    }
    let dbms = conn.dbms();
    let mut failures = Vec::new();
    let ws = conn
        .query(&sql_for(dbms, WAREHOUSE_YTD))
        .await
        .map_err(|e| super::db(e, "checking condition 1"))?;
    for r in &ws {
        let (w, w_ytd, d_sum) = (num(&r[0]).unwrap_or(0), num(&r[1]), num(&r[2]));
        if w_ytd != d_sum {
            failures.push(Failure {
                condition: 1,
                warehouse: w,
                district: None,
                message: format!(
                    "W_YTD = {} cents but sum(D_YTD) = {} cents",
                    show(w_ytd),
                    show(d_sum)
                ),
            });
        }
    }
    let ds = conn
        .query(DISTRICTS)
        .await
        .map_err(|e| super::db(e, "checking conditions 2 to 4"))?;
    for r in &ds {
        let v: Vec<Option<i64>> = r.iter().map(num).collect();
        let (w, d) = (v[0].unwrap_or(0), v[1].unwrap_or(0));
        let (next, max_o, max_no, min_no, count_no, sum_ol_cnt, count_ol) =
            (v[2], v[3], v[4], v[5], v[6], v[7], v[8]);
        let mut fail = |condition: u8, message: String| {
            failures.push(Failure {
                condition,
                warehouse: w,
                district: Some(d),
                message,
            })
        };
        // 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) (the latter when there are
        // undelivered orders).
        let prev = next.map(|n| n - 1);
        if prev != max_o || (max_no.is_some() && max_no != max_o) {
            fail(
                2,
                format!(
                    "D_NEXT_O_ID - 1 = {}, max(O_ID) = {}, max(NO_O_ID) = {}",
                    show(prev),
                    show(max_o),
                    show(max_no)
                ),
            );
        }
        // 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = rows in new_orders.
        if let (Some(hi), Some(lo)) = (max_no, min_no) {
            if hi - lo + 1 != count_no.unwrap_or(0) {
                fail(
                    3,
                    format!(
                        "max(NO_O_ID) - min(NO_O_ID) + 1 = {} but new_orders has {} rows",
                        hi - lo + 1,
                        show(count_no)
                    ),
                );
            }
        }
        // 3.3.2.4: sum(O_OL_CNT) = rows in order_line.
        if sum_ol_cnt.unwrap_or(0) != count_ol.unwrap_or(0) {
            fail(
                4,
                format!(
                    "sum(O_OL_CNT) = {} but order_line has {} rows",
                    show(sum_ol_cnt),
                    show(count_ol)
                ),
            );
        }
    }
    Ok(Report {
        warehouses: ws.len(),
        districts: ds.len(),
        failures,
    })
}
