//! `--junit PATH`: the run as a JUnit XML report, one `testcase` per trial that ran, named as
//! libtest prints it, with the failure's full message and the time each took; for a manifest
//! the checks refused, one failing `testcase` per error, so a CI report says why nothing ran.

use std::path::Path;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::error::JunitError;
use crate::record::Record;
use holon_core::check::{Report as Checked, Severity};

/// Writes the report for the trials in `records` to `path`, creating its folder.
pub(crate) fn write(
    path: &Path,
    agent: &str,
    records: &[Record],
    took: Duration,
) -> Result<(), JunitError> {
    let mut suite = TestSuite::new(agent);
    for record in records {
        let status = match &record.failure {
            None => TestCaseStatus::success(),
            Some(message) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status
                    .set_message(message.lines().next().unwrap_or("failed"))
                    .set_description(message.as_str());
                status
            }
        };
        let mut case = TestCase::new(record.name.as_str(), status);
        // The pass (`function`, `mcp`, `explore`, or `check`) as the class, as reporters group
        // by it.
        let pass = record.name.split_once("::").map_or("holon", |(p, _)| p);
        case.set_classname(format!("{agent}::{pass}"))
            .set_time(record.took);
        suite.add_test_case(case);
    }
    suite.set_time(took);
    let mut report = Report::new(format!("holon-test {agent}"));
    report.set_time(took).add_test_suite(suite);
    let xml = report
        .to_string()
        .map_err(|e| JunitError::Render(e.to_string()))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| JunitError::Folder {
            dir: dir.to_path_buf(),
            why: lower(&e),
        })?;
    }
    std::fs::write(path, xml).map_err(|e| JunitError::Write {
        path: path.to_path_buf(),
        why: lower(&e),
    })
}

/// Writes the report of a run that stopped at the checks: one failing `testcase` per error of
/// `checked` (`check::<id>`, with where it is and the hint).
pub(crate) fn write_refused(path: &Path, agent: &str, checked: &Checked) -> Result<(), JunitError> {
    let file = checked.path.display().to_string();
    let records: Vec<Record> = (checked.diagnostics.iter())
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            let mut failure = format!(
                "error[{}]: {}\n  --> {file}:{}:{}",
                d.check, d.message, d.line, d.column
            );
            if let Some(hint) = &d.hint {
                failure.push_str(&format!("\n  = hint: {hint}"));
            }
            Record {
                name: format!("check::{} ({file}:{}:{})", d.check, d.line, d.column),
                took: Duration::ZERO,
                failure: Some(failure),
                shown: None,
                cause: None,
            }
        })
        .collect();
    write(path, agent, &records, Duration::ZERO)
}

/// Writes the report of a run that could not start: one failing `testcase`, `holon-test`, with
/// `why`.
pub(crate) fn write_stopped(path: &Path, agent: &str, why: &str) -> Result<(), JunitError> {
    let record = Record {
        name: "holon-test".to_string(),
        took: Duration::ZERO,
        failure: Some(why.to_string()),
        shown: None,
        cause: None,
    };
    write(path, agent, &[record], Duration::ZERO)
}

/// The agent as a report names it when its manifest cannot be read: the folder it is in.
pub(crate) fn agent_of(manifest: &Path) -> String {
    let folder = holon_core::manifest::folder_of(manifest);
    (std::path::absolute(&folder).ok())
        .and_then(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "holon".to_string())
}

fn lower(e: &std::io::Error) -> String {
    e.to_string().to_lowercase()
}
