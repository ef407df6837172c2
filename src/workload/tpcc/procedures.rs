//! `--procedures` (MariaDB/MySQL): each transaction is one CALL of a stored procedure, as
//! HammerDB runs TPC-C. The procedures are created at prepare time from the statement mode's
//! own SQL constants (new_order.rs, payment.rs, ...): each `?` becomes a parameter or a local
//! variable, each read whose reply the client used becomes `SELECT ... INTO` (or a cursor
//! where it returns several rows), so a procedure reads, locks and writes the same rows in
//! the same order as the statements, under the session's isolation. What stays with the client:
//! the input (drawn exactly as in statement mode) and what it did with replies it needed only
//! for itself (NewOrder's total, OrderStatus's rows are read and dropped on the server).
//!
//! Each procedure starts and commits its own transaction. A failure inside it ends the CALL
//! with the server's error (a deadlock, a lock-wait timeout, a duplicate key, or SIGNAL for a
//! row that is missing), so the driver's error path is the statement mode's: ROLLBACK, the
//! same error classes, the same retry rule. NewOrder's unused item (2.4.1.4) is rolled back by
//! the procedure, which returns 1 (0 when it committed); Delivery returns the districts it
//! skipped.

use super::new_order::{self, MAX_LINES, MIN_LINES};
use super::{delivery, ints, order_status, payment, sql_for, stock_level, Ctx};
use crate::contract::Step;
use crate::db::{Conn, DbResult, Dbms, StmtId, Value};
use crate::error::{Context, Result};

/// NewOrder's parameters: warehouse, district, customer, line count, all-local flag, the
/// distinct items (count and 15 padded), the distinct home items (count and 15), and 3 per line.
const NEW_ORDER_PARAMS: usize = 7 + 5 * MAX_LINES;

/// The procedures, in KINDS order.
pub const NAMES: [&str; 5] = [
    "eb_tpcc_new_order",
    "eb_tpcc_payment",
    "eb_tpcc_order_status",
    "eb_tpcc_delivery",
    "eb_tpcc_stock_level",
];

/// A statement template (MySQL dialect) with its `?` replaced, in order, by `vars`.
fn bind(template: &str, vars: &[&str]) -> String {
    let sql = sql_for(Dbms::Mysql, template);
    let mut out = String::with_capacity(sql.len() + 16 * vars.len());
    let mut it = vars.iter();
    for ch in sql.chars() {
        if ch == '?' {
            out.push_str(it.next().expect("a variable for every placeholder"));
        } else {
            out.push(ch);
        }
    }
    assert!(it.next().is_none(), "more variables than placeholders");
    out
}

/// `SELECT a, b FROM ...` as `SELECT a, b INTO x, y FROM ...`.
fn into(select: &str, vars: &str) -> String {
    let at = select.find(" FROM ").expect("a SELECT with FROM");
    format!("{} INTO {vars}{}", &select[..at], &select[at..])
}

fn signal(what: &str) -> String {
    format!("SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '{what}';")
}

/// Declarations of the customer's lookup by last name (`p_c_last` in warehouse `w`, district
/// `d`): the statement mode's one SELECT, read by a cursor.
fn by_name_decls(w: &str, d: &str) -> String {
    format!(
        "DECLARE v_ids TEXT DEFAULT ''; DECLARE v_n INT DEFAULT 0; DECLARE r_c INT;\n\
         DECLARE c_by_name CURSOR FOR {};\n",
        bind(payment::CUSTOMERS_BY_NAME, &[w, d, "p_c_last"])
    )
}

/// `v_c`: `p_c_id`, or the customer at position ceil(n/2) in c_first order (as
/// `payment::Customer::resolve`).
fn by_name_code() -> String {
    format!(
        "IF p_c_id > 0 THEN SET v_c = p_c_id;\nELSE\n\
         SET v_nf = 0; OPEN c_by_name;\n\
         read_names: LOOP FETCH c_by_name INTO r_c; IF v_nf = 1 THEN LEAVE read_names; END IF;\n\
         SET v_n = v_n + 1, v_ids = CONCAT(v_ids, r_c, ','); END LOOP;\n\
         CLOSE c_by_name; SET v_nf = 0;\n\
         IF v_n = 0 THEN {} END IF;\n\
         SET v_c = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(v_ids, ',', CEIL(v_n / 2)), ',', -1) AS SIGNED);\n\
         END IF;\n",
        signal("no customer of that last name")
    )
}

fn payment_sql() -> String {
    let names = [
        "v_w_name",
        "v_w_street_1",
        "v_w_street_2",
        "v_w_city",
        "v_w_state",
        "v_w_zip",
        "v_d_name",
        "v_d_street_1",
        "v_d_street_2",
        "v_d_city",
        "v_d_state",
        "v_d_zip",
    ];
    let mut s = format!(
        "CREATE PROCEDURE {}(p_w INT, p_d INT, p_c_w INT, p_c_d INT, p_c_id INT, p_c_last VARCHAR(16), p_amount BIGINT, p_amount_text VARCHAR(20))\n\
         body: BEGIN\n\
         DECLARE v_nf INT DEFAULT 0; DECLARE v_c INT; DECLARE v_bc INT; DECLARE v_bal BIGINT;\n\
         DECLARE {} VARCHAR(20);\n",
        NAMES[1],
        names.join(", ")
    );
    s += &by_name_decls("p_c_w", "p_c_d");
    s += "DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_nf = 1;\nSTART TRANSACTION;\n";
    s += &into(
        &bind(payment::WAREHOUSE_DISTRICT, &["p_w", "p_d"]),
        &names.join(", "),
    );
    s += &format!(
        ";\nIF v_nf = 1 THEN {} END IF;\n",
        signal("warehouse or district row not found")
    );
    s += &by_name_code();
    s += &into(
        &bind(payment::CUSTOMER, &["p_c_w", "p_c_d", "v_c"]),
        "v_bc, v_bal",
    );
    s += &format!(
        ";\nIF v_nf = 1 THEN {} END IF;\n",
        signal("customer row not found")
    );
    let amount = "p_amount";
    s += &bind(
        payment::CUSTOMER_UPDATE,
        &[
            amount,
            amount,
            "p_d",
            "p_w",
            "p_amount_text",
            "p_c_w",
            "p_c_d",
            "v_c",
        ],
    );
    s += ";\n";
    // 2.5.2.2: H_DATA is W_NAME and D_NAME separated by four spaces.
    s += &bind(
        payment::HISTORY_INSERT,
        &[
            "p_c_d",
            "p_c_w",
            "v_c",
            "p_d",
            "p_w",
            amount,
            "CONCAT(COALESCE(v_w_name, ''), '    ', COALESCE(v_d_name, ''))",
        ],
    );
    s += ";\n";
    s += &bind(payment::DISTRICT_UPDATE, &[amount, "p_w", "p_d"]);
    s += ";\n";
    s += &bind(payment::WAREHOUSE_UPDATE, &[amount, "p_w"]);
    s += ";\nCOMMIT;\nEND";
    s
}

fn order_status_sql() -> String {
    let mut s = format!(
        "CREATE PROCEDURE {}(p_w INT, p_d INT, p_c_id INT, p_c_last VARCHAR(16))\n\
         body: BEGIN\n\
         DECLARE v_nf INT DEFAULT 0; DECLARE v_c INT; DECLARE v_o INT; DECLARE v_car INT;\n\
         DECLARE v_bal DECIMAL(12,2); DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2); DECLARE v_last VARCHAR(16);\n\
         DECLARE r_i INT; DECLARE r_s INT; DECLARE r_q INT; DECLARE r_amt DECIMAL(6,2); DECLARE r_dd DATETIME;\n",
        NAMES[2]
    );
    s += &by_name_decls("p_w", "p_d");
    s += &format!(
        "DECLARE c_lines CURSOR FOR {};\n",
        bind(order_status::ORDER_LINES, &["p_w", "p_d", "v_o"])
    );
    s += "DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_nf = 1;\nSTART TRANSACTION;\n";
    s += &by_name_code();
    s += &into(
        &bind(order_status::CUSTOMER, &["p_w", "p_d", "v_c"]),
        "v_bal, v_first, v_middle, v_last",
    );
    s += ";\nSET v_nf = 0;\n";
    s += &into(
        &bind(order_status::LAST_ORDER, &["p_w", "p_d", "v_c"]),
        "v_o, v_car",
    );
    s += ";\nIF v_nf = 0 THEN OPEN c_lines;\n\
          read_lines: LOOP FETCH c_lines INTO r_i, r_s, r_q, r_amt, r_dd; IF v_nf = 1 THEN LEAVE read_lines; END IF; END LOOP;\n\
          CLOSE c_lines; END IF;\nCOMMIT;\nEND";
    s
}

fn stock_level_sql() -> String {
    format!(
        "CREATE PROCEDURE {}(p_w INT, p_d INT, p_threshold INT)\n\
         body: BEGIN\n\
         DECLARE v_nf INT DEFAULT 0; DECLARE v_next INT DEFAULT 0; DECLARE v_cnt INT;\n\
         DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_nf = 1;\n\
         START TRANSACTION;\n{};\n{};\nCOMMIT;\nEND",
        NAMES[4],
        into(&bind(stock_level::DISTRICT_NEXT, &["p_w", "p_d"]), "v_next"),
        into(
            &bind(
                stock_level::LOW_STOCK,
                &["p_w", "p_d", "v_next", "v_next - 20", "p_w", "p_threshold"]
            ),
            "v_cnt"
        ),
    )
}

/// The statement mode's three phases, in the same order: the ten oldest new orders (locked),
/// each order's writes, the reads of its customer and total, the customers' updates.
fn delivery_sql() -> String {
    let ds: Vec<String> = (1..=10).map(|d| d.to_string()).collect();
    let list = |p: &str, ty: &str| {
        let v: Vec<String> = (1..=10).map(|d| format!("{p}{d}")).collect();
        format!("DECLARE {} {ty};\n", v.join(", "))
    };
    let mut s = format!(
        "CREATE PROCEDURE {}(p_w INT, p_carrier INT)\nbody: BEGIN\n\
         DECLARE v_nf INT DEFAULT 0; DECLARE v_skipped INT DEFAULT 0;\n",
        NAMES[3]
    );
    s += &list("v_o", "INT DEFAULT 0");
    s += &list("v_c", "INT");
    s += &list("v_a", "BIGINT");
    s += "DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_nf = 1;\nSTART TRANSACTION;\n";
    for d in &ds {
        let o = format!("v_o{d}");
        s += &format!(
            "SET v_nf = 0; {};\nIF v_nf = 1 THEN SET {o} = 0, v_skipped = v_skipped + 1; END IF;\n",
            into(&bind(delivery::OLDEST_NEW_ORDER, &[d, "p_w"]), &o)
        );
    }
    for d in &ds {
        let o = format!("v_o{d}");
        let k = [o.as_str(), d.as_str(), "p_w"];
        s += &format!(
            "IF {o} > 0 THEN {}; {}; {}; END IF;\n",
            bind(delivery::NEW_ORDER_DELETE, &k),
            bind(delivery::ORDER_UPDATE, &["p_carrier", &o, d, "p_w"]),
            bind(delivery::LINES_UPDATE, &k),
        );
    }
    for d in &ds {
        let o = format!("v_o{d}");
        let k = [o.as_str(), d.as_str(), "p_w"];
        s += &format!(
            "IF {o} > 0 THEN SET v_nf = 0; {}; {};\nIF v_nf = 1 THEN {} END IF; END IF;\n",
            into(&bind(delivery::ORDER_CUSTOMER, &k), &format!("v_c{d}")),
            into(&bind(delivery::LINES_SUM, &k), &format!("v_a{d}")),
            signal("a delivered order row is missing"),
        );
    }
    for d in &ds {
        s += &format!(
            "IF v_o{d} > 0 THEN {}; END IF;\n",
            bind(
                delivery::CUSTOMER_UPDATE,
                &[
                    &format!("COALESCE(v_a{d}, 0)"),
                    &format!("v_c{d}"),
                    d,
                    "p_w"
                ]
            )
        );
    }
    s += "COMMIT;\nSELECT v_skipped;\nEND";
    s
}

/// NewOrder's reads of the stock rows of lines supplied by other warehouses (one locked read
/// per distinct item and warehouse), then each line's stock update in line order.
fn new_order_stock_sql() -> String {
    let m = MAX_LINES;
    let mut s = String::new();
    // Lines supplied by other warehouses: one locked read per distinct (item, warehouse).
    let stock_one = new_order::STOCK.replace("{dist}", new_order::DIST);
    for k in 1..=m {
        let li = format!("l{k}_i");
        let ls = format!("l{k}_s");
        let read = format!(
            "SET v_nf = 0; {};\nIF v_nf = 1 THEN {} END IF;",
            into(
                &bind(&stock_one, &["p_d", &li, &ls]),
                &format!("v_sq{k}, r_f, v_dist{k}")
            ),
            signal("stock row not found")
        );
        let mut body = String::new();
        for j in 1..k {
            body += &format!(
                "{} l{j}_i = {li} AND l{j}_s = {ls} THEN SET v_dist{k} = v_dist{j};\n",
                if j == 1 { "IF" } else { "ELSEIF" }
            );
        }
        if k == 1 {
            body = read;
        } else {
            body += &format!("ELSE {read}\nEND IF;");
        }
        s += &format!("IF {k} <= p_n AND {ls} <> p_w THEN\n{body}\nEND IF;\n");
    }
    // Each line's stock update in line order; a later line of the same row starts from the
    // quantity this one left.
    for k in 1..=m {
        let (li, ls, lq) = (format!("l{k}_i"), format!("l{k}_s"), format!("l{k}_q"));
        s += &format!(
            "IF {k} <= p_n THEN\n\
             SET v_q = IF(v_sq{k} >= {lq} + 10, v_sq{k} - {lq}, v_sq{k} - {lq} + 91);\n{};\n",
            bind(
                new_order::STOCK_UPDATE,
                &["v_q", &lq, &format!("({ls} <> p_w)"), &li, &ls]
            )
        );
        for j in k + 1..=m {
            s += &format!("IF l{j}_i = {li} AND l{j}_s = {ls} THEN SET v_sq{j} = v_q; END IF;\n");
        }
        s += "END IF;\n";
    }
    s
}

/// NewOrder with up to 15 lines in fixed parameter slots (`l{k}_i`, `l{k}_s`, `l{k}_q`; unused
/// slots 0), the order's distinct items and distinct home items as the statement mode's
/// padded IN lists (`p_i{k}`, `p_h{k}`) with their counts.
fn new_order_sql() -> String {
    let m = MAX_LINES;
    let ks: Vec<usize> = (1..=m).collect();
    let seq = |f: &dyn Fn(usize) -> String| ks.iter().map(|&k| f(k)).collect::<Vec<_>>();
    let mut params = vec![
        "p_w INT".to_string(),
        "p_d INT".into(),
        "p_c INT".into(),
        "p_n INT".into(),
        "p_all_local INT".into(),
        "p_ni INT".into(),
    ];
    params.extend(seq(&|k| format!("p_i{k} INT")));
    params.push("p_nh INT".into());
    params.extend(seq(&|k| format!("p_h{k} INT")));
    for k in 1..=m {
        params.extend([
            format!("l{k}_i INT"),
            format!("l{k}_s INT"),
            format!("l{k}_q INT"),
        ]);
    }
    let mut s = format!(
        "CREATE PROCEDURE {}({})\nbody: BEGIN\n\
         DECLARE v_nf INT DEFAULT 0; DECLARE v_cnt INT DEFAULT 0; DECLARE v_q INT;\n\
         DECLARE v_discount INT; DECLARE v_bc INT; DECLARE v_wtax INT; DECLARE v_o INT; DECLARE v_dtax INT;\n\
         DECLARE r_id INT; DECLARE r_p BIGINT; DECLARE r_f INT; DECLARE r_q INT; DECLARE r_dist CHAR(24);\n\
         DECLARE {} BIGINT DEFAULT 0;\nDECLARE {} INT DEFAULT 0;\nDECLARE {} CHAR(24);\n",
        NAMES[0],
        params.join(", "),
        seq(&|k| format!("v_pr{k}")).join(", "),
        seq(&|k| format!("v_sq{k}")).join(", "),
        seq(&|k| format!("v_dist{k}")).join(", "),
    );
    let items = seq(&|k| format!("p_i{k}"));
    let items: Vec<&str> = items.iter().map(String::as_str).collect();
    let items_in = new_order::ITEMS_IN.replace("{in}", &vec!["?"; m].join(", "));
    s += &format!("DECLARE c_items CURSOR FOR {};\n", bind(&items_in, &items));
    let home = seq(&|k| format!("p_h{k}"));
    let mut stock_vars = vec!["p_d", "p_w"];
    stock_vars.extend(home.iter().map(String::as_str));
    let stock_in = new_order::STOCK_IN
        .replace("{dist}", new_order::DIST)
        .replace("{in}", &vec!["?"; m].join(", "));
    s += &format!(
        "DECLARE c_stock CURSOR FOR {};\n",
        bind(&stock_in, &stock_vars)
    );
    s += "DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_nf = 1;\nSTART TRANSACTION;\n";
    s += &into(
        &bind(new_order::CUSTOMER_WAREHOUSE, &["p_w", "p_d", "p_c"]),
        "v_discount, v_bc, v_wtax",
    );
    s += ";\nSET v_nf = 0;\n";
    s += &into(&bind(new_order::DISTRICT, &["p_d", "p_w"]), "v_o, v_dtax");
    s += &format!(
        ";\nIF v_nf = 1 THEN {} END IF;\n",
        signal("district row not found")
    );
    s += &bind(new_order::DISTRICT_UPDATE, &["p_d", "p_w"]);
    s += ";\n";
    s += &bind(
        new_order::ORDER_INSERT,
        &["v_o", "p_d", "p_w", "p_c", "p_n", "p_all_local"],
    );
    s += ";\n";
    s += &bind(new_order::NEW_ORDER_INSERT, &["v_o", "p_d", "p_w"]);
    s += ";\n";
    // The order's distinct items: each line's price; the unused item rolls back (2.4.1.4).
    s += "SET v_nf = 0, v_cnt = 0; OPEN c_items;\n\
          read_items: LOOP FETCH c_items INTO r_id, r_p, r_f; IF v_nf = 1 THEN LEAVE read_items; END IF;\n\
          SET v_cnt = v_cnt + 1;\n";
    for k in 1..=m {
        s += &format!("IF l{k}_i = r_id THEN SET v_pr{k} = r_p; END IF;\n");
    }
    s += "END LOOP; CLOSE c_items;\n\
          IF v_cnt < p_ni THEN ROLLBACK; SELECT 1; LEAVE body; END IF;\n";
    // The home-warehouse stock rows, locked, with the district's s_dist_XX.
    s += "IF p_nh > 0 THEN SET v_nf = 0, v_cnt = 0; OPEN c_stock;\n\
          read_stock: LOOP FETCH c_stock INTO r_id, r_q, r_f, r_dist; IF v_nf = 1 THEN LEAVE read_stock; END IF;\n\
          SET v_cnt = v_cnt + 1;\n";
    for k in 1..=m {
        s += &format!(
            "IF l{k}_i = r_id AND l{k}_s = p_w THEN SET v_sq{k} = r_q, v_dist{k} = r_dist; END IF;\n"
        );
    }
    s += &format!(
        "END LOOP; CLOSE c_stock;\nIF v_cnt <> p_nh THEN {} END IF;\nEND IF;\n",
        signal("stock row not found")
    );
    s += &new_order_stock_sql();
    // Every order line in one INSERT: the statement for the order's line count.
    s += "CASE p_n\n";
    for n in MIN_LINES..=MAX_LINES {
        let mut vars: Vec<String> = Vec::with_capacity(9 * n);
        for k in 1..=n {
            vars.extend([
                "v_o".to_string(),
                "p_d".into(),
                "p_w".into(),
                k.to_string(),
                format!("l{k}_i"),
                format!("l{k}_s"),
                format!("l{k}_q"),
                format!("l{k}_q * v_pr{k}"),
                format!("v_dist{k}"),
            ]);
        }
        let rows = vec![new_order::ORDER_LINE_ROW; n].join(", ");
        let vars: Vec<&str> = vars.iter().map(String::as_str).collect();
        s += &format!(
            "WHEN {n} THEN {};\n",
            bind(&format!("{}{rows}", new_order::ORDER_LINE_INSERT), &vars)
        );
    }
    s += "END CASE;\nCOMMIT;\nSELECT 0;\nEND";
    s
}

/// Create (or re-create) the five procedures.
pub async fn create(conn: &mut Conn) -> Result<()> {
    let bodies = [
        new_order_sql(),
        payment_sql(),
        order_status_sql(),
        delivery_sql(),
        stock_level_sql(),
    ];
    drop_all(conn).await?;
    for (name, body) in NAMES.iter().zip(bodies) {
        conn.execute(&body)
            .await
            .ctx(format!("creating the stored procedure {name}"))?;
    }
    Ok(())
}

/// Drop the procedures (MariaDB/MySQL only).
pub async fn drop_all(conn: &mut Conn) -> Result<()> {
    for name in NAMES {
        conn.execute(&format!("DROP PROCEDURE IF EXISTS {name}"))
            .await
            .ctx(format!("dropping the stored procedure {name}"))?;
    }
    Ok(())
}

/// The CALL of each procedure, prepared on a connection.
pub struct Calls {
    new_order: StmtId,
    payment: StmtId,
    order_status: StmtId,
    delivery: StmtId,
    stock_level: StmtId,
}

async fn prep_call(conn: &mut Conn, name: &str, params: usize) -> DbResult<StmtId> {
    conn.prepare(&format!("CALL {name}({})", vec!["?"; params].join(", ")))
        .await
}

impl Calls {
    pub async fn prepare(conn: &mut Conn) -> DbResult<Self> {
        Ok(Calls {
            new_order: prep_call(conn, NAMES[0], NEW_ORDER_PARAMS).await?,
            payment: prep_call(conn, NAMES[1], 8).await?,
            order_status: prep_call(conn, NAMES[2], 4).await?,
            delivery: prep_call(conn, NAMES[3], 2).await?,
            stock_level: prep_call(conn, NAMES[4], 3).await?,
        })
    }
}

/// One CALL: its result's integers in `cx.ints`.
async fn call(cx: &mut Ctx, conn: &mut Conn, id: StmtId, params: &[Value]) -> DbResult<Step> {
    ints(cx, conn, id, params).await?;
    Ok(cx.step())
}

pub async fn new_order(
    calls: &Calls,
    cx: &mut Ctx,
    conn: &mut Conn,
    inp: &new_order::Input,
) -> DbResult<Step> {
    use Value::Int as I;
    let w = inp.w;
    let items = inp.items();
    let home = inp.home_items();
    let all_local = inp.lines.iter().all(|l| l.supply_w == w) as i64;
    let mut p: Vec<Value> = Vec::with_capacity(NEW_ORDER_PARAMS);
    p.extend([
        I(w),
        I(inp.d),
        I(inp.c),
        I(inp.lines.len() as i64),
        I(all_local),
        I(items.len() as i64),
    ]);
    new_order::padded(&mut p, &items);
    p.push(I(home.len() as i64));
    if home.is_empty() {
        p.extend(std::iter::repeat_n(I(0), MAX_LINES));
    } else {
        new_order::padded(&mut p, &home);
    }
    for k in 0..MAX_LINES {
        match inp.lines.get(k) {
            Some(l) => p.extend([I(l.i_id), I(l.supply_w), I(l.quantity)]),
            None => p.extend([I(0), I(0), I(0)]),
        }
    }
    let step = call(cx, conn, calls.new_order, &p).await?;
    Ok(Step {
        rolled_back: cx.int(0) == 1,
        ..step
    })
}

pub async fn payment(
    calls: &Calls,
    cx: &mut Ctx,
    conn: &mut Conn,
    inp: &payment::Input,
) -> DbResult<Step> {
    use Value::Int as I;
    let (c_id, c_last) = match &inp.customer {
        payment::Customer::Id(c) => (*c, String::new()),
        payment::Customer::Last(name) => (0, name.clone()),
    };
    let a = inp.amount_cents;
    let p = [
        I(inp.w),
        I(inp.d),
        I(inp.c_w),
        I(inp.c_d),
        I(c_id),
        Value::Text(c_last),
        I(a),
        Value::Text(format!("{}.{:02}", a / 100, a % 100)),
    ];
    call(cx, conn, calls.payment, &p).await
}

pub async fn order_status(
    calls: &Calls,
    cx: &mut Ctx,
    conn: &mut Conn,
    inp: &order_status::Input,
) -> DbResult<Step> {
    let (c_id, c_last) = match &inp.customer {
        payment::Customer::Id(c) => (*c, String::new()),
        payment::Customer::Last(name) => (0, name.clone()),
    };
    let p = [
        Value::Int(inp.w),
        Value::Int(inp.d),
        Value::Int(c_id),
        Value::Text(c_last),
    ];
    call(cx, conn, calls.order_status, &p).await
}

/// Adds the districts skipped (no new order) to `skipped` once the CALL committed.
pub async fn delivery(
    calls: &Calls,
    cx: &mut Ctx,
    conn: &mut Conn,
    inp: &delivery::Input,
    skipped: &mut u64,
) -> DbResult<Step> {
    let p = [Value::Int(inp.w), Value::Int(inp.carrier)];
    let step = call(cx, conn, calls.delivery, &p).await?;
    *skipped += cx.int(0).max(0) as u64;
    Ok(step)
}

pub async fn stock_level(
    calls: &Calls,
    cx: &mut Ctx,
    conn: &mut Conn,
    inp: &stock_level::Input,
) -> DbResult<Step> {
    let p = [
        Value::Int(inp.w),
        Value::Int(inp.d),
        Value::Int(inp.threshold),
    ];
    call(cx, conn, calls.stock_level, &p).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placeholder became a variable, and no statement text is left unfilled.
    #[test]
    fn bodies_bind_every_placeholder() {
        for body in [
            new_order_sql(),
            payment_sql(),
            order_status_sql(),
            delivery_sql(),
            stock_level_sql(),
        ] {
            assert!(!body.contains('?'), "{body}");
            assert!(!body.contains('{'), "{body}");
            assert!(body.contains("START TRANSACTION;") && body.contains("COMMIT;"));
        }
        assert_eq!(
            into("SELECT a, b FROM t WHERE x = 1", "v_a, v_b"),
            "SELECT a, b INTO v_a, v_b FROM t WHERE x = 1"
        );
        // The CALL binds as many values as the procedure declares.
        let sql = new_order_sql();
        let head = &sql[..sql.find(")\nbody:").unwrap()];
        assert_eq!(head.matches(" INT").count(), NEW_ORDER_PARAMS, "{head}");
        assert_eq!(
            bind("UPDATE t SET a = ? WHERE b = ?", &["v_a", "p_b"]),
            "UPDATE t SET a = v_a WHERE b = p_b"
        );
    }
}
