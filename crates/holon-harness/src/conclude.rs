//! After the trials: the server stopped, what the run has to say (the server's output when a
//! trial failed, the notes, the shared causes), the annotations, `--bless`, the measurement and
//! its gates, the spend, the recordings, the `--report` page and the JUnit report, and the exit
//! code they make.

use std::sync::Arc;

use libtest_mimic::Arguments;

use crate::context::Run;
use crate::error::RunError;
use crate::pass::Caller;
use crate::reporter::Event;
use crate::trials::use_color;
use crate::{Harness, Mcp, exit, github, junit, measure, page, record};
use holon_explore::Explorer;
use holon_upstream::Mode;

impl Harness {
    /// After the trials: the server stopped (its output shown when a trial failed), the notes,
    /// the annotations, `--bless`, the JUnit report, the `--report` page, and the exit code.
    pub(crate) fn conclude(
        &self,
        run: &Run,
        args: &Arguments,
        conclusion: &libtest_mimic::Conclusion,
        passes: &[Arc<dyn Caller>],
        mcp: Option<&Mcp>,
        (started, explorer): (std::time::Instant, &Explorer),
    ) -> u8 {
        let say = |event| run.reporter.emit(event);
        if let Some(mcp) = mcp
            && let Some(said) = mcp.server.said()
        {
            let said = match mcp.one_era && mcp.server.eras_tested() > 1 {
                true => "the server speaks two eras: a measured run calls it in the newest alone, the era its calls were counted in (a run that measures nothing tests it in both)".to_string(),
                false => said,
            };
            say(Event::Paragraph(format!("mcp: {said}")));
        }
        if let Some(mcp) = &mcp
            && let Some(output) = mcp.server.stop(mcp.passes.iter().any(|p| p.hung()))
            && conclusion.has_failed()
        {
            say(Event::Paragraph(format!(
                "--- server output (last lines) ---\n{output}\n---"
            )));
        }
        let function = self.adapter.as_ref().and_then(|a| a.stop());
        if let Some(output) = function.filter(|_| conclusion.has_failed()) {
            say(Event::Paragraph(output));
        }
        for note in passes.iter().filter_map(|p| p.retry_note()) {
            say(Event::Paragraph(note));
        }
        for shared in run.records.shared() {
            say(Event::Paragraph(record::note(&shared)));
        }
        let records = run.records.take();
        if let Some(lines) = &run.lines {
            github::annotate_failures(&run.reporter, (&run.manifest, lines), &records);
        }
        let mut code = match &run.bless {
            Some(seen) => {
                let finished = holon_bless::finish(
                    &self.manifest,
                    &run.manifest,
                    seen,
                    conclusion.num_failed,
                    run.reporter.secrets(),
                );
                run.reporter
                    .emit_all(finished.said.into_iter().map(Event::Paragraph));
                match finished.outcome {
                    holon_bless::Outcome::Blessed => exit::OK,
                    holon_bless::Outcome::Left => exit::FAILED,
                }
            }
            None if conclusion.has_failed() => exit::FAILED,
            None => exit::OK,
        };
        // What an agent gave up on is still answered, and paid for: counted before the spend.
        if let Some(upstreams) = run.upstreams.as_ref().filter(|_| !args.list) {
            upstreams.settle();
            if let Some(meter) = &run.meter {
                meter.late_receipts();
            }
        }
        if let Some(meter) = run.meter.as_ref().filter(|_| !args.list) {
            let gates = (
                run.settings.min_success_rate,
                run.settings.min_strict_success_rate,
            );
            code = code.max(meter.conclude(gates, conclusion.num_failed as usize));
            if let Some(error) = meter.receipts_failure() {
                code = code.max(RunError::from(error).report(use_color(args), &self.program));
            }
        }
        if let Some(upstreams) = &run.upstreams {
            if matches!(upstreams.mode(), Mode::Live | Mode::Record) && !args.list {
                let currency = &run.manifest.pricing.currency;
                let spent = measure::run_spend(&upstreams.spend(true), &run.prices, currency);
                say(Event::Text(spent));
            }
            if upstreams.mode() == Mode::Record && run.bless.is_none() && conclusion.has_failed() {
                // The examples still say what the agent answered before: the new recordings
                // replay, offline, into them.
                say(Event::Paragraph(format!(
                    "note: the examples that failed may only differ from what the model answers now: `{}` writes the agent's answers from the new recordings into them (no key needed)",
                    self.bless_command()
                )));
            }
            let names: Vec<String> = run
                .manifest
                .examples
                .iter()
                .map(|e| e.name.clone())
                .collect();
            let (said, finished) = upstreams.finish(&names);
            run.reporter.emit_all(said.into_iter().map(Event::Line));
            if let Err(error) = finished {
                code = code.max(RunError::from(error).report(use_color(args), &self.program));
            }
        }
        if let Some(path) = run.settings.report.as_ref().filter(|_| !args.list) {
            let page = page::of_run(run, &records, explorer.explored(), conclusion, code);
            match page.write(path) {
                // Said, so that the author can open it: the path as given.
                Ok(()) => say(Event::Line(format!("report: wrote `{}`", path.display()))),
                Err(error) => {
                    code = code.max(RunError::from(error).report(use_color(args), &self.program));
                }
            }
        }
        match &run.settings.junit {
            Some(path) if !args.list => {
                match junit::write(path, &run.manifest.name, &records, started.elapsed()) {
                    Ok(()) => code,
                    Err(error) => {
                        code.max(RunError::from(error).report(use_color(args), &self.program))
                    }
                }
            }
            _ => code,
        }
    }
}
