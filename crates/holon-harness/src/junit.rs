//! `--junit PATH`: the run as a JUnit XML report, one `testcase` per trial that ran, named as
//! libtest prints it, with the failure's full message and the time each took.

use std::path::Path;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::error::JunitError;
use crate::record::Record;

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
        // The pass (`function`, `mcp`, `explore`) as the class, as reporters group by it.
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

fn lower(e: &std::io::Error) -> String {
    e.to_string().to_lowercase()
}
