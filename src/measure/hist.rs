//! Latency histograms: HDR, microsecond resolution, 3 significant digits. One per worker,
//! recorded without locks, merged by `add` when a phase ends.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The highest latency tracked exactly: one hour. Longer ones are clamped (and still counted).
const MAX_US: u64 = 3_600_000_000;

/// The percentiles reported everywhere in the tool (plus max and mean).
pub const PERCENTILES: [f64; 5] = [50.0, 90.0, 95.0, 99.0, 99.9];

#[derive(Debug, Clone)]
pub struct LatencyHist(Histogram<u64>);

impl Default for LatencyHist {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHist {
    /// An empty histogram that starts small and grows (auto-resize) up to the largest value
    /// recorded or added, never past one hour. Buckets are those of a fixed 1 µs..1 h histogram
    /// (same lowest value and precision), so merges stay exact; but an idle or fast worker holds
    /// 16-90 KB instead of 188 KB: at 1,024 connections with several histograms each, the fixed
    /// size alone took about 0.8 GB (BENCHMARKS.md, scale-1024).
    pub fn new() -> Self {
        let mut h = Histogram::new_with_bounds(1, 2, 3).expect("valid static histogram bounds");
        h.auto(true);
        Self(h)
    }

    #[inline]
    pub fn record_us(&mut self, us: u64) {
        // Grows at most ~22 times over a histogram's life (once per power of two of the max).
        if self.0.record(us.clamp(1, MAX_US)).is_err() {
            self.0.saturating_record(us.clamp(1, MAX_US));
        }
    }

    /// Add another histogram's counts (exact: histograms with the same bounds add bucket by bucket).
    pub fn add(&mut self, other: &LatencyHist) {
        self.0.add(&other.0).expect("histograms share bounds");
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// The HDR histogram itself, for outputs that walk its buckets (`report --format hgrm`).
    pub fn hdr(&self) -> &Histogram<u64> {
        &self.0
    }

    /// Add this histogram's counts into fixed buckets: `into[i]` gets the values in
    /// (`bounds_us[i-1]`, `bounds_us[i]`], the extra last slot those above the last bound.
    /// A value is placed by the lowest value of its HDR bucket, so a latency recorded exactly
    /// at a bound counts at or below it. Cost: one pass over the recorded buckets (a few
    /// hundred), done once per report interval, never per operation.
    pub fn add_to_buckets(&self, bounds_us: &[u64], into: &mut [u64]) {
        debug_assert_eq!(into.len(), bounds_us.len() + 1);
        for v in self.0.iter_recorded() {
            let us = self.0.lowest_equivalent(v.value_iterated_to());
            let i = bounds_us.partition_point(|&b| b < us);
            into[i] += v.count_at_value();
        }
    }

    /// Mean in µs (0 when empty).
    pub fn mean_us(&self) -> f64 {
        if self.0.is_empty() {
            0.0
        } else {
            self.0.mean()
        }
    }

    pub fn reset(&mut self) {
        self.0.reset();
    }

    pub fn summary(&self) -> LatencySummary {
        let h = &self.0;
        if h.is_empty() {
            return LatencySummary::default();
        }
        let q = |p: f64| h.value_at_quantile(p / 100.0);
        LatencySummary {
            min_us: h.min(),
            mean_us: (h.mean() * 10.0).round() / 10.0,
            p50_us: q(50.0),
            p90_us: q(90.0),
            p95_us: q(95.0),
            p99_us: q(99.0),
            p99_9_us: q(99.9),
            max_us: h.max(),
        }
    }

    /// The `p`-th percentile (0 < p <= 100) in microseconds; 0 when empty.
    pub fn percentile_us(&self, p: f64) -> u64 {
        if self.0.is_empty() {
            return 0;
        }
        self.0.value_at_quantile(p / 100.0)
    }

    /// `--percentile`: the asked-for percentiles by name (`p97_5` for 97.5).
    pub fn percentiles_us(&self, ps: &[f64]) -> std::collections::BTreeMap<String, u64> {
        ps.iter()
            .map(|&p| (percentile_key(p), self.percentile_us(p)))
            .collect()
    }

    /// The histogram in HdrHistogram's V2 format, base64: lets results be merged exactly later.
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        V2Serializer::new()
            .serialize(&self.0, &mut buf)
            .expect("serializing to memory");
        base64::engine::general_purpose::STANDARD.encode(buf)
    }

    pub fn decode(s: &str) -> Result<Self, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_err(|e| e.to_string())?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| format!("{e:?}"))?;
        let mut out = Self::new();
        out.0.add(&h).map_err(|e| format!("{e:?}"))?;
        Ok(out)
    }
}

/// The result key of a percentile: `p97_5` for 97.5, `p80` for 80 (like `p99_9_us`).
pub fn percentile_key(p: f64) -> String {
    format!("p{}", format!("{p}").replace('.', "_"))
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub min_us: u64,
    pub mean_us: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub p99_9_us: u64,
    pub max_us: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHist::new();
        let mut b = LatencyHist::new();
        let mut all = LatencyHist::new();
        for i in 1..=1000u64 {
            let v = i * 37 % 5000 + 1;
            if i % 3 == 0 {
                a.record_us(v)
            } else {
                b.record_us(v)
            }
            all.record_us(v);
        }
        a.add(&b);
        assert_eq!(a.count(), 1000);
        assert_eq!(a.summary(), all.summary());
    }

    #[test]
    fn percentiles_are_within_three_digits() {
        let mut h = LatencyHist::new();
        for v in 1..=100_000u64 {
            h.record_us(v);
        }
        let s = h.summary();
        let close = |got: u64, want: u64| (got as f64 - want as f64).abs() / want as f64 <= 0.001;
        assert!(close(s.p50_us, 50_000), "{s:?}");
        assert!(close(s.p99_us, 99_000), "{s:?}");
        assert!(close(s.max_us, 100_000), "{s:?}");
        assert_eq!(s.min_us, 1);
    }

    #[test]
    fn extra_percentiles() {
        let mut h = LatencyHist::new();
        for v in 1..=1000u64 {
            h.record_us(v);
        }
        let m = h.percentiles_us(&[97.5, 80.0]);
        assert_eq!(m["p97_5"], 975);
        assert_eq!(m["p80"], 800);
        assert_eq!(LatencyHist::new().percentile_us(50.0), 0);
    }

    #[test]
    fn grows_on_demand_and_merges_exactly_with_large_values() {
        let mut small = LatencyHist::new();
        let mut big = LatencyHist::new();
        let mut all = LatencyHist::new();
        for v in [1u64, 7, 300, 2_500, 40_000] {
            small.record_us(v);
            all.record_us(v);
        }
        for v in [90_000_000u64, 3_599_999_999, 12] {
            big.record_us(v);
            all.record_us(v);
        }
        let before = small.0.distinct_values();
        small.add(&big);
        assert!(small.0.distinct_values() > before);
        assert_eq!(small.summary(), all.summary());
        assert_eq!(small.count(), 8);
        // The same percentiles as a histogram of fixed bounds 1 µs..1 h.
        let mut fixed = Histogram::<u64>::new_with_bounds(1, MAX_US, 3).unwrap();
        for v in [1u64, 7, 300, 2_500, 40_000, 90_000_000, 3_599_999_999, 12] {
            fixed.record(v).unwrap();
        }
        assert_eq!(small.summary().p99_us, fixed.value_at_quantile(0.99));
        assert_eq!(small.summary().p50_us, fixed.value_at_quantile(0.5));
        let back = LatencyHist::decode(&small.encode()).unwrap();
        assert_eq!(back.summary(), small.summary());
    }

    #[test]
    fn encode_roundtrip_and_clamping() {
        let mut h = LatencyHist::new();
        h.record_us(0); // clamped to 1
        h.record_us(250);
        h.record_us(u64::MAX); // clamped to one hour
        let back = LatencyHist::decode(&h.encode()).unwrap();
        assert_eq!(back.count(), 3);
        assert_eq!(back.summary(), h.summary());
        assert!(LatencyHist::decode("not base64!").is_err());
    }
}
