//! Delivery (TPC-C 2.7): all 10 districts in one transaction (the spec allows up to 10); a
//! district without an undelivered order is skipped and counted. The oldest new order is read
//! with FOR UPDATE on MySQL/PostgreSQL so that two concurrent Deliveries cannot both take it
//! (tpcc-mysql reads MIN(no_o_id) without a lock).
//!
//! The same statements run in three phases instead of one statement per round trip (about
//! 71): the ten districts' oldest new orders (read together where the client can,
//! `Conn::exec_ints_batch`); their deletes, order and line updates sent ahead with the reads
//! of each order's customer and line total; the customers' updates sent ahead of COMMIT.

use super::{batch, begin, commit, prep, Ctx};
use crate::contract::Step;
use crate::db::{Conn, DbError, DbResult, ErrorClass, StmtId, Value};
use crate::rng::Rng;

pub(super) const OLDEST_NEW_ORDER: &str = "SELECT no_o_id FROM new_orders WHERE no_d_id = ? AND no_w_id = ? ORDER BY no_o_id LIMIT 1{for_update}";
pub(super) const NEW_ORDER_DELETE: &str =
    "DELETE FROM new_orders WHERE no_o_id = ? AND no_d_id = ? AND no_w_id = ?";
pub(super) const ORDER_CUSTOMER: &str =
    "SELECT o_c_id FROM orders WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?";
pub(super) const ORDER_UPDATE: &str =
    "UPDATE orders SET o_carrier_id = ? WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?";
pub(super) const LINES_UPDATE: &str = "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?";
pub(super) const LINES_SUM: &str = "SELECT CAST(ROUND(SUM(ol_amount) * 100) AS {int}) FROM order_line WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?";
pub(super) const CUSTOMER_UPDATE: &str = "UPDATE customer SET c_balance = c_balance + CAST(? AS {int}) / 100.0, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = ? AND c_d_id = ? AND c_w_id = ?";

pub struct Stmts {
    oldest_new_order: StmtId,
    new_order_delete: StmtId,
    order_customer: StmtId,
    order_update: StmtId,
    lines_update: StmtId,
    lines_sum: StmtId,
    customer_update: StmtId,
}

impl Stmts {
    pub async fn prepare(conn: &mut Conn) -> DbResult<Self> {
        Ok(Stmts {
            oldest_new_order: prep(conn, OLDEST_NEW_ORDER).await?,
            new_order_delete: prep(conn, NEW_ORDER_DELETE).await?,
            order_customer: prep(conn, ORDER_CUSTOMER).await?,
            order_update: prep(conn, ORDER_UPDATE).await?,
            lines_update: prep(conn, LINES_UPDATE).await?,
            lines_sum: prep(conn, LINES_SUM).await?,
            customer_update: prep(conn, CUSTOMER_UPDATE).await?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Input {
    pub w: i64,
    pub carrier: i64,
}

pub fn input(r: &mut Rng, w: i64) -> Input {
    Input {
        w,
        carrier: r.range(1, 10) as i64,
    }
}

/// Runs the transaction; adds the districts skipped (no new order) to `skipped`.
pub async fn run(
    st: &Stmts,
    cx: &mut Ctx,
    conn: &mut Conn,
    inp: &Input,
    skipped: &mut u64,
) -> DbResult<Step> {
    use Value::Int as I;
    let w = inp.w;
    begin(cx, conn, true).await?;
    // Phase 1: each district's oldest new order, locked.
    let keys: Vec<[Value; 2]> = (1..=10i64).map(|d| [I(d), I(w)]).collect();
    let calls: Vec<(StmtId, &[Value])> =
        keys.iter().map(|k| (st.oldest_new_order, &k[..])).collect();
    batch(cx, conn, &calls).await?;
    // (district, order) of the districts with one.
    let mut orders: Vec<(i64, i64)> = Vec::with_capacity(10);
    let mut at = 0;
    for (d, n) in (1..=10i64).zip(cx.counts.iter()) {
        if *n > 0 {
            orders.push((d, cx.int(at)));
        }
        at += *n as usize;
    }
    let skipped_here = 10 - orders.len() as u64;
    // Phase 2: the writes of each district's order, sent ahead of the reads of its customer
    // and its lines' total.
    let keys: Vec<[Value; 3]> = orders.iter().map(|&(d, o)| [I(o), I(d), I(w)]).collect();
    for k in &keys {
        cx.pipe(conn, st.new_order_delete, k).await?;
        let [o, d, w] = k.clone();
        cx.pipe(conn, st.order_update, &[I(inp.carrier), o, d, w])
            .await?;
        cx.pipe(conn, st.lines_update, k).await?;
    }
    let mut calls: Vec<(StmtId, &[Value])> = Vec::with_capacity(2 * keys.len());
    for k in &keys {
        calls.push((st.order_customer, &k[..]));
        calls.push((st.lines_sum, &k[..]));
    }
    if !calls.is_empty() {
        batch(cx, conn, &calls).await?;
        if cx.counts.iter().any(|n| *n != 1) {
            return Err(DbError::new(
                ErrorClass::Other,
                "a delivered order's row is missing",
            ));
        }
    }
    // Phase 3: each customer's balance and delivery count, sent ahead of COMMIT.
    for (i, &(d, _)) in orders.iter().enumerate() {
        let (c, amount) = (cx.int(2 * i), cx.int(2 * i + 1));
        cx.pipe(conn, st.customer_update, &[I(amount), I(c), I(d), I(w)])
            .await?;
    }
    commit(cx, conn).await?;
    // Counted only once the transaction committed (a retried attempt does not count twice).
    *skipped += skipped_here;
    Ok(cx.step())
}
