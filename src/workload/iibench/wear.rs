//! Flash wear inputs: the block device's write counters (`/proc/diskstats`) for the device
//! that holds the server's data, to get the average write size (the report's 215 KB vs 23 KB).
//! These counters are device-wide: every process writing to that device counts.

use std::path::Path;

/// Counters of one block device at one instant (`/proc/diskstats` fields 8 and 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskSample {
    pub writes: u64,
    pub sectors_written: u64,
}

/// The block device (`major:minor` and its name in /proc/diskstats) holding `path`, if its
/// counters are readable.
pub fn device_of(path: &Path) -> Option<(String, u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    // Linux's dev_t encoding (glibc gnu_dev_major / gnu_dev_minor).
    let major = (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32;
    let minor = ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32;
    let text = std::fs::read_to_string("/proc/diskstats").ok()?;
    let name = parse_line(&text, major, minor)?.0;
    Some((name, major, minor))
}

/// The sample of device `major:minor` now.
pub fn sample(major: u32, minor: u32) -> Option<DiskSample> {
    let text = std::fs::read_to_string("/proc/diskstats").ok()?;
    parse_line(&text, major, minor).map(|(_, s)| s)
}

fn parse_line(text: &str, major: u32, minor: u32) -> Option<(String, DiskSample)> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 10 || f[0].parse::<u32>().ok()? != major || f[1].parse::<u32>().ok()? != minor
        {
            return None;
        }
        Some((
            f[2].to_string(),
            DiskSample {
                writes: f[7].parse().ok()?,
                sectors_written: f[9].parse().ok()?,
            },
        ))
    })
}

/// What the device did between two samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeviceWrites {
    /// The device's name in /proc/diskstats (e.g. vda).
    pub device: String,
    /// Write requests completed.
    pub writes: u64,
    /// Sectors written × 512.
    pub written_bytes: u64,
    /// written_bytes / writes.
    pub avg_write_bytes: f64,
}

pub fn between(device: &str, a: DiskSample, b: DiskSample) -> DeviceWrites {
    let writes = b.writes.saturating_sub(a.writes);
    let written_bytes = b.sectors_written.saturating_sub(a.sectors_written) * 512;
    DeviceWrites {
        device: device.to_string(),
        writes,
        written_bytes,
        avg_write_bytes: written_bytes as f64 / writes.max(1) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diskstats_line() {
        let text = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0\n 254       0 vda 1958451 31383 48901690 92261512 1974978 496754 171572632 4078123 0 1664124 96851738\n";
        let (name, s) = parse_line(text, 254, 0).unwrap();
        assert_eq!(name, "vda");
        assert_eq!(s.writes, 1974978);
        assert_eq!(s.sectors_written, 171572632);
        assert!(parse_line(text, 254, 1).is_none());
        let d = between(
            "vda",
            s,
            DiskSample {
                writes: s.writes + 10,
                sectors_written: s.sectors_written + 80,
            },
        );
        assert_eq!((d.writes, d.written_bytes), (10, 40960));
        assert_eq!(d.avg_write_bytes, 4096.0);
    }

    #[test]
    fn this_machines_root_device_if_readable() {
        // Not every machine exposes it (containers on overlayfs do not): only check the shape.
        if let Some((name, major, minor)) = device_of(Path::new("/")) {
            assert!(!name.is_empty());
            assert!(sample(major, minor).is_some());
        }
    }
}
