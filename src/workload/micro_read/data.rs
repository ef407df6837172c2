//! Deterministic data for the "normal" table.
//!
//! Value domains (chosen so the report's queries return what their names promise):
//! - `country_id` uniform in 1..=C with C = ceil(rows / 80), at most 65,535 (smallint
//!   unsigned): about 80 rows per country, so READ_KEY_POINT returns ~80 rows ("tens"; LIMIT 5
//!   cuts it). Above 5.2 M rows C stays at 65,535 and rows per country grow.
//! - `state_id` uniform in 1..=20; READ_KEY_RANGE asks for 15 consecutive states of one
//!   country, so it returns ~60 rows on average (more than 50: LIMIT 50 cuts it).
//! - `dob` a date in 1930-01-01..2009-12-31, NULL for 2 % of rows.
//! - `email` is unique by construction (it contains the row id).

use crate::db::Value;
use crate::load::RowSource;
use crate::rng::Rng;

pub const STATES: u64 = 20;
pub const ROWS_PER_COUNTRY: u64 = 80;
/// READ_KEY_RANGE covers this many consecutive states.
pub const STATE_RANGE: u64 = 15;
/// READ_PK_RANGE covers this many consecutive ids.
pub const PK_RANGE: u64 = 100;

pub const COLUMNS: [&str; 10] = [
    "id",
    "name",
    "email",
    "password",
    "dob",
    "address",
    "city",
    "state_id",
    "zip",
    "country_id",
];

/// Number of distinct countries for a table size.
pub fn countries(rows: u64) -> u64 {
    rows.div_ceil(ROWS_PER_COUNTRY).clamp(1, 65_535)
}

const SYLLABLES: [&str; 32] = [
    "an", "bel", "cor", "da", "el", "fin", "gar", "hal", "is", "jor", "ka", "lin", "mar", "nor",
    "ol", "per", "quin", "ro", "sa", "tor", "ul", "ver", "wen", "xa", "yor", "zen", "bri", "cla",
    "dre", "fro", "gri", "sto",
];
const STREETS: [&str; 8] = [
    "Street", "Avenue", "Road", "Lane", "Way", "Drive", "Court", "Place",
];
const DOMAINS: [&str; 6] = [
    "example.com",
    "mail.test",
    "post.example",
    "inbox.test",
    "web.example",
    "net.test",
];

fn word(r: &mut Rng, min: u64, max: u64, out: &mut String) {
    let n = r.range(min, max);
    let start = out.len();
    for _ in 0..n {
        let s = *r.pick(&SYLLABLES);
        out.push_str(s);
    }
    // Capitalize the first letter (all syllables are ASCII).
    if let Some(c) = out[start..].chars().next() {
        out.replace_range(start..start + 1, &c.to_ascii_uppercase().to_string());
    }
}

/// The rows of `normal`, generated from (seed, id).
pub struct NormalRows {
    pub seed: u64,
    pub countries: u64,
}

impl RowSource for NormalRows {
    fn table(&self) -> &str {
        "normal"
    }
    fn columns(&self) -> &[&'static str] {
        &COLUMNS
    }
    fn row(&self, id: u64, out: &mut Vec<Value>) {
        let r = &mut Rng::keyed(self.seed, 1, id);
        let mut first = String::with_capacity(12);
        word(r, 2, 3, &mut first);
        let mut last = String::with_capacity(12);
        word(r, 2, 4, &mut last);
        let email = format!(
            "{}.{}{id}@{}",
            first.to_ascii_lowercase(),
            last.to_ascii_lowercase(),
            r.pick(&DOMAINS)
        );
        let password = format!("{:016x}{:016x}", r.next_u64(), r.next_u64());
        let dob = if r.chance(0.02) {
            Value::Null
        } else {
            // Days from 1930-01-01 over 80 years; convert with a simple civil calendar.
            let (y, m, d) = civil_from_days(r.range(0, 29_219) as i64 - 14_610);
            Value::Date { y, m, d }
        };
        let mut address = format!("{} ", r.range(1, 9999));
        word(r, 2, 4, &mut address);
        address.push(' ');
        let street = *r.pick(&STREETS);
        address.push_str(street);
        let mut city = String::with_capacity(12);
        word(r, 2, 3, &mut city);
        let state = r.range(1, STATES);
        let zip = format!("{:05}", r.range(0, 99_999));
        let country = r.range(1, self.countries);
        out.extend([
            Value::Int(id as i64),
            Value::Text(format!("{first} {last}")),
            Value::Text(email),
            Value::Text(password),
            dob,
            Value::Text(address),
            Value::Text(city),
            Value::Int(state as i64),
            Value::Text(zip),
            Value::Int(country as i64),
        ]);
    }
}

/// (year, month, day) for days since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i32, u8, u8) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    ((if m <= 2 { y + 1 } else { y }) as i32, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seed: u64, id: u64) -> Vec<Value> {
        let mut v = Vec::new();
        NormalRows {
            seed,
            countries: countries(100_000),
        }
        .row(id, &mut v);
        v
    }

    #[test]
    fn rows_are_deterministic_and_fit_the_columns() {
        assert_eq!(row(7, 123), row(7, 123));
        assert_ne!(row(7, 123), row(8, 123));
        for id in 1..2000 {
            let r = row(1, id);
            assert_eq!(r.len(), COLUMNS.len());
            for (v, max) in r.iter().zip([0, 64, 64, 64, 0, 128, 64, 0, 8, 0]) {
                if let Value::Text(t) = v {
                    assert!(t.len() <= max, "{t} longer than {max}");
                }
            }
            match r[9] {
                Value::Int(c) => assert!((1..=1250).contains(&c)),
                _ => panic!("country_id must be an int"),
            }
        }
    }

    #[test]
    fn domains_give_the_documented_row_counts() {
        assert_eq!(countries(1_000_000), 12_500);
        assert_eq!(countries(100_000_000), 65_535);
        assert_eq!(countries(10), 1);
        // Average rows per READ_KEY_RANGE: 15 of 20 states of one country.
        let expected = ROWS_PER_COUNTRY as f64 * STATE_RANGE as f64 / STATES as f64;
        assert!(expected > 50.0);
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-14_610), (1930, 1, 1));
        assert_eq!(civil_from_days(-14_610 + 29_219), (2009, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
