//! Payment (TPC-C 2.5): 15 % remote customers, 60 % chosen by last name. The bad-credit c_data
//! update is one CASE in the customer UPDATE (tpcc-mysql sends one of two UPDATEs after reading
//! c_credit). The warehouse's and district's names and addresses are read first, unlocked, by
//! one statement; then the customer (locked); then the four writes go together without waiting
//! for each other's replies (`Ctx::pipe`), the warehouse's update last: the warehouse row, which
//! every Payment of the warehouse updates, is locked from then until COMMIT (about 2 round
//! trips), not from the start of the transaction (about 8). h_data is built from the names
//! read (W_NAME, four spaces, D_NAME: 2.5.2.2).

use super::{begin, commit, ints, prep, texts, Ctx};
use crate::contract::Step;
use crate::db::{Conn, DbError, DbResult, ErrorClass, StmtId, Value};
use crate::rng::Rng;
use crate::workload::tpcc::data::{last_name, nurand, CConst};

pub(super) const WAREHOUSE_UPDATE: &str =
    "UPDATE warehouse SET w_ytd = w_ytd + CAST(? AS {int}) / 100.0 WHERE w_id = ?";
/// What 2.5.2.2 shows of the warehouse and the district, in one unlocked read.
pub(super) const WAREHOUSE_DISTRICT: &str = "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip, \
d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM warehouse, district WHERE w_id = ? AND d_w_id = w_id AND d_id = ?";
pub(super) const DISTRICT_UPDATE: &str =
    "UPDATE district SET d_ytd = d_ytd + CAST(? AS {int}) / 100.0 WHERE d_w_id = ? AND d_id = ?";
/// Customers of one last name ordered by c_first (shared with OrderStatus).
pub const CUSTOMERS_BY_NAME: &str =
    "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first";
pub(super) const CUSTOMER: &str = "SELECT CASE WHEN c_credit = 'BC' THEN 1 ELSE 0 END, CAST(ROUND(c_balance * 100) AS {int}) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?{for_update}";
pub(super) const CUSTOMER_UPDATE: &str = "UPDATE customer SET c_balance = c_balance - CAST(? AS {int}) / 100.0, \
c_ytd_payment = c_ytd_payment + CAST(? AS {int}) / 100.0, c_payment_cnt = c_payment_cnt + 1, \
c_data = CASE WHEN c_credit = 'BC' THEN SUBSTR(CONCAT(c_id, ' ', c_d_id, ' ', c_w_id, ' ', CAST(? AS {int}), ' ', CAST(? AS {int}), ' ', CAST(? AS {text}), ' | ', c_data), 1, 500) ELSE c_data END \
WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
pub(super) const HISTORY_INSERT: &str = "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
VALUES (CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CURRENT_TIMESTAMP, CAST(? AS {int}) / 100.0, CAST(? AS {text}))";

pub struct Stmts {
    warehouse_update: StmtId,
    warehouse_district: StmtId,
    district_update: StmtId,
    pub customers_by_name: StmtId,
    customer: StmtId,
    customer_update: StmtId,
    history_insert: StmtId,
}

impl Stmts {
    pub async fn prepare(conn: &mut Conn) -> DbResult<Self> {
        Ok(Stmts {
            warehouse_update: prep(conn, WAREHOUSE_UPDATE).await?,
            warehouse_district: prep(conn, WAREHOUSE_DISTRICT).await?,
            district_update: prep(conn, DISTRICT_UPDATE).await?,
            customers_by_name: prep(conn, CUSTOMERS_BY_NAME).await?,
            customer: prep(conn, CUSTOMER).await?,
            customer_update: prep(conn, CUSTOMER_UPDATE).await?,
            history_insert: prep(conn, HISTORY_INSERT).await?,
        })
    }
}

/// How the customer is named (2.5.1.2, 2.6.1.2).
#[derive(Debug, Clone)]
pub enum Customer {
    Id(i64),
    Last(String),
}

impl Customer {
    /// 60 % by last name (NURand(255,0,999) with the run's C), else by NURand(1023,1,3000).
    pub fn pick(r: &mut Rng, c: &CConst) -> Customer {
        if r.range(1, 100) <= 60 {
            let mut s = String::with_capacity(16);
            last_name(nurand(r, 255, 0, 999, c.c_last_run), &mut s);
            Customer::Last(s)
        } else {
            Customer::Id(nurand(r, 1023, 1, 3000, c.c_id) as i64)
        }
    }

    /// The customer's id: by last name, the one at position ceil(n/2) in c_first order.
    pub async fn resolve(
        &self,
        cx: &mut Ctx,
        conn: &mut Conn,
        by_name: StmtId,
        w: i64,
        d: i64,
    ) -> DbResult<i64> {
        match self {
            Customer::Id(c) => Ok(*c),
            Customer::Last(name) => {
                let n = ints(
                    cx,
                    conn,
                    by_name,
                    &[Value::Int(w), Value::Int(d), Value::Text(name.clone())],
                )
                .await?;
                if n == 0 {
                    return Err(DbError::new(
                        ErrorClass::Other,
                        format!("no customer named {name} in warehouse {w} district {d}"),
                    ));
                }
                Ok(cx.int((n as usize).div_ceil(2) - 1))
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Input {
    pub w: i64,
    pub d: i64,
    pub c_w: i64,
    pub c_d: i64,
    pub customer: Customer,
    pub amount_cents: i64,
}

pub fn input(r: &mut Rng, w: i64, warehouses: i64, c: &CConst) -> Input {
    let d = r.range(1, 10) as i64;
    // TPC-C 2.5.1.2: 85 % home customers, 15 % of another warehouse (when there is one).
    let (c_w, c_d) = if warehouses > 1 && r.range(1, 100) > 85 {
        let o = r.range(1, warehouses as u64 - 1) as i64;
        (if o >= w { o + 1 } else { o }, r.range(1, 10) as i64)
    } else {
        (w, d)
    };
    Input {
        w,
        d,
        c_w,
        c_d,
        customer: Customer::pick(r, c),
        amount_cents: r.range(100, 500_000) as i64,
    }
}

pub async fn run(st: &Stmts, cx: &mut Ctx, conn: &mut Conn, inp: &Input) -> DbResult<Step> {
    use Value::Int as I;
    let (w, d, amount) = (inp.w, inp.d, inp.amount_cents);
    begin(cx, conn, true).await?;
    if texts(cx, conn, st.warehouse_district, &[I(w), I(d)]).await? != 1 {
        return Err(DbError::new(
            ErrorClass::Other,
            "warehouse or district row not found",
        ));
    }
    // 2.5.2.2: H_DATA is W_NAME and D_NAME separated by four spaces.
    let h_data = format!(
        "{}    {}",
        cx.texts[0].as_deref().unwrap_or(""),
        cx.texts[6].as_deref().unwrap_or("")
    );
    let c = inp
        .customer
        .resolve(cx, conn, st.customers_by_name, inp.c_w, inp.c_d)
        .await?;
    if ints(cx, conn, st.customer, &[I(inp.c_w), I(inp.c_d), I(c)]).await? != 1 {
        return Err(DbError::new(ErrorClass::Other, "customer row not found"));
    }
    let amount_text = format!("{}.{:02}", amount / 100, amount % 100);
    cx.pipe(
        conn,
        st.customer_update,
        &[
            I(amount),
            I(amount),
            I(d),
            I(w),
            Value::Text(amount_text),
            I(inp.c_w),
            I(inp.c_d),
            I(c),
        ],
    )
    .await?;
    cx.pipe(
        conn,
        st.history_insert,
        &[
            I(inp.c_d),
            I(inp.c_w),
            I(c),
            I(d),
            I(w),
            I(amount),
            Value::Text(h_data),
        ],
    )
    .await?;
    cx.pipe(conn, st.district_update, &[I(amount), I(w), I(d)])
        .await?;
    // The hot row last: every Payment of this warehouse waits for its lock.
    cx.pipe(conn, st.warehouse_update, &[I(amount), I(w)])
        .await?;
    commit(cx, conn).await?;
    Ok(cx.step())
}
