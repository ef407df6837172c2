//! Text with controlled compressibility (`--compressed-fraction F`): column values whose
//! stream, compressed with zstd level 3, takes about F of its raw size.
//!
//! How: a value is a run of segments. A segment is either fresh random text (64 symbols,
//! 6 bits of entropy per byte: zstd keeps it at about 0.76 of its size) or a copy of a stretch
//! of a small seeded pool (1 KiB) that the compressor has seen before: one match, a few bytes.
//! The share of random segments is calibrated once, when the generator is built, by bisection
//! against zstd level 3 on a 256 KiB sample of values of the same lengths (deterministic: the
//! sample and zstd are). So the target holds for short values too, where the per-match cost
//! of a copy is a larger part of the value. After calibration a second, independent sample is
//! compressed with zstd 3, lz4 and zlib 6; those ratios go into the result.
//!
//! Limits (docs/iibench.md): random text from a 64-symbol alphabet compresses to about 0.76,
//! so F above that gives all-random text (the achieved ratio is recorded); a copy costs a few
//! bytes, so F below about 0.05 (longer values) or 0.35 (10-byte values) is not reached either.
//! The ratio is that of a stream of values; a compressor that sees one small page at a time
//! finds fewer pool copies on the page and compresses a little less.

use std::io::Write;

use crate::rng::Rng;

/// URL-safe base64 symbols: no quote, backslash, tab or newline (nothing to escape).
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/// Fresh random text is written in segments of this many bytes.
const RANDOM_SEG: usize = 32;
/// Copies from the pool are this long: one zstd match of ~3-4 bytes each.
const COPY_SEG: usize = 128;
/// The pool copies come from (small, so that it is soon in any compressor's window).
const POOL: usize = 1024;
/// Calibration sample size.
const SAMPLE_BYTES: usize = 256 * 1024;
/// zstd level of the target (the definition of F).
pub const ZSTD_LEVEL: i32 = 3;

/// Compressed size / raw size of one stream of values, per codec.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Ratios {
    pub zstd3: f64,
    /// lz4 block format (lz4_flex), the whole sample as one block.
    pub lz4: f64,
    /// zlib (deflate) level 6, the default of most servers' zlib compression.
    pub zlib6: f64,
}

/// A calibrated generator; cheap to share (read-only after `new`).
#[derive(Debug, Clone)]
pub struct TextGen {
    pub fraction: f64,
    /// Probability that a segment is fresh random text (calibrated).
    pub random_share: f64,
    /// Measured on an independent sample after calibration.
    pub ratios: Ratios,
    pool: Vec<u8>,
    len_min: usize,
    len_max: usize,
}

impl TextGen {
    /// Build and calibrate a generator for values of `len_min..=len_max` bytes. `fraction` must
    /// be in (0, 1] (checked by the caller's config stage).
    pub fn new(fraction: f64, seed: u64, len_min: usize, len_max: usize) -> TextGen {
        let len_max = len_max.max(len_min).max(1);
        let len_min = len_min.max(1);
        let mut r = Rng::keyed(seed, 0x7e47, 0);
        let mut pool = vec![0u8; POOL];
        random_text(&mut r, &mut pool);
        let mut g = TextGen {
            fraction,
            random_share: 1.0,
            ratios: Ratios {
                zstd3: 0.0,
                lz4: 0.0,
                zlib6: 0.0,
            },
            pool,
            len_min,
            len_max,
        };
        let ratio_at = |g: &mut TextGen, q: f64| {
            g.random_share = q;
            zstd_ratio(&g.sample(seed, 1))
        };
        if ratio_at(&mut g, 1.0) > fraction {
            // The ratio grows with the random share: bisection on [0, 1].
            let (mut lo, mut hi) = (0.0f64, 1.0f64);
            for _ in 0..14 {
                let mid = (lo + hi) / 2.0;
                if ratio_at(&mut g, mid) > fraction {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            g.random_share = (lo + hi) / 2.0;
        }
        g.ratios = measure(&g.sample(seed, 2));
        g
    }

    /// The value lengths the generator was calibrated for.
    pub fn len_range(&self) -> (usize, usize) {
        (self.len_min, self.len_max)
    }

    /// A value length drawn from the configured range.
    #[inline]
    pub fn draw_len(&self, r: &mut Rng) -> usize {
        r.range(self.len_min as u64, self.len_max as u64) as usize
    }

    /// Append `len` bytes of text to `out`, drawn from `r`.
    pub fn fill(&self, r: &mut Rng, len: usize, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + len, 0);
        let buf = &mut out[start..];
        let mut pos = 0;
        let all_random = self.random_share >= 1.0;
        while pos < len {
            if all_random || r.chance(self.random_share) {
                let n = RANDOM_SEG.min(len - pos);
                random_text(r, &mut buf[pos..pos + n]);
                pos += n;
            } else {
                let n = COPY_SEG.min(len - pos);
                let off = r.range(0, (POOL - n) as u64) as usize;
                buf[pos..pos + n].copy_from_slice(&self.pool[off..off + n]);
                pos += n;
            }
        }
    }

    /// A value as a String (the alphabet is ASCII).
    pub fn value(&self, r: &mut Rng) -> String {
        let len = self.draw_len(r);
        let mut v = Vec::with_capacity(len);
        self.fill(r, len, &mut v);
        String::from_utf8(v).expect("the alphabet is ASCII")
    }

    /// Values concatenated until `SAMPLE_BYTES`, from stream `stream` of `seed`.
    fn sample(&self, seed: u64, stream: u64) -> Vec<u8> {
        let mut r = Rng::keyed(seed, 0x7e48, stream);
        let mut out = Vec::with_capacity(SAMPLE_BYTES + self.len_max);
        while out.len() < SAMPLE_BYTES {
            let len = self.draw_len(&mut r);
            self.fill(&mut r, len, &mut out);
        }
        out
    }
}

/// Fill `buf` with random symbols of the alphabet: 10 symbols per 64-bit draw.
#[inline]
fn random_text(r: &mut Rng, buf: &mut [u8]) {
    for chunk in buf.chunks_mut(10) {
        let mut x = r.next_u64();
        for b in chunk {
            *b = ALPHABET[(x & 63) as usize];
            x >>= 6;
        }
    }
}

/// zstd level 3 compressed size / raw size.
pub fn zstd_ratio(data: &[u8]) -> f64 {
    let c = zstd::bulk::compress(data, ZSTD_LEVEL).expect("zstd compresses in memory");
    c.len() as f64 / data.len().max(1) as f64
}

/// Compressed / raw size of `data` with zstd 3, lz4 and zlib 6.
pub fn measure(data: &[u8]) -> Ratios {
    let raw = data.len().max(1) as f64;
    let lz4 = lz4_flex::block::compress(data).len() as f64 / raw;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
    z.write_all(data).expect("in-memory write");
    let zlib6 = z.finish().expect("in-memory write").len() as f64 / raw;
    Ratios {
        zstd3: zstd_ratio(data),
        lz4,
        zlib6,
    }
}

/// `--compressed-fraction` as typed, checked: `None` when not given (each workload's own text).
pub fn fraction_flag(s: Option<&str>) -> crate::error::Result<Option<f64>> {
    s.map(|s| {
        parse_fraction(s)
            .map_err(|e| crate::error::Error::usage(format!("--compressed-fraction: {e}")))
    })
    .transpose()
}

impl TextGen {
    /// What the result records of a generator: the target, the calibration and the ratios
    /// achieved on an independent sample (the same fields in every workload).
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "compressed_fraction": self.fraction,
            "zstd_level": ZSTD_LEVEL,
            "length_min": self.len_min,
            "length_max": self.len_max,
            "random_share": self.random_share,
            "ratios": self.ratios,
        })
    }

    /// The result note of a generator used for `what` (e.g. "oltp: c").
    pub fn note(&self, what: &str) -> String {
        let r = self.ratios;
        format!(
            "{what}: --compressed-fraction {:.2} (zstd level 3, src/workload/textgen.rs, docs/compressed-fraction.md); values of {}..{} bytes, achieved on an independent 256 KiB sample: zstd-3 {:.3}, lz4 {:.3}, zlib-6 {:.3}.",
            self.fraction, self.len_min, self.len_max, r.zstd3, r.lz4, r.zlib6
        )
    }
}

impl serde::Serialize for TextGen {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.summary().serialize(s)
    }
}

/// `--compressed-fraction`: a number in (0, 1].
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    let f: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number (give a fraction such as 0.3)"))?;
    if !(f > 0.0 && f <= 1.0) {
        return Err(format!(
            "{f} is out of range: give a fraction above 0 and at most 1 (1 = random text)"
        ));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// About 1 MB of values drawn like a loader would (one keyed generator per row).
    fn values(g: &TextGen, seed: u64, bytes: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes + g.len_max);
        let mut row = 0;
        while out.len() < bytes {
            row += 1;
            let mut r = Rng::keyed(seed, 99, row);
            let len = g.draw_len(&mut r);
            g.fill(&mut r, len, &mut out);
        }
        out
    }

    #[test]
    fn fraction_0_3_within_10_percent_over_1_mb() {
        for (lo, hi) in [(100, 1000), (10, 100), (4000, 4000)] {
            let g = TextGen::new(0.3, 7, lo, hi);
            let data = values(&g, 12345, 1 << 20);
            let r = zstd_ratio(&data);
            assert!(
                (r - 0.3).abs() <= 0.03,
                "lengths {lo}..{hi}: zstd-3 ratio {r:.3}, wanted 0.30 ± 0.03 (share {:.3})",
                g.random_share
            );
            // The other codecs of the same data are recorded, and they are plausible.
            assert!(g.ratios.lz4 > 0.0 && g.ratios.zlib6 > 0.0);
        }
    }

    #[test]
    fn other_fractions_and_the_random_limit() {
        let g = TextGen::new(0.6, 3, 50, 500);
        let r = zstd_ratio(&values(&g, 1, 1 << 20));
        assert!((r - 0.6).abs() <= 0.06, "F=0.6: {r:.3}");
        // F = 1 cannot be reached by text of 64 symbols: all random, about 6/8 of the size.
        let g = TextGen::new(1.0, 3, 50, 500);
        assert_eq!(g.random_share, 1.0);
        let r = zstd_ratio(&values(&g, 1, 1 << 20));
        assert!(r > 0.72 && r < 0.80, "F=1: {r:.3}");
        // Fractions order the ratios.
        let g1 = TextGen::new(0.2, 3, 50, 500);
        let g2 = TextGen::new(0.4, 3, 50, 500);
        assert!(g1.ratios.zstd3 < g2.ratios.zstd3);
        assert!(g1.ratios.lz4 < g2.ratios.lz4);
    }

    #[test]
    fn deterministic_by_seed_and_ascii() {
        let g = TextGen::new(0.5, 9, 10, 40);
        let a = g.value(&mut Rng::keyed(1, 2, 3));
        let b = TextGen::new(0.5, 9, 10, 40).value(&mut Rng::keyed(1, 2, 3));
        assert_eq!(a, b);
        assert!(a.len() >= 10 && a.len() <= 40);
        assert!(a.bytes().all(|c| ALPHABET.contains(&c)));
        assert_ne!(a, g.value(&mut Rng::keyed(1, 2, 4)));
        assert!(parse_fraction("0").is_err());
        assert!(parse_fraction("1.5").is_err());
        assert!(parse_fraction("x").is_err());
        assert_eq!(parse_fraction("0.3"), Ok(0.3));
    }
}
