//! The initial database of TPC-C clause 4.3, generated row by row from (seed, row id) alone so
//! that the shared parallel loader can fill every table.
//!
//! Row ids: every table's rows are numbered 1..=N in primary-key order, and each row decodes
//! its keys from its id (warehouse-major). Tables with a variable number of rows per parent
//! (order lines: 5..15 per order) use fixed slots (15 per order); a slot past the order's
//! o_ol_cnt is left empty and the loader skips it. An order's o_ol_cnt comes from a generator
//! keyed by the order alone, so `orders` and `order_line` agree without sharing state.

use crate::db::Value;
use crate::load::RowSource;
use crate::rng::Rng;

pub const ITEMS: u64 = 100_000;
pub const STOCK_PER_W: u64 = 100_000;
pub const DISTRICTS: u64 = 10;
pub const CUSTOMERS: u64 = 3_000;
pub const ORDERS: u64 = 3_000;
/// Orders 2101..=3000 of each district are undelivered (in new_orders).
pub const FIRST_NEW_ORDER: u64 = 2_101;
pub const NEW_ORDERS: u64 = ORDERS - FIRST_NEW_ORDER + 1;
pub const MAX_OL: u64 = 15;

// Generator streams, one per table or per derived value.
const S_ITEM: u64 = 1;
const S_WAREHOUSE: u64 = 2;
const S_DISTRICT: u64 = 3;
const S_CUSTOMER: u64 = 4;
const S_HISTORY: u64 = 5;
const S_ORDER: u64 = 6;
const S_OL_CNT: u64 = 7;
const S_ORDER_LINE: u64 = 8;
const S_STOCK: u64 = 9;
const S_PERM: u64 = 10;
const S_CONST: u64 = 11;

/// The NURand constants of clause 2.1.6. C for C_LAST differs between load and run (with the
/// delta rules of 2.1.6.1); C for C_ID and OL_I_ID is the same at load and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CConst {
    pub c_last_load: u64,
    pub c_last_run: u64,
    pub c_id: u64,
    pub c_ol_i_id: u64,
}

impl CConst {
    pub fn from_seed(seed: u64) -> Self {
        let mut r = Rng::keyed(seed, S_CONST, 0);
        let c_last_load = r.range(0, 255);
        let c_id = r.range(0, 1023);
        let c_ol_i_id = r.range(0, 8191);
        let c_last_run = loop {
            let c = r.range(0, 255);
            let delta = c.abs_diff(c_last_load);
            if (65..=119).contains(&delta) && delta != 96 && delta != 112 {
                break c;
            }
        };
        CConst {
            c_last_load,
            c_last_run,
            c_id,
            c_ol_i_id,
        }
    }
}

/// NURand(A, x, y) of clause 2.1.6.
pub fn nurand(r: &mut Rng, a: u64, x: u64, y: u64, c: u64) -> u64 {
    (((r.range(0, a) | r.range(x, y)) + c) % (y - x + 1)) + x
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// C_LAST of number 0..=999 (clause 4.3.2.3): three syllables from its digits.
pub fn last_name(n: u64, out: &mut String) {
    out.push_str(SYLLABLES[(n / 100 % 10) as usize]);
    out.push_str(SYLLABLES[(n / 10 % 10) as usize]);
    out.push_str(SYLLABLES[(n % 10) as usize]);
}

const ALNUM: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Where a generated row's fields go: a `Vec<Value>` (the loader's general path) or the
/// streamed text form written straight into the load's buffer (no `Value` and no `String`
/// per field). Both see the same calls in the same order, so both forms hold the same rows.
trait Sink {
    fn int(&mut self, v: u64);
    fn null(&mut self);
    /// A text field appended by `f` to the buffer it is given (it only appends). Generated
    /// text is letters, digits, spaces and the punctuation of timestamps and decimals: nothing
    /// the text form escapes.
    fn text_with(&mut self, f: impl FnOnce(&mut Vec<u8>));

    fn text(&mut self, s: &str) {
        self.text_with(|b| b.extend_from_slice(s.as_bytes()));
    }

    /// A decimal from an integer count of `scale` digits after the point (cents: 2).
    fn decimal(&mut self, units: i64, scale: u32) {
        self.text_with(|b| push_decimal(b, units, scale));
    }
}

/// The general form: one `Value` per field.
struct Values<'a>(&'a mut Vec<Value>);

impl Sink for Values<'_> {
    fn int(&mut self, v: u64) {
        self.0.push(Value::Int(v as i64));
    }
    fn null(&mut self) {
        self.0.push(Value::Null);
    }
    fn text_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        let mut b = Vec::new();
        f(&mut b);
        self.0.push(Value::Text(
            String::from_utf8(b).expect("generated text is ASCII"),
        ));
    }
}

/// The streamed text form of `db::push_tsv` (fields tab-separated, `\N` for NULL).
struct Tsv<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl Tsv<'_> {
    fn sep(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.out.push(b'\t');
        }
    }
}

impl Sink for Tsv<'_> {
    fn int(&mut self, v: u64) {
        self.sep();
        push_int(self.out, v);
    }
    fn null(&mut self) {
        self.sep();
        self.out.extend_from_slice(b"\\N");
    }
    fn text_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        self.sep();
        let at = self.out.len();
        f(self.out);
        debug_assert!(!self.out[at..]
            .iter()
            .any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r')));
    }
}

fn push_int(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

fn push_decimal(out: &mut Vec<u8>, units: i64, scale: u32) {
    let p = 10u64.pow(scale);
    if units < 0 {
        out.push(b'-');
    }
    let u = units.unsigned_abs();
    push_int(out, u / p);
    out.push(b'.');
    let frac = u % p;
    let mut d = p / 10;
    while d > 0 {
        out.push(b'0' + (frac / d % 10) as u8);
        d /= 10;
    }
}

/// a-string of random length in lo..=hi (clause 4.3.2.2), appended to `s`.
fn astring(r: &mut Rng, lo: u64, hi: u64, s: &mut Vec<u8>) {
    let n = r.range(lo, hi) as usize;
    s.reserve(n);
    let mut bits = 0u64;
    let mut left = 0;
    for _ in 0..n {
        if left == 0 {
            bits = r.next_u64();
            left = 8;
        }
        // 8 bits per character, reduced to 0..62 by multiply-shift (bias irrelevant here).
        let b = ((bits & 0xFF) as usize * 62) >> 8;
        bits >>= 8;
        left -= 1;
        s.push(ALNUM[b]);
    }
}

/// n-string of exactly `n` digits, appended to `s`.
fn nstring(r: &mut Rng, n: usize, s: &mut Vec<u8>) {
    for _ in 0..n {
        s.push(b'0' + r.range(0, 9) as u8);
    }
}

/// i_data / s_data: a-string[26..50], 10 % with "ORIGINAL" at a random position (4.3.3.1).
fn data_with_original(r: &mut Rng, s: &mut Vec<u8>) {
    let at = s.len();
    astring(r, 26, 50, s);
    if r.chance(0.10) {
        let pos = at + r.range(0, (s.len() - at - 8) as u64) as usize;
        s[pos..pos + 8].copy_from_slice(b"ORIGINAL");
    }
}

fn a_text(s: &mut impl Sink, r: &mut Rng, lo: u64, hi: u64) {
    s.text_with(|b| astring(r, lo, hi, b));
}

fn zip(s: &mut impl Sink, r: &mut Rng) {
    s.text_with(|b| {
        nstring(r, 4, b);
        b.extend_from_slice(b"11111");
    });
}

fn state(s: &mut impl Sink, r: &mut Rng) {
    s.text_with(|b| {
        b.push(b'A' + r.range(0, 25) as u8);
        b.push(b'A' + r.range(0, 25) as u8);
    });
}

/// A decimal literal from an integer count of `scale` digits after the point (cents: 2).
pub fn decimal(units: i64, scale: u32) -> Value {
    let mut b = Vec::new();
    push_decimal(&mut b, units, scale);
    Value::Text(String::from_utf8(b).expect("ASCII"))
}

/// A keyed bijection of 0..n (n <= 4096): a 4-round Feistel network on 12 bits with cycle
/// walking, so that o_c_id of each order is a random permutation of the district's customers
/// and any order's customer can be computed alone.
pub fn permute(seed: u64, key: u64, x: u64, n: u64) -> u64 {
    debug_assert!(x < n && n <= 4096);
    let mut v = x;
    loop {
        let (mut l, mut r) = (v >> 6, v & 63);
        for round in 0..4u64 {
            let f = Rng::keyed(seed, S_PERM, (key << 8) ^ (round << 6) ^ r).next_u64() & 63;
            (l, r) = (r, l ^ f);
        }
        v = (l << 6) | r;
        if v < n {
            return v;
        }
    }
}

/// o_ol_cnt of the order with 0-based global index `order` (shared by orders and order_line).
pub fn ol_cnt(seed: u64, order: u64) -> u64 {
    Rng::keyed(seed, S_OL_CNT, order).range(5, 15)
}

/// Split a 0-based index of per-district rows into (w, d, n), all 1-based.
fn wdn(x: u64, per_district: u64) -> (u64, u64, u64) {
    let n = x % per_district + 1;
    let wd = x / per_district;
    (wd / DISTRICTS + 1, wd % DISTRICTS + 1, n)
}

/// One TPC-C table as a row source.
pub struct Table {
    pub name: &'static str,
    pub seed: u64,
    pub c: CConst,
    /// Load time, as the SQL literal for c_since, h_date, o_entry_d, ol_delivery_d.
    pub now: String,
}

pub const TABLES: [&str; 9] = [
    "item",
    "warehouse",
    "district",
    "customer",
    "history",
    "orders",
    "new_orders",
    "order_line",
    "stock",
];

/// Row ids of a table for `w` warehouses (order_line: slots, some empty).
pub fn row_count(table: &str, w: u64) -> u64 {
    match table {
        "item" => ITEMS,
        "warehouse" => w,
        "district" => w * DISTRICTS,
        "customer" | "history" => w * DISTRICTS * CUSTOMERS,
        "orders" => w * DISTRICTS * ORDERS,
        "new_orders" => w * DISTRICTS * NEW_ORDERS,
        "order_line" => w * DISTRICTS * ORDERS * MAX_OL,
        "stock" => w * STOCK_PER_W,
        _ => 0,
    }
}

const COLS_ITEM: [&str; 5] = ["i_id", "i_im_id", "i_name", "i_price", "i_data"];
const COLS_WAREHOUSE: [&str; 9] = [
    "w_id",
    "w_name",
    "w_street_1",
    "w_street_2",
    "w_city",
    "w_state",
    "w_zip",
    "w_tax",
    "w_ytd",
];
const COLS_DISTRICT: [&str; 11] = [
    "d_id",
    "d_w_id",
    "d_name",
    "d_street_1",
    "d_street_2",
    "d_city",
    "d_state",
    "d_zip",
    "d_tax",
    "d_ytd",
    "d_next_o_id",
];
const COLS_CUSTOMER: [&str; 21] = [
    "c_id",
    "c_d_id",
    "c_w_id",
    "c_first",
    "c_middle",
    "c_last",
    "c_street_1",
    "c_street_2",
    "c_city",
    "c_state",
    "c_zip",
    "c_phone",
    "c_since",
    "c_credit",
    "c_credit_lim",
    "c_discount",
    "c_balance",
    "c_ytd_payment",
    "c_payment_cnt",
    "c_delivery_cnt",
    "c_data",
];
const COLS_HISTORY: [&str; 8] = [
    "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data",
];
const COLS_ORDERS: [&str; 8] = [
    "o_id",
    "o_d_id",
    "o_w_id",
    "o_c_id",
    "o_entry_d",
    "o_carrier_id",
    "o_ol_cnt",
    "o_all_local",
];
const COLS_NEW_ORDERS: [&str; 3] = ["no_o_id", "no_d_id", "no_w_id"];
const COLS_ORDER_LINE: [&str; 10] = [
    "ol_o_id",
    "ol_d_id",
    "ol_w_id",
    "ol_number",
    "ol_i_id",
    "ol_supply_w_id",
    "ol_delivery_d",
    "ol_quantity",
    "ol_amount",
    "ol_dist_info",
];
const COLS_STOCK: [&str; 17] = [
    "s_i_id",
    "s_w_id",
    "s_quantity",
    "s_dist_01",
    "s_dist_02",
    "s_dist_03",
    "s_dist_04",
    "s_dist_05",
    "s_dist_06",
    "s_dist_07",
    "s_dist_08",
    "s_dist_09",
    "s_dist_10",
    "s_ytd",
    "s_order_cnt",
    "s_remote_cnt",
    "s_data",
];

impl RowSource for Table {
    fn table(&self) -> &str {
        self.name
    }

    fn columns(&self) -> &[&'static str] {
        match self.name {
            "item" => &COLS_ITEM,
            "warehouse" => &COLS_WAREHOUSE,
            "district" => &COLS_DISTRICT,
            "customer" => &COLS_CUSTOMER,
            "history" => &COLS_HISTORY,
            "orders" => &COLS_ORDERS,
            "new_orders" => &COLS_NEW_ORDERS,
            "order_line" => &COLS_ORDER_LINE,
            _ => &COLS_STOCK,
        }
    }

    /// One warehouse's rows (the items belong to none): a fleet's shard loads whole
    /// warehouses.
    fn group_rows(&self) -> u64 {
        match self.name {
            "item" => 1,
            name => row_count(name, 1),
        }
    }

    fn row(&self, id: u64, out: &mut Vec<Value>) {
        self.gen(id, &mut Values(out));
    }

    /// Written straight into the text form, the same rows as `row`.
    fn row_text(&self, id: u64, out: &mut Vec<u8>, _scratch: &mut Vec<Value>) -> bool {
        let at = out.len();
        if self.gen(id, &mut Tsv { out, first: true }) {
            out.push(b'\n');
            true
        } else {
            out.truncate(at);
            false
        }
    }
}

impl Table {
    /// Row `id` of the table into `s`; false (nothing written) for an empty order-line slot.
    fn gen(&self, id: u64, s: &mut impl Sink) -> bool {
        let seed = self.seed;
        match self.name {
            "item" => {
                let r = &mut Rng::keyed(seed, S_ITEM, id);
                s.int(id);
                s.int(r.range(1, 10_000));
                a_text(s, r, 14, 24);
                s.decimal(r.range(100, 10_000) as i64, 2);
                s.text_with(|b| data_with_original(r, b));
            }
            "warehouse" => {
                let r = &mut Rng::keyed(seed, S_WAREHOUSE, id);
                s.int(id);
                a_text(s, r, 6, 10);
                a_text(s, r, 10, 20);
                a_text(s, r, 10, 20);
                a_text(s, r, 10, 20);
                state(s, r);
                zip(s, r);
                s.decimal(r.range(0, 2000) as i64, 4);
                s.decimal(30_000_000, 2);
            }
            "district" => {
                let r = &mut Rng::keyed(seed, S_DISTRICT, id);
                let (w, d) = ((id - 1) / DISTRICTS + 1, (id - 1) % DISTRICTS + 1);
                s.int(d);
                s.int(w);
                a_text(s, r, 6, 10);
                a_text(s, r, 10, 20);
                a_text(s, r, 10, 20);
                a_text(s, r, 10, 20);
                state(s, r);
                zip(s, r);
                s.decimal(r.range(0, 2000) as i64, 4);
                s.decimal(3_000_000, 2);
                s.int(ORDERS + 1);
            }
            "customer" => {
                let r = &mut Rng::keyed(seed, S_CUSTOMER, id);
                let (w, d, c) = wdn(id - 1, CUSTOMERS);
                // 4.3.3.1: the first 1,000 customers take the 1,000 names in order.
                let n = if c <= 1000 {
                    c - 1
                } else {
                    nurand(r, 255, 0, 999, self.c.c_last_load)
                };
                let mut last = String::with_capacity(16);
                last_name(n, &mut last);
                s.int(c);
                s.int(d);
                s.int(w);
                a_text(s, r, 8, 16);
                s.text("OE");
                s.text(&last);
                a_text(s, r, 10, 20);
                a_text(s, r, 10, 20);
                a_text(s, r, 10, 20);
                state(s, r);
                zip(s, r);
                s.text_with(|b| nstring(r, 16, b));
                s.text(&self.now);
                s.text(if r.chance(0.10) { "BC" } else { "GC" });
                s.decimal(5_000_000, 2);
                s.decimal(r.range(0, 5000) as i64, 4);
                s.decimal(-1000, 2);
                s.decimal(1000, 2);
                s.int(1);
                s.int(0);
                a_text(s, r, 300, 500);
            }
            "history" => {
                let r = &mut Rng::keyed(seed, S_HISTORY, id);
                let (w, d, c) = wdn(id - 1, CUSTOMERS);
                for v in [c, d, w, d, w] {
                    s.int(v);
                }
                s.text(&self.now);
                s.decimal(1000, 2);
                a_text(s, r, 12, 24);
            }
            "orders" => {
                let r = &mut Rng::keyed(seed, S_ORDER, id);
                let (w, d, o) = wdn(id - 1, ORDERS);
                let district = (w - 1) * DISTRICTS + (d - 1);
                let c = permute(seed, district, o - 1, CUSTOMERS) + 1;
                for v in [o, d, w, c] {
                    s.int(v);
                }
                s.text(&self.now);
                if o < FIRST_NEW_ORDER {
                    s.int(r.range(1, 10));
                } else {
                    s.null();
                }
                s.int(ol_cnt(seed, id - 1));
                s.int(1);
            }
            "new_orders" => {
                let (w, d, k) = wdn(id - 1, NEW_ORDERS);
                for v in [FIRST_NEW_ORDER + k - 1, d, w] {
                    s.int(v);
                }
            }
            "order_line" => {
                let order = (id - 1) / MAX_OL;
                let number = (id - 1) % MAX_OL + 1;
                if number > ol_cnt(seed, order) {
                    return false; // no such line: the loader skips empty rows
                }
                let r = &mut Rng::keyed(seed, S_ORDER_LINE, id);
                let (w, d, o) = wdn(order, ORDERS);
                let delivered = o < FIRST_NEW_ORDER;
                for v in [o, d, w, number, r.range(1, ITEMS), w] {
                    s.int(v);
                }
                if delivered {
                    s.text(&self.now);
                } else {
                    s.null();
                }
                s.int(5);
                s.decimal(
                    if delivered {
                        0
                    } else {
                        r.range(1, 999_999) as i64
                    },
                    2,
                );
                a_text(s, r, 24, 24);
            }
            _ => {
                let r = &mut Rng::keyed(seed, S_STOCK, id);
                let i = (id - 1) % STOCK_PER_W + 1;
                let w = (id - 1) / STOCK_PER_W + 1;
                s.int(i);
                s.int(w);
                s.int(r.range(10, 100));
                for _ in 0..10 {
                    a_text(s, r, 24, 24);
                }
                for v in [0, 0, 0] {
                    s.int(v);
                }
                s.text_with(|b| data_with_original(r, b));
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection() {
        for key in [0, 7, 123] {
            let mut seen = vec![false; CUSTOMERS as usize];
            for x in 0..CUSTOMERS {
                let y = permute(42, key, x, CUSTOMERS);
                assert!(!seen[y as usize], "{y} twice");
                seen[y as usize] = true;
            }
        }
        // Different districts get different permutations.
        assert_ne!(
            (0..20).map(|x| permute(1, 0, x, 3000)).collect::<Vec<_>>(),
            (0..20).map(|x| permute(1, 1, x, 3000)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn c_constants_follow_2_1_6_1() {
        for seed in 0..500 {
            let c = CConst::from_seed(seed);
            let d = c.c_last_run.abs_diff(c.c_last_load);
            assert!((65..=119).contains(&d) && d != 96 && d != 112, "{c:?}");
            assert!(c.c_last_load <= 255 && c.c_id <= 1023 && c.c_ol_i_id <= 8191);
        }
    }

    #[test]
    fn names_and_decimals() {
        let mut s = String::new();
        last_name(371, &mut s);
        assert_eq!(s, "PRICALLYOUGHT");
        assert_eq!(decimal(-1000, 2), Value::Text("-10.00".into()));
        assert_eq!(decimal(1234, 4), Value::Text("0.1234".into()));
    }

    /// The text written straight from the generator is `push_tsv` of the same row's values,
    /// for every table (so both load paths hold the same rows).
    #[test]
    fn text_rows_are_the_value_rows() {
        for name in TABLES {
            let t = Table {
                name,
                seed: 11,
                c: CConst::from_seed(11),
                now: "2020-01-02 03:04:05".into(),
            };
            let (mut direct, mut via, mut vals, mut scratch) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for id in 1..=row_count(name, 1).min(3_000) {
                vals.clear();
                t.row(id, &mut vals);
                let wrote = t.row_text(id, &mut direct, &mut scratch);
                assert_eq!(wrote, !vals.is_empty(), "{name} {id}");
                if wrote {
                    crate::db::push_tsv(&mut via, &vals);
                }
            }
            assert!(!direct.is_empty(), "{name}");
            assert_eq!(
                String::from_utf8(direct).unwrap(),
                String::from_utf8(via).unwrap(),
                "{name}"
            );
        }
    }

    #[test]
    fn order_lines_match_ol_cnt() {
        let t = Table {
            name: "order_line",
            seed: 3,
            c: CConst::from_seed(3),
            now: "2020-01-01 00:00:00".into(),
        };
        let mut out = Vec::new();
        let mut lines = 0;
        for id in 1..=MAX_OL * 100 {
            out.clear();
            t.row(id, &mut out);
            lines += !out.is_empty() as u64;
        }
        let want: u64 = (0..100).map(|o| ol_cnt(3, o)).sum();
        assert_eq!(lines, want);
    }
}
