//! The workload parameters: LinkBench's defaults (config/FBWorkload.properties) built in, any
//! of them overridden from a file (`--linkbench-config FILE`) of `key = value` lines, which
//! reads both LinkBench's .properties files and flat TOML. Keys are LinkBench's names.

use crate::error::{Error, Result};

/// The request types in LinkBench's order (the order of its cumulative mix), as `Step::kind`.
pub const KINDS: [&str; 10] = [
    "addlink",
    "deletelink",
    "updatelink",
    "countlink",
    "getlink",
    "getlinklist",
    "addnode",
    "updatenode",
    "deletenode",
    "getnode",
];
pub const ADD_LINK: u8 = 0;
pub const DELETE_LINK: u8 = 1;
pub const UPDATE_LINK: u8 = 2;
pub const COUNT_LINK: u8 = 3;
pub const GET_LINK: u8 = 4;
pub const GET_LINK_LIST: u8 = 5;
pub const ADD_NODE: u8 = 6;
pub const UPDATE_NODE: u8 = 7;
pub const DELETE_NODE: u8 = 8;
pub const GET_NODE: u8 = 9;

/// LinkBench's default request mix, percentages in KINDS order (FBWorkload.properties).
pub const DEFAULT_MIX: [f64; 10] = [
    8.9886601, 2.9907664, 8.0122125, 4.8863567, 0.5261142, 50.7119145, 2.5732789, 7.366437,
    1.0115914, 12.9326683,
];

/// Payload generator settings (LinkBench's MotifDataGenerator).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Motif {
    pub start_byte: u8,
    pub end_byte: u8,
    pub uniqueness: f64,
    pub motif_length: usize,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Props {
    /// Percentages in KINDS order; they must add up to 100.
    pub mix: [f64; 10],
    pub link_type_count: u64,
    pub link_datasize: f64,
    pub node_datasize: f64,
    pub link_add: Motif,
    pub link_up: Motif,
    pub node_add: Motif,
    pub node_up: Motif,
    /// Percent of getlinklist requests that page further back in a list seen truncated.
    pub getlinklist_history: f64,
    /// Rows per getlinklist (LinkBench's LinkStore.DEFAULT_LIMIT).
    pub range_limit: u64,
    pub read_shape: f64,
    pub read_uncorr_blend: f64,
    pub read_uncorr_shape: f64,
    pub write_shape: f64,
    pub write_uncorr_blend: f64,
    pub write_uncorr_shape: f64,
    pub node_read_shape: f64,
    pub node_update_shape: f64,
    pub multiget_min: u64,
    pub multiget_max: u64,
    pub multiget_prob: f64,
    /// This client's part when several client machines run one benchmark: requesters of
    /// client i use request streams that no other client uses.
    pub client_index: u64,
    pub clients: u64,
}

impl Default for Props {
    fn default() -> Self {
        // FBWorkload.properties: links 32..100, uniqueness 0.225 (about 30 % compression);
        // nodes 50..220, uniqueness 0.63 (about 60 %).
        let link = Motif {
            start_byte: 32,
            end_byte: 100,
            uniqueness: 0.225,
            motif_length: 128,
        };
        let node = Motif {
            start_byte: 50,
            end_byte: 220,
            uniqueness: 0.63,
            motif_length: 512,
        };
        Props {
            mix: DEFAULT_MIX,
            link_type_count: 2,
            link_datasize: 8.0,
            node_datasize: 128.0,
            link_add: link,
            link_up: link,
            node_add: node,
            node_up: node,
            getlinklist_history: 0.3,
            range_limit: 10_000,
            read_shape: 0.8,
            read_uncorr_blend: 99.5,
            read_uncorr_shape: 0.8,
            write_shape: 0.741,
            write_uncorr_blend: 95.0,
            write_uncorr_shape: 0.741,
            node_read_shape: 0.625,
            node_update_shape: 0.606,
            multiget_min: 1,
            multiget_max: 128,
            multiget_prob: 0.382,
            client_index: 0,
            clients: 1,
        }
    }
}

/// Keys of LinkBench's files that name its Java classes or settings enginebench has one fixed
/// answer for: accepted when they say what enginebench does, refused otherwise.
fn fixed(key: &str, v: &str) -> Option<std::result::Result<(), String>> {
    let lower = v.to_ascii_lowercase();
    let want = |ok: bool, what: &str| {
        Some(if ok {
            Ok(())
        } else {
            Err(format!("'{v}' is not supported; enginebench uses {what}"))
        })
    };
    match key {
        "read_function"
        | "read_uncorr_function"
        | "write_function"
        | "write_uncorr_function"
        | "node_read_function"
        | "node_update_function" => want(lower.contains("zipf"), "ZipfDistribution here"),
        "node_delete_function" => want(lower.contains("uniform"), "UniformDistribution here"),
        "link_multiget_dist" => want(lower.contains("geometric"), "GeometricDistribution"),
        "link_add_datagen" | "link_up_datagen" | "node_add_datagen" | "node_up_datagen" => {
            want(lower.contains("motif"), "MotifDataGenerator")
        }
        "nlinks_func" => want(
            lower == "real",
            "the measured (real) out-degree, approximated",
        ),
        "startid1" => want(v == "1", "startid1 = 1"),
        "id2gen_config" => want(v == "0", "id2gen_config = 0"),
        "randomid2max" => want(v == "0", "randomid2max = 0"),
        // Files and Java-only settings with no effect on the workload's shape.
        "data_file" | "write_uncorr_config" | "read_config" | "write_config" => Some(Ok(())),
        _ => None,
    }
}

/// Settings given elsewhere (command line) that a LinkBench file may also hold.
pub const CLI_KEYS: [&str; 5] = ["maxid1", "requesters", "requests", "maxtime", "warmup_time"];

/// Parse `key = value` lines over the defaults. Returns the props and the command-line
/// settings found in the file (maxid1, requesters, ...), for the caller to apply.
pub fn parse(text: &str, file: &str) -> Result<(Props, Vec<(String, String)>)> {
    let mut p = Props::default();
    let mut cli = Vec::new();
    for (no, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('[') {
            continue;
        }
        let bad =
            |why: String| Error::usage(format!("--linkbench-config {file} line {}: {why}", no + 1));
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| bad(format!("'{line}' is not key = value")))?;
        let k = k.trim();
        let v = v.split(" #").next().unwrap_or("").trim().trim_matches('"');
        if CLI_KEYS.contains(&k) {
            cli.push((k.to_string(), v.to_string()));
            continue;
        }
        if let Some(r) = fixed(k, v) {
            r.map_err(|e| bad(format!("{k}: {e}")))?;
            continue;
        }
        let num = || -> Result<f64> {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| bad(format!("{k}: '{v}' is not a non-negative number")))
        };
        let int = || -> Result<u64> {
            v.parse::<u64>()
                .map_err(|_| bad(format!("{k}: '{v}' is not a non-negative integer")))
        };
        if let Some(i) = KINDS.iter().position(|x| *x == k) {
            p.mix[i] = num()?;
            continue;
        }
        if let Some((prefix, field)) = [
            "link_add_datagen_",
            "link_up_datagen_",
            "node_add_datagen_",
            "node_up_datagen_",
        ]
        .iter()
        .find_map(|pre| k.strip_prefix(pre).map(|f| (*pre, f)))
        {
            let m = match prefix {
                "link_add_datagen_" => &mut p.link_add,
                "link_up_datagen_" => &mut p.link_up,
                "node_add_datagen_" => &mut p.node_add,
                _ => &mut p.node_up,
            };
            match field {
                "startbyte" => {
                    m.start_byte =
                        u8::try_from(int()?).map_err(|_| bad(format!("{k}: at most 255")))?
                }
                "endbyte" => {
                    m.end_byte =
                        u8::try_from(int()?).map_err(|_| bad(format!("{k}: at most 255")))?
                }
                "uniqueness" => m.uniqueness = num()?,
                "motif_length" => m.motif_length = int()? as usize,
                _ => return Err(bad(format!("unknown key '{k}'"))),
            }
            continue;
        }
        match k {
            "link_type_count" => p.link_type_count = int()?,
            "link_datasize" => p.link_datasize = num()?,
            "node_datasize" => p.node_datasize = num()?,
            "getlinklist_history" => p.getlinklist_history = num()?,
            "range_limit" => p.range_limit = int()?,
            "read_shape" => p.read_shape = num()?,
            "read_uncorr_blend" => p.read_uncorr_blend = num()?,
            "read_uncorr_shape" => p.read_uncorr_shape = num()?,
            "write_shape" => p.write_shape = num()?,
            "write_uncorr_blend" => p.write_uncorr_blend = num()?,
            "write_uncorr_shape" => p.write_uncorr_shape = num()?,
            "node_read_shape" => p.node_read_shape = num()?,
            "node_update_shape" => p.node_update_shape = num()?,
            "link_multiget_dist_min" => p.multiget_min = int()?,
            "link_multiget_dist_max" => p.multiget_max = int()?,
            "link_multiget_dist_prob" => p.multiget_prob = num()?,
            "client_index" => p.client_index = int()?,
            "clients" => p.clients = int()?,
            _ => {
                return Err(bad(format!(
                    "unknown key '{k}' (docs/linkbench.md lists the keys enginebench reads)"
                )))
            }
        }
    }
    p.validate(file)?;
    Ok((p, cli))
}

impl Props {
    pub fn validate(&self, file: &str) -> Result<()> {
        let bad = |why: String| Error::usage(format!("--linkbench-config {file}: {why}"));
        let sum: f64 = self.mix.iter().sum();
        if (sum - 100.0).abs() > 1e-5 {
            return Err(bad(format!(
                "the request percentages ({}) add up to {sum}, not 100",
                KINDS.join(", ")
            )));
        }
        if self.link_type_count == 0 || self.link_type_count > 1000 {
            return Err(bad("link_type_count must be 1 to 1000".into()));
        }
        for (name, s) in [
            ("read_shape", self.read_shape),
            ("read_uncorr_shape", self.read_uncorr_shape),
            ("write_shape", self.write_shape),
            ("write_uncorr_shape", self.write_uncorr_shape),
            ("node_read_shape", self.node_read_shape),
            ("node_update_shape", self.node_update_shape),
        ] {
            if !(s > 0.0 && s < 1.0) {
                return Err(bad(format!(
                    "{name} = {s}: Zipf shapes must be between 0 and 1 (exclusive)"
                )));
            }
        }
        for (name, b) in [
            ("read_uncorr_blend", self.read_uncorr_blend),
            ("write_uncorr_blend", self.write_uncorr_blend),
            ("getlinklist_history", self.getlinklist_history),
        ] {
            if b > 100.0 {
                return Err(bad(format!("{name} = {b}: a percentage, at most 100")));
            }
        }
        for (name, m) in [
            ("link_add_datagen", self.link_add),
            ("link_up_datagen", self.link_up),
            ("node_add_datagen", self.node_add),
            ("node_up_datagen", self.node_up),
        ] {
            if m.start_byte >= m.end_byte || m.uniqueness > 1.0 || m.motif_length == 0 {
                return Err(bad(format!(
                    "{name}: needs startbyte < endbyte, uniqueness in 0..1 and motif_length >= 1"
                )));
            }
        }
        if self.multiget_min == 0
            || self.multiget_max <= self.multiget_min
            || self.multiget_max > 10_000
            || !(self.multiget_prob > 0.0 && self.multiget_prob < 1.0)
        {
            return Err(bad(
                "link_multiget_dist: needs 1 <= min < max <= 10000 and 0 < prob < 1".into(),
            ));
        }
        if self.range_limit == 0 || self.range_limit > 1_000_000 {
            return Err(bad("range_limit must be 1 to 1000000".into()));
        }
        if self.link_datasize > 255.0 || self.node_datasize > (1 << 20) as f64 {
            return Err(bad(
                "link_datasize is at most 255 and node_datasize at most 1048576 bytes".into(),
            ));
        }
        if self.clients == 0 || self.client_index >= self.clients {
            return Err(bad(format!(
                "client_index {} must be below clients {} (>= 1)",
                self.client_index, self.clients
            )));
        }
        Ok(())
    }

    /// Cumulative percentages in KINDS order (the last is 100).
    pub fn cumulative(&self) -> [f64; 10] {
        let mut c = [0.0; 10];
        let mut acc = 0.0;
        for (i, v) in self.mix.iter().enumerate() {
            acc += v;
            c[i] = acc;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let (p, cli) = parse(
            "# LinkBench file\nmaxid1 = 1001\naddlink = 9.9886601\ngetlinklist = 49.7119145\nread_function = com.facebook.LinkBench.distributions.ZipfDistribution\nnode_add_datagen_uniqueness = 0.5\n",
            "f",
        )
        .unwrap();
        assert_eq!(cli, vec![("maxid1".to_string(), "1001".to_string())]);
        assert_eq!(p.mix[0], 9.9886601);
        assert_eq!(p.node_add.uniqueness, 0.5);
        assert_eq!(p.read_shape, 0.8);
        assert!(parse("addlink = 50\n", "f").is_err(), "sum is not 100");
        assert!(parse("foo = 1\n", "f").is_err());
        assert!(parse("read_shape = 1.5\n", "f").is_err());
        assert!(parse("node_delete_function = ZipfDistribution\n", "f").is_err());
        assert!(parse("clients = 2\nclient_index = 2\n", "f").is_err());
        assert!(Props::default().validate("-").is_ok());
        assert!((Props::default().cumulative()[9] - 100.0).abs() < 1e-6);
    }
}
