//! NewOrder (TPC-C 2.4): statements in tpcc-mysql's order; 1 % of orders name an unused item
//! and roll back (a user rollback, counted apart from commits, not an error).

use super::{begin, commit, ints, prep, Ctx};
use crate::runner::Step;
use crate::target::{Conn, DbError, DbResult, ErrorClass, StmtId, Value};
use crate::workload::rng::Rng;
use crate::workload::tpcc::data::{nurand, CConst, ITEMS};

const CUSTOMER_WAREHOUSE: &str = "SELECT CAST(ROUND(c_discount * 10000) AS {int}), CASE WHEN c_credit = 'BC' THEN 1 ELSE 0 END, CAST(ROUND(w_tax * 10000) AS {int}) FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?";
const DISTRICT: &str = "SELECT d_next_o_id, CAST(ROUND(d_tax * 10000) AS {int}) FROM district WHERE d_id = ? AND d_w_id = ?{for_update}";
const DISTRICT_UPDATE: &str =
    "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_id = ? AND d_w_id = ?";
const ORDER_INSERT: &str = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)";
const NEW_ORDER_INSERT: &str =
    "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)";
/// Price in cents, and whether i_data holds "ORIGINAL" (the brand-generic flag of 2.4.2.2).
const ITEM: &str = "SELECT CAST(ROUND(i_price * 100) AS {int}), CASE WHEN i_data LIKE '%ORIGINAL%' THEN 1 ELSE 0 END FROM item WHERE i_id = ?";
const STOCK: &str = "SELECT s_quantity, CASE WHEN s_data LIKE '%ORIGINAL%' THEN 1 ELSE 0 END FROM stock WHERE s_i_id = ? AND s_w_id = ?{for_update}";
const STOCK_UPDATE: &str = "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + CAST(? AS {int}), s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?";
/// ol_dist_info is copied server-side from the district's s_dist_XX column.
const ORDER_LINE_INSERT: &str = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) \
SELECT CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}) / 100.0, \
CASE CAST(? AS {int}) WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 \
WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END \
FROM stock WHERE s_i_id = ? AND s_w_id = ?";

pub struct Stmts {
    customer_warehouse: StmtId,
    district: StmtId,
    district_update: StmtId,
    order_insert: StmtId,
    new_order_insert: StmtId,
    item: StmtId,
    stock: StmtId,
    stock_update: StmtId,
    order_line_insert: StmtId,
}

impl Stmts {
    pub async fn prepare(conn: &mut Conn) -> DbResult<Self> {
        Ok(Stmts {
            customer_warehouse: prep(conn, CUSTOMER_WAREHOUSE).await?,
            district: prep(conn, DISTRICT).await?,
            district_update: prep(conn, DISTRICT_UPDATE).await?,
            order_insert: prep(conn, ORDER_INSERT).await?,
            new_order_insert: prep(conn, NEW_ORDER_INSERT).await?,
            item: prep(conn, ITEM).await?,
            stock: prep(conn, STOCK).await?,
            stock_update: prep(conn, STOCK_UPDATE).await?,
            order_line_insert: prep(conn, ORDER_LINE_INSERT).await?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Line {
    pub i_id: i64,
    pub supply_w: i64,
    pub quantity: i64,
}

#[derive(Debug, Clone)]
pub struct Input {
    pub w: i64,
    pub d: i64,
    pub c: i64,
    pub lines: Vec<Line>,
}

/// The input of 2.4.1 for home warehouse `w` of `warehouses`.
pub fn input(r: &mut Rng, w: i64, warehouses: i64, c: &CConst) -> Input {
    let d = r.range(1, 10) as i64;
    let cid = nurand(r, 1023, 1, 3000, c.c_id) as i64;
    let n = r.range(5, 15) as usize;
    // TPC-C 2.4.1.4: 1 % of NewOrders name an unused item as their last line.
    let rollback = r.range(1, 100) == 1;
    let mut lines = Vec::with_capacity(n);
    for k in 0..n {
        let i_id = if rollback && k == n - 1 {
            ITEMS as i64 + 1
        } else {
            nurand(r, 8191, 1, ITEMS, c.c_ol_i_id) as i64
        };
        // TPC-C 2.4.1.5: 1 % of lines are supplied by another warehouse (when there is one).
        let supply_w = if warehouses > 1 && r.range(1, 100) == 1 {
            let o = r.range(1, warehouses as u64 - 1) as i64;
            if o >= w {
                o + 1
            } else {
                o
            }
        } else {
            w
        };
        lines.push(Line {
            i_id,
            supply_w,
            quantity: r.range(1, 10) as i64,
        });
    }
    Input {
        w,
        d,
        c: cid,
        lines,
    }
}

pub async fn run(st: &Stmts, cx: &mut Ctx, conn: &mut Conn, inp: &Input) -> DbResult<Step> {
    use Value::Int as I;
    let (w, d) = (inp.w, inp.d);
    begin(cx, conn, true).await?;
    ints(cx, conn, st.customer_warehouse, &[I(w), I(d), I(inp.c)]).await?;
    let (discount, w_tax) = (cx.int(0), cx.int(2));
    if ints(cx, conn, st.district, &[I(d), I(w)]).await? != 1 {
        return Err(DbError::new(ErrorClass::Other, "district row not found"));
    }
    let (o_id, d_tax) = (cx.int(0), cx.int(1));
    cx.exec(conn, st.district_update, &[I(d), I(w)]).await?;
    let all_local = inp.lines.iter().all(|l| l.supply_w == w) as i64;
    cx.exec(
        conn,
        st.order_insert,
        &[
            I(o_id),
            I(d),
            I(w),
            I(inp.c),
            I(inp.lines.len() as i64),
            I(all_local),
        ],
    )
    .await?;
    cx.exec(conn, st.new_order_insert, &[I(o_id), I(d), I(w)])
        .await?;
    let mut total_cents = 0i64;
    for (k, l) in inp.lines.iter().enumerate() {
        if ints(cx, conn, st.item, &[I(l.i_id)]).await? == 0 {
            // The unused item: the spec's rollback, not an error.
            cx.statements += 1;
            conn.execute("ROLLBACK").await?;
            return Ok(Step {
                rolled_back: true,
                ..cx.step()
            });
        }
        let price = cx.int(0);
        if ints(cx, conn, st.stock, &[I(l.i_id), I(l.supply_w)]).await? != 1 {
            return Err(DbError::new(ErrorClass::Other, "stock row not found"));
        }
        let s_q = cx.int(0);
        // TPC-C 2.4.2.2: restock by 91 when fewer than 10 would remain.
        let new_q = if s_q >= l.quantity + 10 {
            s_q - l.quantity
        } else {
            s_q - l.quantity + 91
        };
        let remote = (l.supply_w != w) as i64;
        cx.exec(
            conn,
            st.stock_update,
            &[I(new_q), I(l.quantity), I(remote), I(l.i_id), I(l.supply_w)],
        )
        .await?;
        let amount = l.quantity * price;
        total_cents += amount;
        cx.exec(
            conn,
            st.order_line_insert,
            &[
                I(o_id),
                I(d),
                I(w),
                I(k as i64 + 1),
                I(l.i_id),
                I(l.supply_w),
                I(l.quantity),
                I(amount),
                I(d),
                I(l.i_id),
                I(l.supply_w),
            ],
        )
        .await?;
    }
    // The total of 2.4.2.2 (shown to the terminal user; computed, not stored).
    std::hint::black_box(
        total_cents * (10_000 - discount) / 10_000 * (10_000 + w_tax + d_tax) / 10_000,
    );
    commit(cx, conn).await?;
    Ok(cx.step())
}
