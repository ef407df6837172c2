//! A fleet's shard: which of the N processes that run one benchmark together this one is
//! (`--shard I/N`), and its share of a workload's ids. Plain data with its arithmetic: the
//! config parses it, the loader and the workloads take their share by it, the fleet's meeting
//! (`crate::fleet`) and the merge (report/merge.rs) name the shards by it.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The variable a Kubernetes Indexed Job sets in each pod: its completion index.
pub const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// Shard `index` of `count` (0-based, like a Kubernetes completion index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `I/N`, or `/N` with I from `index_env` (JOB_COMPLETION_INDEX).
    pub fn parse(s: &str, index_env: Option<&str>) -> Result<Shard> {
        let bad = |why: &str| Error::usage(format!("--shard {s}: {why}"));
        let (i, n) = s.split_once('/').ok_or_else(|| {
            bad("give INDEX/COUNT (e.g. 0/4), or /COUNT in a Kubernetes Indexed Job")
        })?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| bad("COUNT must be a whole number"))?;
        if count == 0 {
            return Err(bad("COUNT must be at least 1"));
        }
        let index: u32 = match (i.trim(), index_env) {
            ("", Some(v)) => v.trim().parse().map_err(|_| {
                bad(&format!("{INDEX_ENV}={v} is not a whole number"))
            })?,
            ("", None) => {
                return Err(bad(&format!(
                    "no INDEX given and {INDEX_ENV} is not set (it is set in the pods of a Kubernetes Indexed Job)"
                )))
            }
            (i, _) => i.parse().map_err(|_| bad("INDEX must be a whole number"))?,
        };
        if index >= count {
            return Err(bad(&format!(
                "INDEX must be below COUNT (shards are numbered 0 to {})",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    /// This shard's block of the ids 1..=n (contiguous, sizes differing by at most one),
    /// inclusive; an error when some shard would get none.
    pub fn block(&self, n: u64, what: &str) -> Result<(u64, u64)> {
        if n < self.count as u64 {
            return Err(Error::usage(format!(
                "{what} {n} cannot be split over {} shards: each shard needs at least one",
                self.count
            )));
        }
        let (i, c) = (self.index as u64, self.count as u64);
        Ok((n * i / c + 1, n * (i + 1) / c))
    }

    /// Worker `w` of `threads` as a worker of the whole fleet: (its global index, the fleet's
    /// worker count), so that per-worker keys and random streams differ between shards.
    pub fn worker(&self, w: usize, threads: usize) -> (usize, usize) {
        (
            self.index as usize * threads + w,
            threads * self.count as usize,
        )
    }

    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }

    /// This shard's ids of a table of `n` rows numbered 1..=n whose rows come in groups of
    /// `group` (TPC-C: one warehouse's rows): a contiguous block of whole groups, the blocks
    /// of the N shards covering 1..=n once. Inclusive; empty (first > last) when there are
    /// fewer groups than shards and this one gets none.
    pub fn range(&self, n: u64, group: u64) -> (u64, u64) {
        let g = group.max(1);
        let groups = n.div_ceil(g) as u128;
        let (i, c) = (self.index as u128, self.count as u128);
        let first = (groups * i / c) as u64 * g + 1;
        let last = (((groups * (i + 1) / c) as u64).saturating_mul(g)).min(n);
        (first, last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_parse() {
        assert_eq!(
            Shard::parse("1/3", None).unwrap(),
            Shard { index: 1, count: 3 }
        );
        assert_eq!(
            Shard::parse("/4", Some("3")).unwrap(),
            Shard { index: 3, count: 4 }
        );
        for bad in ["3/2", "0/0", "2/2", "x/2", "1", "/2"] {
            let e = Shard::parse(bad, None).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(!e.message.contains('\n'), "{bad}");
        }
        assert!(Shard::parse("/2", Some("2")).is_err());
    }

    #[test]
    fn blocks_cover_without_overlap() {
        for (n, c) in [(10u64, 3u32), (3, 3), (100_000, 4), (7, 1)] {
            let mut next = 1;
            for i in 0..c {
                let (lo, hi) = Shard { index: i, count: c }.block(n, "x").unwrap();
                assert_eq!(lo, next);
                assert!(hi >= lo);
                next = hi + 1;
            }
            assert_eq!(next, n + 1);
        }
        assert!(Shard { index: 0, count: 3 }
            .block(2, "--warehouses")
            .is_err());
    }

    #[test]
    fn ranges_cover_once_in_whole_groups() {
        for (n, g, c) in [
            (10u64, 1u64, 3u32),
            (2, 1, 3),
            (300_000, 100_000, 2),
            (7, 3, 2),
            (0, 1, 2),
        ] {
            let mut next = 1;
            for i in 0..c {
                let (lo, hi) = Shard { index: i, count: c }.range(n, g);
                if lo > hi {
                    continue;
                }
                assert_eq!(lo, next, "{n} {g} {c}");
                assert!(hi == n || hi % g == 0);
                next = hi + 1;
            }
            assert_eq!(next, n + 1, "{n} {g} {c}");
        }
        assert_eq!(
            Shard { index: 1, count: 2 }.range(300_000, 100_000),
            (100_001, 300_000)
        );
    }
}
