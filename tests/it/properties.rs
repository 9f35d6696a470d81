//! Properties of the publish checks on arbitrary input: they never panic, and a refusal always
//! says why, at a place inside the file.

use std::io::Write as _;
use std::path::Path;

use crate::util::seam::check_str;
use holon_kit::check::{self, Report, Severity};
use proptest::prelude::*;

const WORD_STATS: &str = include_str!("../../examples/word-stats/holon.yaml");

/// One edit of a manifest's bytes; positions wrap around the text's length.
#[derive(Debug, Clone)]
enum Edit {
    Delete { at: usize, len: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Replace { at: usize, byte: u8 },
    DuplicateLine { line: usize },
    Indent { line: usize, by: i8 },
}

/// Mostly the bytes YAML gives a meaning to, sometimes any byte at all.
fn yaml_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => prop::sample::select(b":-[]{}&*!|>'\"#%@`,\n\t 0aZ~?.".to_vec()),
        1 => any::<u8>(),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1..16usize).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), prop::collection::vec(yaml_byte(), 1..8))
            .prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        (any::<usize>(), yaml_byte()).prop_map(|(at, byte)| Edit::Replace { at, byte }),
        any::<usize>().prop_map(|line| Edit::DuplicateLine { line }),
        (any::<usize>(), -4i8..=4).prop_map(|(line, by)| Edit::Indent { line, by }),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for edit in edits {
        let at = |at: usize, len: usize| at % (len + 1);
        match edit {
            Edit::Delete { at: i, len } => {
                let start = at(*i, bytes.len());
                let end = (start + len).min(bytes.len());
                bytes.drain(start..end);
            }
            Edit::Insert { at: i, bytes: new } => {
                let start = at(*i, bytes.len());
                bytes.splice(start..start, new.iter().copied());
            }
            Edit::Replace { at: i, byte } => {
                if !bytes.is_empty() {
                    let i = *i % bytes.len();
                    bytes[i] = *byte;
                }
            }
            Edit::DuplicateLine { line } | Edit::Indent { line, .. } => {
                let mut lines: Vec<Vec<u8>> =
                    bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
                let i = *line % lines.len();
                match edit {
                    Edit::DuplicateLine { .. } => lines.insert(i, lines[i].clone()),
                    Edit::Indent { by, .. } if *by >= 0 => {
                        lines[i].splice(0..0, std::iter::repeat_n(b' ', *by as usize));
                    }
                    Edit::Indent { by, .. } => {
                        let spaces = lines[i].iter().take_while(|b| **b == b' ').count();
                        lines[i].drain(..spaces.min(by.unsigned_abs() as usize));
                    }
                    _ => unreachable!(),
                }
                bytes = lines.join(&b'\n');
            }
        }
    }
    bytes
}

/// What must hold of every report, whatever the input.
fn sound(report: &Report) -> Result<(), TestCaseError> {
    let errors = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    prop_assert_eq!(report.accepted(), errors == 0, "{:?}", report.diagnostics);
    if !report.accepted() {
        prop_assert!(errors >= 1);
    }
    let lines = report.source.lines().count() as u64;
    for d in &report.diagnostics {
        prop_assert!(!d.message.trim().is_empty(), "empty message: {:?}", d);
        prop_assert!(!d.check.is_empty(), "no check id: {:?}", d);
        prop_assert_eq!(
            d.line == 0,
            d.column == 0,
            "a line without a column: {:?}",
            d
        );
        // A place past the end is allowed by one line: a parser reports the end of the file
        // there. A file that is not text has no source to hold it to.
        if !report.source.is_empty() {
            prop_assert!(
                d.line <= lines + 1,
                "line {} in a file of {} lines: {:?}",
                d.line,
                lines,
                d
            );
        }
    }
    // Both renderings handle whatever the checks found.
    let json: serde_json::Value = serde_json::from_str(&check::render_json(report))
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(
        json["diagnostics"].as_array().map(Vec::len),
        Some(report.diagnostics.len())
    );
    let human = check::render_human(report, false);
    prop_assert!(human.ends_with('\n'));
    Ok(())
}

fn check_bytes(bytes: &[u8]) -> Result<Report, TestCaseError> {
    let mut file =
        tempfile::NamedTempFile::new().map_err(|e| TestCaseError::fail(e.to_string()))?;
    file.write_all(bytes)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(check::check_file(file.path()))
}

proptest! {
    #[test]
    fn arbitrary_bytes_are_refused_with_a_reason(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let report = check_bytes(&bytes)?;
        sound(&report)?;
        // Nothing that is not a mapping with every required field can pass.
        prop_assert!(!report.accepted());
    }

    #[test]
    fn yaml_like_text_is_refused_with_a_reason(text in "[a-z_:{}\\[\\]\n #&*!|>'\"-]{0,400}") {
        let report = check_str(&text, Path::new("holon.yaml"));
        sound(&report)?;
        prop_assert!(!report.accepted());
    }

    #[test]
    fn edited_manifests_never_panic(edits in prop::collection::vec(edit(), 1..6)) {
        let bytes = apply(WORD_STATS, &edits);
        sound(&check_str(&String::from_utf8_lossy(&bytes), Path::new("holon.yaml")))?;
        sound(&check_bytes(&bytes)?)?;
    }
}

#[test]
fn the_unedited_manifest_is_accepted() {
    // The edits start from a manifest that passes, so a refusal above is the edit's doing.
    let report = check_str(
        &String::from_utf8(apply(WORD_STATS, &[])).unwrap(),
        Path::new("holon.yaml"),
    );
    assert!(
        report.accepted() && report.diagnostics.is_empty(),
        "{:?}",
        report.diagnostics
    );
}
