//! The rows of sbtestN, generated from (seed, table, id) alone: k from `--rand-type` over
//! 1..=table_size (sysbench's prepare draws k with its default distribution too), c and pad in
//! sysbench's format of 11-digit groups.

use super::rand::{digit_groups, Dist};
use crate::load::RowSource;
use crate::target::Value;
use crate::workload::rng::Rng;

pub const COLUMNS: [&str; 4] = ["id", "k", "c", "pad"];
/// c: 10 groups of 11 digits (119 characters); pad: 5 groups (59 characters).
pub const C_GROUPS: usize = 10;
pub const PAD_GROUPS: usize = 5;

pub struct SbRows {
    pub table: String,
    pub table_num: u32,
    pub seed: u64,
    pub table_size: u32,
    pub dist: Dist,
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
        digit_groups(r, C_GROUPS, &mut c);
        let mut pad = String::with_capacity(59);
        digit_groups(r, PAD_GROUPS, &mut pad);
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
    use crate::workload::oltp::rand::RandType;

    #[test]
    fn rows_depend_only_on_seed_table_and_id() {
        let src = |seed, t| SbRows {
            table: format!("sbtest{t}"),
            table_num: t,
            seed,
            table_size: 1000,
            dist: Dist::new(RandType::Special, 12, 1, 75, 0.2),
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
}
