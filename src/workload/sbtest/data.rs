//! The rows of sbtestN, generated from (seed, table, id) alone: k from `--rand-type` over
//! 1..=table_size (sysbench's prepare draws k with its default distribution too), c and pad in
//! sysbench's format of 11-digit groups, or with `--compressed-fraction F` text of the same
//! lengths from the shared generator (src/workload/textgen.rs) that compresses to F.

use super::rand::{digit_groups, Dist};
use crate::db::Value;
use crate::load::RowSource;
use crate::rng::Rng;
use crate::workload::textgen::TextGen;

pub const COLUMNS: [&str; 4] = ["id", "k", "c", "pad"];
/// c: 10 groups of 11 digits (119 characters); pad: 5 groups (59 characters).
pub const C_GROUPS: usize = 10;
pub const PAD_GROUPS: usize = 5;
/// Their lengths in characters (what `--compressed-fraction` text keeps).
pub const C_LEN: usize = 119;
pub const PAD_LEN: usize = 59;

/// `--compressed-fraction`: the generators of c and pad, each calibrated for its length.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SbText {
    pub c: TextGen,
    pub pad: TextGen,
}

impl SbText {
    /// From the flag as typed; `None` keeps sysbench's digit groups.
    pub fn from_flag(fraction: Option<&str>, seed: u64) -> crate::error::Result<Option<SbText>> {
        Ok(
            crate::workload::textgen::fraction_flag(fraction)?.map(|f| SbText {
                c: TextGen::new(f, seed, C_LEN, C_LEN),
                pad: TextGen::new(f, seed ^ 0x9ad, PAD_LEN, PAD_LEN),
            }),
        )
    }

    /// A value of c (`groups` = C_GROUPS) or pad, drawn from `r`, into `out`.
    pub fn fill(&self, groups: usize, r: &mut Rng, out: &mut String) {
        let g = if groups == C_GROUPS {
            &self.c
        } else {
            &self.pad
        };
        let mut v = std::mem::take(out).into_bytes();
        v.clear();
        g.fill(r, g.len_range().0, &mut v);
        *out = String::from_utf8(v).expect("the generator's alphabet is ASCII");
    }
}

/// c or pad: sysbench's digit groups, or the `--compressed-fraction` generator's text.
pub fn text_value(text: Option<&SbText>, groups: usize, r: &mut Rng, out: &mut String) {
    match text {
        Some(t) => t.fill(groups, r, out),
        None => digit_groups(r, groups, out),
    }
}

pub struct SbRows {
    pub table: String,
    pub table_num: u32,
    pub seed: u64,
    pub table_size: u32,
    pub dist: Dist,
    pub text: Option<SbText>,
}

impl RowSource for SbRows {
    fn table(&self) -> &str {
        &self.table
    }
    fn columns(&self) -> &[&'static str] {
        &COLUMNS
    }
    fn row(&self, id: u64, out: &mut Vec<Value>) {
        let r = &mut Rng::keyed(self.seed, 2000 + self.table_num as u64, id);
        let k = self.dist.draw(r, 1, self.table_size);
        let mut c = String::with_capacity(119);
        text_value(self.text.as_ref(), C_GROUPS, r, &mut c);
        let mut pad = String::with_capacity(59);
        text_value(self.text.as_ref(), PAD_GROUPS, r, &mut pad);
        out.extend([
            Value::Int(id as i64),
            Value::Int(k as i64),
            Value::Text(c),
            Value::Text(pad),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::sbtest::rand::RandType;

    #[test]
    fn rows_depend_only_on_seed_table_and_id() {
        let src = |seed, t| SbRows {
            table: format!("sbtest{t}"),
            table_num: t,
            seed,
            table_size: 1000,
            dist: Dist::new(RandType::Special, 12, 1, 75, 0.2),
            text: None,
        };
        let row = |s: &SbRows, id| {
            let mut v = Vec::new();
            s.row(id, &mut v);
            v
        };
        assert_eq!(row(&src(1, 1), 5), row(&src(1, 1), 5));
        assert_ne!(row(&src(1, 1), 5), row(&src(2, 1), 5));
        assert_ne!(row(&src(1, 1), 5), row(&src(1, 2), 5));
        let r = row(&src(1, 1), 9);
        assert_eq!(r[0], Value::Int(9));
        match (&r[1], &r[2], &r[3]) {
            (Value::Int(k), Value::Text(c), Value::Text(p)) => {
                assert!((1..=1000).contains(k));
                assert_eq!((c.len(), p.len()), (119, 59));
            }
            other => panic!("unexpected row {other:?}"),
        }
    }

    /// The test: with --compressed-fraction 0.3 the loaded c and pad values, as one
    /// stream each, compress with zstd-3 to 30 % ± 10 % of their size.
    #[test]
    fn compressed_fraction_applies_to_c_and_pad() {
        let src = SbRows {
            table: "sbtest1".into(),
            table_num: 1,
            seed: 5,
            table_size: 10_000,
            dist: Dist::new(RandType::Uniform, 12, 1, 75, 0.2),
            text: SbText::from_flag(Some("0.3"), 5).unwrap(),
        };
        let (mut cs, mut pads) = (Vec::new(), Vec::new());
        let mut v = Vec::new();
        for id in 1..=8000 {
            v.clear();
            src.row(id, &mut v);
            match (&v[2], &v[3]) {
                (Value::Text(c), Value::Text(p)) => {
                    assert_eq!((c.len(), p.len()), (C_LEN, PAD_LEN));
                    cs.extend_from_slice(c.as_bytes());
                    pads.extend_from_slice(p.as_bytes());
                }
                other => panic!("unexpected row {other:?}"),
            }
        }
        for (what, data) in [("c", &cs), ("pad", &pads)] {
            let r = crate::workload::textgen::zstd_ratio(data);
            assert!((r - 0.3).abs() <= 0.03, "{what}: zstd-3 ratio {r:.3}");
        }
        // sysbench's digits, for contrast, are not what was asked.
        let mut d = String::new();
        let mut all = Vec::new();
        let mut r = Rng::new(1);
        for _ in 0..8000 {
            digit_groups(&mut r, C_GROUPS, &mut d);
            all.extend_from_slice(d.as_bytes());
        }
        assert!(crate::workload::textgen::zstd_ratio(&all) > 0.4);
        assert!(SbText::from_flag(Some("2"), 1).is_err());
        assert!(SbText::from_flag(None, 1).unwrap().is_none());
    }
}
