//! Delivery (TPC-C 2.7): all 10 districts in one transaction (the spec allows up to 10); a
//! district without an undelivered order is skipped and counted. The oldest new order is read
//! with FOR UPDATE on MySQL/PostgreSQL so that two concurrent Deliveries cannot both take it
//! (tpcc-mysql reads MIN(no_o_id) without a lock).

use super::{begin, commit, ints, prep, Ctx};
use crate::db::{Conn, DbResult, StmtId, Value};
use crate::rng::Rng;
use crate::runner::Step;

const OLDEST_NEW_ORDER: &str = "SELECT no_o_id FROM new_orders WHERE no_d_id = ? AND no_w_id = ? ORDER BY no_o_id LIMIT 1{for_update}";
const NEW_ORDER_DELETE: &str =
    "DELETE FROM new_orders WHERE no_o_id = ? AND no_d_id = ? AND no_w_id = ?";
const ORDER_CUSTOMER: &str =
    "SELECT o_c_id FROM orders WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?";
const ORDER_UPDATE: &str =
    "UPDATE orders SET o_carrier_id = ? WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?";
const LINES_UPDATE: &str = "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?";
const LINES_SUM: &str = "SELECT CAST(ROUND(SUM(ol_amount) * 100) AS {int}) FROM order_line WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?";
const CUSTOMER_UPDATE: &str = "UPDATE customer SET c_balance = c_balance + CAST(? AS {int}) / 100.0, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = ? AND c_d_id = ? AND c_w_id = ?";

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
    let mut skipped_here = 0;
    begin(cx, conn, true).await?;
    for d in 1..=10i64 {
        if ints(cx, conn, st.oldest_new_order, &[I(d), I(w)]).await? == 0 {
            skipped_here += 1;
            continue;
        }
        let o = cx.int(0);
        cx.exec(conn, st.new_order_delete, &[I(o), I(d), I(w)])
            .await?;
        ints(cx, conn, st.order_customer, &[I(o), I(d), I(w)]).await?;
        let c = cx.int(0);
        cx.exec(conn, st.order_update, &[I(inp.carrier), I(o), I(d), I(w)])
            .await?;
        cx.exec(conn, st.lines_update, &[I(o), I(d), I(w)]).await?;
        ints(cx, conn, st.lines_sum, &[I(o), I(d), I(w)]).await?;
        let amount = cx.int(0);
        cx.exec(conn, st.customer_update, &[I(amount), I(c), I(d), I(w)])
            .await?;
    }
    commit(cx, conn).await?;
    // Counted only once the transaction committed (a retried attempt does not count twice).
    *skipped += skipped_here;
    Ok(cx.step())
}
