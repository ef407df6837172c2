//! Parsers for what users type: durations ("60s", "3m", "500ms"), counts with
//! suffixes ("1M", "100k"), and thread lists ("1,4,16"). Pure functions, no I/O.

use std::time::Duration;

/// Parse a duration: a number with a unit `ms`, `s`, `m`, `h`; a bare number is seconds.
pub fn duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad =
        || format!("invalid duration '{s}': use a number with a unit, e.g. 500ms, 60s, 3m, 1h");
    if num.is_empty() {
        return Err(bad());
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => v,
        "ms" => v / 1000.0,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs > 1e9 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parse a positive count with an optional k/M/G suffix (powers of 1000): "1M" = 1,000,000.
pub fn count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let bad = || {
        format!(
            "invalid count '{s}': use a whole number, optionally with k, M or G (e.g. 100k, 1M)"
        )
    };
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1_000u64),
        Some('m' | 'M') => (&t[..t.len() - 1], 1_000_000),
        Some('g' | 'G') => (&t[..t.len() - 1], 1_000_000_000),
        _ => (&t[..], 1),
    };
    let v: u64 = num.parse().map_err(|_| bad())?;
    v.checked_mul(mult).ok_or_else(bad)
}

/// Parse a rate in operations per second: a positive number (fractions allowed), optionally
/// with a k or M suffix: "500", "2.5k", "0.5".
pub fn rate(s: &str) -> Result<f64, String> {
    let t = s.trim().replace('_', "");
    let bad = || {
        format!("invalid rate '{s}': use a positive number of operations per second, e.g. 500, 2.5k, 1M")
    };
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        _ => (&t[..], 1.0),
    };
    let v: f64 = num.parse().map_err(|_| bad())?;
    let v = v * mult;
    if !v.is_finite() || v <= 0.0 || v > 1e9 {
        return Err(bad());
    }
    Ok(v)
}

/// Parse a comma-separated list of thread counts, each at least 1: "1,4,16".
pub fn thread_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let p = part.trim();
        let n: usize = p
            .parse()
            .map_err(|_| format!("invalid thread count '{p}' in '{s}': use whole numbers separated by commas, e.g. 1,4,16"))?;
        if n == 0 {
            return Err(format!(
                "invalid thread count 0 in '{s}': every thread count must be at least 1"
            ));
        }
        if n > 100_000 {
            return Err(format!("thread count {n} is too large (at most 100000)"));
        }
        out.push(n);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(rate("500").unwrap(), 500.0);
        assert_eq!(rate("2.5k").unwrap(), 2500.0);
        assert_eq!(rate("0.5").unwrap(), 0.5);
        for bad in ["0", "-3", "abc", "", "nan", "inf", "1e12"] {
            assert!(rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(duration("60").unwrap(), Duration::from_secs(60));
        assert_eq!(duration("3m").unwrap(), Duration::from_secs(180));
        assert_eq!(duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("1.5s").unwrap(), Duration::from_millis(1500));
        for bad in ["", "s", "10x", "-1s", "1e99h", "ten"] {
            assert!(duration(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(count("1M").unwrap(), 1_000_000);
        assert_eq!(count("100k").unwrap(), 100_000);
        assert_eq!(count("1_000").unwrap(), 1000);
        assert_eq!(count("42").unwrap(), 42);
        assert!(count("1.5M").is_err());
        assert!(count("x").is_err());
        assert!(count("99999999999G").is_err());
    }

    #[test]
    fn thread_lists() {
        assert_eq!(thread_list("1,4,16").unwrap(), vec![1, 4, 16]);
        assert_eq!(thread_list(" 8 ").unwrap(), vec![8]);
        assert!(thread_list("0").unwrap_err().contains("at least 1"));
        assert!(thread_list("1,,4").is_err());
        assert!(thread_list("four").is_err());
    }
}
