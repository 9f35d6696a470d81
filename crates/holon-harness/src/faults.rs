//! The fault trials, `faults::function::<example>` and `faults::mcp::<example>`: every success
//! example replayed with one recorded upstream exchange at a time replaced by each
//! [`Fault`], on both passes. A call under a fault must end as a paying caller can live with:
//! a declared code, or the example's own output (the agent retried, and the retry got the
//! recorded answer). Anything else fails the trial, one report per fault, each with the command
//! that replays exactly that fault (`HOLON_FAULT=<exchange>:<fault>`).
//!
//! The calls go out ahead of the trials (`planted`), all of a pass's together.
//!
//! After the run, one coverage line per pass: the examples, the faults played, the codes they
//! reached, which the run's checks take as proven (`checks`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use libtest_mimic::Trial;

use crate::context::Run;
use crate::error::FaultsFailed;
use crate::pass::{Caller, Planted};
use crate::planted::FaultFlight;
use crate::reporter::{Event, Reporter};
use holon_core::gateway::{Answer, Gateway, Pass, Status};
use holon_core::json::equal as json_eq;
use holon_core::manifest::{Example, Expect, Manifest};
use holon_upstream::fault::{Fault, Faulted, ONE_VAR, Only, Plant};
use holon_upstream::{Mode, Request, Scope};

/// What one pass's fault trials reached.
#[derive(Default)]
struct Tally {
    examples: usize,
    faults: usize,
    failed: usize,
    /// Statuses reached, by code.
    reached: BTreeMap<String, usize>,
    /// The examples with no recorded exchange.
    without: Vec<String>,
    /// The examples whose requests are not the recorded ones any more.
    waiting: Vec<String>,
    /// Faults that ended in a code marked `retryable: false`.
    warnings: Vec<String>,
    /// Declared codes reached by trials that passed, with the first trial and fault that
    /// reached each.
    codes: BTreeMap<String, String>,
}

/// The fault trials of a run, and what they reached.
pub struct Faults {
    manifest: Arc<Manifest>,
    /// The command that runs these tests (`cargo holon-test`, or the `--server-cmd` line).
    command: String,
    only: Option<Only>,
    tallies: Mutex<BTreeMap<Pass, Tally>>,
    /// Where each pass's coverage line goes.
    reporter: Reporter,
}

impl Faults {
    /// Whether `run` has fault trials: they are on, and what the upstreams answer is replayed
    /// from the recordings, where a fault can be planted.
    pub(crate) fn run_in(run: &Run) -> bool {
        run.settings.faults && (run.upstreams.as_ref()).is_some_and(|u| u.mode() == Mode::Replay)
    }

    /// The fault trials of `run` on each of `passes`, pushed onto `trials`; `None` when they
    /// do not run (turned off, no recorded upstream, or not replaying).
    pub(crate) fn trials(
        run: &Run,
        passes: &[Arc<dyn Caller>],
        command: String,
        runs: impl Fn(&str) -> bool,
        trials: &mut Vec<Trial>,
    ) -> Option<Arc<Faults>> {
        let upstreams = run.upstreams.as_ref().filter(|_| Faults::run_in(run))?;
        let faults = Arc::new(Faults {
            reporter: run.reporter.clone(),
            manifest: run.manifest.clone(),
            command,
            only: run.settings.fault,
            tallies: Mutex::new(BTreeMap::new()),
        });
        // Each trial that will run has its calls in its pass's flight, from `start`; one
        // that libtest would not run (there is none) gets a flight of its own if it runs.
        let mut planned: BTreeMap<Pass, Vec<Planted>> = BTreeMap::new();
        let mut plan = Vec::new();
        for (index, example) in run.manifest.examples.iter().enumerate() {
            let Expect::Output(_) = &example.expect else {
                continue;
            };
            // Another shard's (`--partition`): an example's fault trials go with its first call.
            if !run.plan.takes(index, 1, 1) {
                continue;
            }
            let exchanges = upstreams.exchanges_of(&example.name).unwrap_or_default();
            for target in passes {
                let pass = target.pass();
                let name = format!("faults::{}::{}", pass.name(), example.name);
                if exchanges.is_empty() {
                    if runs(&name) {
                        faults.tally(pass, |t| t.without.push(example.name.clone()));
                    }
                    continue;
                }
                let calls = faults.calls(example, &exchanges);
                let start = runs(&name).then(|| {
                    let list = planned.entry(pass).or_default();
                    list.extend(calls.iter().cloned());
                    list.len() - calls.len()
                });
                plan.push((
                    target.clone(),
                    example.clone(),
                    exchanges.clone(),
                    calls,
                    start,
                    name,
                ));
            }
        }
        let flights: BTreeMap<Pass, Arc<FaultFlight>> = (passes.iter())
            .filter_map(|target| {
                let calls = planned.remove(&target.pass())?;
                Some((target.pass(), FaultFlight::new(target.clone(), calls)))
            })
            .collect();
        for (target, example, exchanges, calls, start, name) in plan {
            let pass = target.pass();
            let (flight, start) = match (start, flights.get(&pass)) {
                (Some(start), Some(flight)) => (flight.clone(), start),
                _ => (FaultFlight::new(target, calls), 0),
            };
            let faults = faults.clone();
            trials.push(crate::record::trial(&run.records, name, move || {
                faults
                    .trial(pass, &flight, start, &example, &exchanges)
                    .map_err(crate::record::Fault::from)
            }));
        }
        Some(faults)
    }

    /// The cases of one example's fault trial, in the order it plays them: each exchange under
    /// each fault (`HOLON_FAULT` keeps one).
    fn cases(&self, exchanges: &[(String, Request, usize)]) -> Vec<(usize, Fault)> {
        (0..exchanges.len())
            .flat_map(|k| Fault::ALL.into_iter().map(move |fault| (k, fault)))
            .filter(|(k, fault)| {
                self.only
                    .is_none_or(|o| o.exchange == k + 1 && o.fault == *fault)
            })
            .collect()
    }

    /// The calls of one example's fault trial, in the order of [`Faults::cases`].
    fn calls(&self, example: &Example, exchanges: &[(String, Request, usize)]) -> Vec<Planted> {
        (self.cases(exchanges).into_iter())
            .filter_map(|(k, fault)| {
                let (upstream, request, occurrence) = exchanges.get(k)?;
                Some(Planted {
                    input: example.input.clone(),
                    scope: Scope::Example(example.name.clone()),
                    plant: Plant {
                        upstream: upstream.clone(),
                        request: request.clone(),
                        occurrence: *occurrence,
                        fault,
                    },
                })
            })
            .collect()
    }

    fn tally(&self, pass: Pass, update: impl FnOnce(&mut Tally)) {
        if let Ok(mut tallies) = self.tallies.lock() {
            update(tallies.entry(pass).or_default());
        }
    }

    /// One example on one pass: each exchange under each fault, the calls' ends taken from
    /// `flight` from `start` on.
    fn trial(
        &self,
        pass: Pass,
        flight: &Arc<FaultFlight>,
        start: usize,
        example: &Example,
        exchanges: &[(String, Request, usize)],
    ) -> Result<(), FaultsFailed> {
        let gateway = self.manifest.gateway();
        let trial = format!("faults::{}::{}", pass.name(), example.name);
        let mut reports = Vec::new();
        let mut played = 0;
        // The declared codes this trial reached: they count for the notes only if it passes.
        let mut codes: BTreeMap<String, String> = BTreeMap::new();
        // An exchange whose planted request the call never made: every other fault of it is
        // planted on the same request, and one report says it.
        let mut never_made: Option<usize> = None;
        // The success each failed fault ended in, while every one ended in the same: the
        // agent's answer without a fault, at odds with the example.
        let mut one_success: Option<Option<serde_json::Value>> = None;
        for (j, (k, fault)) in self.cases(exchanges).into_iter().enumerate() {
            let Some((upstream, request, _)) = exchanges.get(k) else {
                continue;
            };
            let faulted = flight.take(start + j);
            if never_made == Some(k) {
                continue;
            }
            if !faulted.played && !faulted.misses.is_empty() {
                // A stale recording, one cause: the example's own trial reports it.
                self.tally(pass, |t| {
                    t.examples += 1;
                    t.waiting.push(example.name.clone());
                });
                return Err(FaultsFailed::Unrecorded {
                    example: example.name.clone(),
                    trial: format!("{}::{}", pass.name(), example.name),
                });
            }
            played += 1;
            let case = Case {
                trial: &trial,
                exchange: k + 1,
                of: exchanges.len(),
                upstream,
                request,
                fault,
            };
            let verdict = judge(gateway, example, &faulted);
            let status = faulted.answer.status(gateway);
            if let Status::Declared(code) = &status {
                codes
                    .entry(code.clone())
                    .or_insert_with(|| format!("`{trial}` under {}", fault.name()));
            }
            self.tally(pass, |t| {
                t.faults += 1;
                *t.reached.entry(status.code().to_string()).or_default() += 1;
                match &verdict {
                    Verdict::Fine => {}
                    Verdict::NotRetryable(code) => t.warnings.push(format!(
                        "warning: `{trial}`: under {} ({}), the agent answered `{code}`, which `interface.errors` marks `retryable: false`: a caller will not try again a call that a retry could save; answer a code marked `retryable: true` for an upstream's failure",
                        fault.describe(),
                        case.exchange_line()
                    )),
                    Verdict::Fails(_) => t.failed += 1,
                }
            });
            if matches!(&verdict, Verdict::Fails(_)) && !faulted.played {
                never_made = Some(k);
            }
            if matches!(&verdict, Verdict::Fails(_)) {
                let success = match (&status, &faulted.answer) {
                    (Status::Success, Answer::Output(output)) => Some(output.clone()),
                    _ => None,
                };
                one_success = match one_success {
                    None => Some(success),
                    Some(Some(seen)) if success.as_ref().is_some_and(|s| json_eq(s, &seen)) => {
                        Some(Some(seen))
                    }
                    Some(_) => Some(None),
                };
            }
            if let Verdict::Fails(why) = verdict {
                reports.push(case.report(&why, &faulted, gateway, &self.command));
            }
        }
        let passed = reports.is_empty();
        self.tally(pass, |t| {
            t.examples += 1;
            if passed {
                for (code, by) in codes {
                    t.codes.entry(code).or_insert(by);
                }
            }
        });
        if passed {
            return Ok(());
        }
        if let (Some(Some(output)), Expect::Output(expected)) = (&one_success, &example.expect)
            && let Some(first) = crate::compare::differences(expected, output).first()
        {
            return Err(FaultsFailed::TheExample {
                what: format!("it differs at {} ({})", first.place(), first.kind.words()),
                trial: format!("{}::{}", pass.name(), example.name),
            });
        }
        Err(FaultsFailed::Faults { reports, played })
    }

    /// After the run: each pass's coverage line and its warnings; the declared codes the trials
    /// that passed reached, each with the first trial and fault that reached it (what the run's
    /// held-back `error-without-example` warnings are answered with).
    pub fn conclude(&self) -> BTreeMap<String, String> {
        let mut reached: BTreeMap<String, String> = BTreeMap::new();
        let Ok(tallies) = self.tallies.lock() else {
            return reached;
        };
        for (pass, tally) in tallies.iter() {
            self.reporter.emit(Event::Line(tally.line(pass.name())));
            (self.reporter).emit_all(tally.warnings.iter().cloned().map(Event::Line));
            for (code, by) in &tally.codes {
                reached.entry(code.clone()).or_insert_with(|| by.clone());
            }
        }
        reached
    }
}

impl Tally {
    fn line(&self, pass: &str) -> String {
        let mut line = format!(
            "faults::{pass}: {} example{}, {} fault{}",
            self.examples,
            if self.examples == 1 { "" } else { "s" },
            self.faults,
            if self.faults == 1 { "" } else { "s" },
        );
        if !self.reached.is_empty() {
            let reached: Vec<String> = (self.reached.iter())
                .map(|(code, n)| format!("{code} {n}"))
                .collect();
            line.push_str(&format!("; reached {}", reached.join(", ")));
        }
        if self.failed > 0 {
            line.push_str(&format!("; {} failed", self.failed));
        }
        if !self.without.is_empty() {
            let names: Vec<String> = self.without.iter().map(|n| format!("`{n}`")).collect();
            line.push_str(&format!(
                "; no fault trial for {}: no upstream exchange is recorded",
                names.join(", ")
            ));
        }
        if !self.waiting.is_empty() {
            let names: Vec<String> = self.waiting.iter().map(|n| format!("`{n}`")).collect();
            line.push_str(&format!(
                "; {} wait{} for a recording",
                names.join(", "),
                if self.waiting.len() == 1 { "s" } else { "" }
            ));
        }
        line
    }
}

/// What a call under a fault came to.
enum Verdict {
    Fine,
    /// A declared code marked `retryable: false`.
    NotRetryable(String),
    Fails(String),
}

fn judge(gateway: &Gateway, example: &Example, faulted: &Faulted) -> Verdict {
    if let Answer::Unreachable(_) = &faulted.answer {
        return Verdict::Fails("the call could not be made, so the fault was not played".into());
    }
    if !faulted.played {
        return Verdict::Fails(
            "the call never made the request the fault was planted on: the agent's requests differ from its recording (does the example trial pass?)".into(),
        );
    }
    let status = faulted.answer.status(gateway);
    match (&status, &faulted.answer, &example.expect) {
        (Status::Declared(code), _, _) => match gateway.declared(code) {
            Some(decl) if !decl.retryable => Verdict::NotRetryable(code.clone()),
            _ => Verdict::Fine,
        },
        (Status::Success, Answer::Output(actual), Expect::Output(expected)) => {
            if json_eq(actual, expected) {
                Verdict::Fine
            } else {
                Verdict::Fails(format!(
                    "a success that is not the example's output: the agent answered from a broken upstream answer, and a caller pays for it\n{}",
                    crate::compare::diff(expected, actual)
                ))
            }
        }
        _ => Verdict::Fails(
            "neither a declared code nor the example's output: the caller gets a failure the manifest never promised".into(),
        ),
    }
}

/// One fault trial's case: which exchange, which fault.
struct Case<'a> {
    trial: &'a str,
    exchange: usize,
    of: usize,
    upstream: &'a str,
    request: &'a Request,
    fault: Fault,
}

impl Case<'_> {
    fn exchange_line(&self) -> String {
        format!(
            "exchange {} of {}: upstream `{}`, {} {}",
            self.exchange, self.of, self.upstream, self.request.method, self.request.path
        )
    }

    fn report(&self, why: &str, faulted: &Faulted, gateway: &Gateway, command: &str) -> String {
        let mut out = format!(
            "fault {}: {}\n  {}\n  the agent answered: {}\n  gateway status: {}\n  {why}",
            self.fault.name(),
            self.fault.describe(),
            self.exchange_line(),
            faulted.answer.describe(gateway),
            faulted.answer.status(gateway)
        );
        for miss in &faulted.misses {
            out.push_str(&format!(
                "\n  (under the fault the call also made a request no recording answers: {})",
                miss.lines().next().unwrap_or("")
            ));
        }
        out.push_str(&format!(
            "\n  replay: {ONE_VAR}={}:{} {command} -- --exact {}",
            self.exchange,
            self.fault.name(),
            crate::settings::shell_quote(self.trial)
        ));
        out
    }
}
