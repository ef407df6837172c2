//! The JSON result file, written atomically (temporary file + rename) so that a reader never
//! sees half a file and an interruption keeps the last complete version.

use std::io::Write;
use std::path::Path;

use super::ResultDoc;
use crate::error::{Error, Result};

pub fn to_string(doc: &ResultDoc) -> String {
    serde_json::to_string_pretty(doc).expect("the result model always serializes")
}

pub fn write_atomic(path: &Path, doc: &ResultDoc) -> Result<()> {
    let text = to_string(doc);
    let tmp = path.with_extension("json.tmp");
    let fail = |e: std::io::Error| {
        Error::run(format!(
            "cannot write the result file {}: {e}",
            path.display()
        ))
    };
    let mut f = std::fs::File::create(&tmp).map_err(fail)?;
    let r = f
        .write_all(text.as_bytes())
        .and_then(|_| f.write_all(b"\n"))
        .and_then(|_| f.sync_all());
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}
