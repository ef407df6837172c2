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
    let mut text = to_string(doc);
    text.push('\n');
    write_text_atomic(path, &text).map_err(|e| {
        Error::run(format!(
            "cannot write the result file {}: {e}",
            path.display()
        ))
    })
}

/// Write `text` to `path` through a temporary file in the same folder, synced, then renamed:
/// on any failure (a full disk) the temporary file is removed and `path` keeps its last
/// complete version (or stays absent). Every output file of a run is written this way.
pub fn write_text_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let r = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.sync_all()
    });
    let r = r.and_then(|()| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// Write a report's text to `output` (said on stderr with its size), or to stdout for "-".
pub fn write_report(output: &str, text: &str) -> Result<()> {
    if output == "-" {
        print!("{text}");
    } else {
        write_text_atomic(Path::new(output), text)
            .map_err(|e| Error::usage(format!("--output: cannot write {output}: {e}")))?;
        eprintln!("report: {output} ({} KiB)", text.len().div_ceil(1024));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_text_atomic(&p, "one").unwrap();
        write_text_atomic(&p, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        // A folder that does not exist: an error, nothing written.
        assert!(write_text_atomic(&dir.path().join("no/such.json"), "x").is_err());
    }
}
