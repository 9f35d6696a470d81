//! The meter a measured run's calls go through: each call of the measured pass is counted and
//! written as a receipt as it ends; after the run (or on Ctrl-C, with what ran so far) the
//! report is printed and `--min-success-rate` judged. What it prints or writes is scrubbed of
//! the run's secrets, as every other output of the run is.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::ended::CallEnd;
use super::picture::Picture;
use super::receipts::Receipts;
use super::tally::{Context, Tally, percent};
use crate::error::ReceiptsError;
use crate::reporter::{Event, Reporter};
use holon_config::TokenPrice;
use holon_core::gateway::Pass;
use holon_core::manifest::Manifest;
use holon_upstream::{Purpose, Spend, Upstreams, Waiting};

/// The meter of one run.
pub(crate) struct Meter {
    manifest: Arc<Manifest>,
    /// The pass measured.
    pass: Pass,
    /// The report's first line, less the count of calls.
    head: String,
    /// The calls planned.
    planned: usize,
    /// What `--max-calls` left out, a line each.
    left_out: Vec<String>,
    prices: Vec<(String, Option<TokenPrice>)>,
    tally: Mutex<Tally>,
    receipts: Option<Receipts>,
    /// The run's sink, whose scrub the report and the receipts go through.
    reporter: Reporter,
    /// The run's upstreams, whose ledger counts the measured calls' requests.
    upstreams: Option<Arc<Upstreams>>,
    /// Set by a signal: no call is counted from then on.
    frozen: AtomicBool,
    /// The measured calls whose receipt said a request unanswered: its late answer, once the
    /// run has waited for it, is written as a line of its own.
    late: Mutex<Vec<(String, u32, Vec<Waiting>)>>,
}

/// What a meter is made of.
pub(crate) struct Setup {
    /// The manifest measured.
    pub manifest: Arc<Manifest>,
    /// The pass measured.
    pub pass: Pass,
    /// The report's first line (`the mcp pass, live upstreams, ...`).
    pub head: String,
    /// The calls planned on the measured pass.
    pub planned: usize,
    /// What `--max-calls` left out, a line each.
    pub left_out: Vec<String>,
    /// Each upstream declared, with its price.
    pub prices: Vec<(String, Option<TokenPrice>)>,
    /// The receipts file, already created.
    pub receipts: Option<Receipts>,
    /// The run's sink, whose scrub the report and the receipts go through.
    pub reporter: Reporter,
    /// The run's upstreams, whose ledger counts the measured calls' requests.
    pub upstreams: Option<Arc<Upstreams>>,
}

impl Meter {
    /// A meter with no call counted yet.
    pub(crate) fn new(setup: Setup) -> Meter {
        Meter {
            tally: Mutex::new(Tally::new(setup.manifest.examples.len())),
            manifest: setup.manifest,
            pass: setup.pass,
            head: setup.head,
            planned: setup.planned,
            left_out: setup.left_out,
            prices: setup.prices,
            receipts: setup.receipts,
            reporter: setup.reporter,
            upstreams: setup.upstreams,
            frozen: AtomicBool::new(false),
            late: Mutex::new(Vec::new()),
        }
    }

    /// A call of example `index` on `pass` ended: counted, and its receipt written, when
    /// `pass` is the one measured.
    pub(crate) fn ended(&self, pass: Pass, index: usize, end: &CallEnd) {
        if pass != self.pass || self.frozen.load(Ordering::SeqCst) {
            return;
        }
        let name = self
            .manifest
            .examples
            .get(index)
            .map_or("", |e| e.name.as_str());
        if let Some(receipts) = &self.receipts {
            receipts.write(&self.manifest, (pass, name), end, &self.reporter);
            if !end.late.is_empty()
                && let Ok(mut late) = self.late.lock()
            {
                late.push((name.to_string(), end.run, end.late.clone()));
            }
        }
        if let Ok(mut tally) = self.tally.lock() {
            tally.add(&self.manifest, index, end);
        }
    }

    /// Once the run has waited for the answers its agent gave up on: a receipt line for each
    /// measured call some of whose requests were answered late.
    pub(crate) fn late_receipts(&self) {
        let (Some(receipts), Ok(mut late)) = (&self.receipts, self.late.lock()) else {
            return;
        };
        for (name, run, waiting) in std::mem::take(&mut *late) {
            let answered: Vec<_> = waiting.iter().filter_map(Waiting::answered).collect();
            if !answered.is_empty() {
                receipts.write_late(&self.manifest, (self.pass, &name, run), &answered);
            }
        }
    }

    fn context<'a>(&'a self, spend: Option<&'a BTreeMap<String, Spend>>) -> Context<'a> {
        Context {
            manifest: &self.manifest,
            prices: &self.prices,
            spend,
            purpose: Purpose::Examples(self.pass),
        }
    }

    /// The report of the calls counted.
    pub(crate) fn report(&self) -> String {
        let Ok(tally) = self.tally.lock() else {
            return String::new();
        };
        let head = if tally.calls() < self.planned {
            format!(
                "{}; {} of the {} calls planned ended",
                self.head,
                tally.calls(),
                self.planned
            )
        } else {
            self.head.clone()
        };
        let spend = self.upstreams.as_ref().map(|u| u.spend(false));
        let mut report = tally.report(&self.context(spend.as_ref()), &head);
        for line in &self.left_out {
            report.push_str(&format!("measure: not run (`--max-calls`): {line}\n"));
        }
        report
    }

    /// What the report page draws of the calls counted, with the report's lines.
    pub(crate) fn picture(&self) -> Option<Picture> {
        let lines = self.reporter.clean(&self.report()).into_owned();
        let tally = self.tally.lock().ok()?;
        let spend = self.upstreams.as_ref().map(|u| u.spend(false));
        let mut picture = tally.picture(&self.context(spend.as_ref()), lines);
        for row in std::iter::once(&mut picture.total).chain(&mut picture.examples) {
            for (what, _, _) in &mut row.statuses {
                *what = self.reporter.clean(what).into_owned();
            }
        }
        Some(picture)
    }

    /// A signal is ending the run: nothing more is counted or written (a receipt being
    /// written is finished first), and the report of what ran is printed.
    pub(crate) fn interrupted(&self) {
        self.frozen.store(true, Ordering::SeqCst);
        if let Some(receipts) = &self.receipts {
            receipts.close();
        }
        let report = (self.report()).replacen("measure: ", "measure (interrupted): ", 1);
        self.reporter.emit(Event::Text(format!("\n{report}")));
    }

    /// After the run: the report, then the verdicts of `gates` (`--min-success-rate`,
    /// `--min-strict-success-rate`), and when the first passes in a run whose `failed` trials
    /// fail it all the same, why; the exit code they ask for.
    pub(crate) fn conclude(&self, gates: (Option<f64>, Option<f64>), failed: usize) -> u8 {
        let say = |event| self.reporter.emit(event);
        say(Event::Text(format!("\n{}", self.report())));
        let mut code = crate::exit::OK;
        if let Some(min) = gates.0 {
            match self.below(min) {
                Some(why) => {
                    say(Event::Error(why));
                    code = crate::exit::FAILED;
                }
                None if failed > 0 => say(Event::Note(format!(
                    "the measured success rate meets `--min-success-rate {min}`, and the run fails all the same: {failed} trial{} failed (under `failures:` above). The rate leaves declared failures out, and the gate forgives the calls it counts; a call that ends in a declared failure its example does not show fails its trial, a retryable code included",
                    if failed == 1 { "" } else { "s" }
                ))),
                None => {}
            }
        }
        if let Some(min) = gates.1
            && let Some(why) = self.below_strict(min)
        {
            say(Event::Error(why));
            code = crate::exit::FAILED;
        }
        code
    }

    /// `--min-success-rate`'s verdict: `None` when the measured rate is at least `min`, else
    /// why not, naming the examples that pulled it down.
    pub(crate) fn below(&self, min: f64) -> Option<String> {
        let tally = self.tally.lock().ok()?;
        let (rate, low) = tally.below(&self.context(None), min);
        let wanted = format!("`--min-success-rate {min}` ({})", percent(min));
        match rate {
            Some(rate) if rate >= min => None,
            Some(rate) => {
                let mut why = format!(
                    "the measured success rate {} is below {wanted}",
                    percent(rate)
                );
                if !low.is_empty() {
                    why.push_str(&format!(
                        "; the examples that pulled it down: {}",
                        low.join(", ")
                    ));
                }
                Some(why)
            }
            None => Some(format!(
                "{wanted}: no call counted toward the success rate (each ended in a declared failure, or was not judged), so it was not measured"
            )),
        }
    }

    /// `--min-strict-success-rate`'s verdict: `None` when the strict rate (declared failures
    /// that come and go for one input counted as failures) is at least `min`, or is the
    /// gateway's rate (nothing comes and goes) and that is; else why not.
    pub(crate) fn below_strict(&self, min: f64) -> Option<String> {
        let tally = self.tally.lock().ok()?;
        let wanted = format!("`--min-strict-success-rate {min}` ({})", percent(min));
        let (rate, _) = tally.below(&self.context(None), min);
        let strict = tally.strict_rate(&self.context(None)).or(rate);
        match strict {
            Some(rate) if rate >= min => None,
            Some(rate) => Some(format!(
                "the strict success rate {} (the declared failures that come and go for one input counted as failures) is below {wanted}",
                percent(rate)
            )),
            None => Some(format!(
                "{wanted}: no call counted toward the success rate (each ended in a declared failure, or was not judged), so it was not measured"
            )),
        }
    }

    /// The first receipt that could not be written, if one could not.
    pub(crate) fn receipts_failure(&self) -> Option<ReceiptsError> {
        self.receipts.as_ref().and_then(Receipts::failure)
    }
}
