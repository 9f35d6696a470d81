//! A run's publish checks, in a room of their own: the registry's checks and
//! `source-commit-stale`, printed before the trials (by the command line, or by the test target
//! when nothing printed them), and the `error-without-example` warnings held back until the
//! trials may answer them. A declared code that a passing fault trial or explore reached is
//! proven: the tests show the agent raises it, and the run does not warn that no example
//! shows it (`check`, which runs nothing, still does). The others are printed after the run.

use std::collections::BTreeMap;
use std::path::Path;

use crate::reporter::{Event, say};
use holon_core::check::{self, Report};
use holon_core::ids;

/// The lint the trials can answer: a declared code no example shows.
const WITHOUT_EXAMPLE: &str = ids::ERROR_WITHOUT_EXAMPLE.name();

/// The checks a test run starts with (the publish checks, `source-commit-stale`; under
/// `--bless`, an example output the schema no longer admits is a difference to write), and the
/// warnings held back from them for the fault trials to answer after the run.
pub fn checks(path: &Path, bless: bool) -> (Report, Report) {
    let mut report = crate::provenance::checks(path);
    if bless {
        report = check::for_bless(report);
    }
    let held = hold_back(&mut report);
    (report, held)
}

/// The checks a test target starts with, printed (each hint naming `program`'s `explain`) when
/// they refuse, or warn and the command line did not print them already (`shown`: then they
/// are only read again, for the run to go by); and the warnings held back from them.
pub(crate) fn before_run(
    path: &Path,
    bless: bool,
    shown: bool,
    color: bool,
    program: &str,
) -> (Report, Report) {
    let (report, held) = if shown {
        let mut report = check::check_file(path);
        if bless {
            report = check::for_bless(report);
        }
        let held = hold_back(&mut report);
        (report, held)
    } else {
        checks(path, bless)
    };
    if !report.accepted() || (report.warnings() > 0 && !shown) {
        say_report(&report, color, program);
    }
    (report, held)
}

/// The `error-without-example` warnings moved out of an accepted `report`, for the trials to
/// answer: the run prints what it held back after them, answered or not.
pub fn hold_back(report: &mut Report) -> Report {
    if report.accepted() {
        report.split_off(|d| d.check == WITHOUT_EXAMPLE)
    } else {
        report.split_off(|_| false)
    }
}

/// The held-back warnings after the run: a code that `reached` names (a fault trial that passed
/// reached it, or explore did) is proven (a note), one it does not name keeps its warning, its
/// hint naming `program`'s `explain`.
pub fn say_deferred(
    mut deferred: Report,
    reached: &BTreeMap<String, String>,
    color: bool,
    program: &str,
) {
    deferred.diagnostics.retain(|d| {
        let covered = code_of(&d.message).and_then(|c| reached.get(c).map(|by| (c, by)));
        if let Some((code, by)) = covered {
            say(Event::Note(format!(
                "declared error `{code}` has no example, and needs none to be tested: {by} reached it, so the tests prove the agent raises it"
            )));
        }
        covered.is_none()
    });
    if deferred.diagnostics.is_empty() {
        return;
    }
    say_report(&deferred, color, program);
}

/// The checks' `report` as `check` prints it, and under GitHub Actions as annotations too.
fn say_report(report: &Report, color: bool, program: &str) {
    say(Event::Text(check::render::human(report, color, program)));
    if crate::github::enabled() {
        say(Event::Output(crate::github::render_check(report, program)));
    }
}

/// The code an `error-without-example` warning names (between its first backticks).
fn code_of(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once('`')?;
    rest.split_once('`').map(|(code, _)| code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_of_a_warning_is_between_its_first_backticks() {
        assert_eq!(
            code_of("declared error `upstream_unavailable` has no example"),
            Some("upstream_unavailable")
        );
        assert_eq!(code_of("no code"), None);
    }
}
