//! What a trial asks of a pass, whichever it is: [`Caller`], which the function pass and the MCP
//! pass both implement, and the trials built on it alike for both (each example's, explore's).
//! Which pass a call goes through is named once, by `holon_core::gateway::Pass`.

use std::sync::Arc;

use libtest_mimic::Trial;
use serde_json::Value;

use crate::context::Run;
use crate::error::NoAnswer;
use crate::measure::CallEnd;
use crate::record::{self, Fault};
use crate::reporter::Event;
use crate::verdict;
use holon_core::gateway::{Answer, Gateway, Pass, Reply, Status};
use holon_core::manifest::{Example, Expect};
use holon_explore::{Batch, Call, Explorer};
use holon_upstream::fault::{Faulted, Plant};
use holon_upstream::{Mode, Scope, Upstreams};

/// One call under a planted fault: an example's input, the example, and the fault.
#[derive(Debug, Clone)]
pub(crate) struct Planted {
    /// The example's input.
    pub input: Value,
    /// The example, whose recording answers the call.
    pub scope: Scope,
    /// The fault, on one of the call's upstream requests.
    pub plant: Plant,
}

/// What a trial asks of a pass: each example's calls (made ahead of the trial), one input or
/// several at once (explore), calls under upstream faults (the fault trials), and what the
/// pass learned of the agent on the way.
pub(crate) trait Caller: Send + Sync {
    /// Which pass this is.
    fn pass(&self) -> Pass;

    /// Example `index`'s calls (one, or `--repeat`'s), made ahead of the trial, as they ended
    /// (this waits for them).
    fn ends_of(&self, index: usize) -> Result<Vec<CallEnd>, NoAnswer>;

    /// Whether an answer is judged as a paying caller would live with it rather than against
    /// the example exactly: the agent calls real upstreams, whose answers vary.
    fn live(&self) -> bool;

    /// One input, alone: what came back, its upstreams considered.
    fn one(&self, input: &Value) -> Reply;

    /// Several inputs in flight together: the replies, in the inputs' order; a call that got
    /// no answer in time among others was tried again alone.
    fn all(&self, inputs: &[Value]) -> Vec<Reply>;

    /// One input by hand (`holon-test call`), alone, entered on the upstreams in `scope`: as
    /// it ended, timed as its receipt would time it.
    fn single(&self, input: &Value, scope: Scope) -> CallEnd;

    /// Calls under planted faults, in flight together up to the concurrency (a call whose
    /// answer the proxy holds back, the `slow` fault, gives its place to the next while it
    /// waits on the agent's own patience), each one's end given to `done` with its place in
    /// `calls` as it comes.
    fn faulted_all(&self, calls: &[Planted], done: &(dyn Fn(usize, Faulted) + Sync));

    /// Why no more calls should be sent: the pass answers none of them. `None` while it
    /// answers.
    fn unanswering(&self) -> Option<String> {
        None
    }

    /// The note on calls that failed among others and were tried again alone, for the end of
    /// the run.
    fn retry_note(&self) -> Option<String>;
}

/// The `<pass>::<example>` trial of `examples[index]`: its calls judged against the example
/// (one call seen by `--bless`); ignored when `--max-calls` left it none.
pub(crate) fn example_trial(run: &Run, caller: Arc<dyn Caller>, index: usize) -> Option<Trial> {
    let example = run.manifest.examples.get(index)?;
    // Another shard's (`--partition`): not this run's trial at all.
    if !run.plan.in_shard(caller.pass(), index) {
        return None;
    }
    let name = format!("{}::{}", caller.pass().name(), example.name);
    let planned = run.plan.runs(caller.pass(), index);
    let trial = record::trial(&run.records, name, example_judged(run, caller, index));
    Some(trial.with_ignored_flag(planned == 0 && run.settings.max_calls.is_some()))
}

/// The body of an example's trial on `caller`: its calls judged against `examples[index]`,
/// one call seen by `--bless`.
pub(crate) fn example_judged(
    run: &Run,
    caller: Arc<dyn Caller>,
    index: usize,
) -> impl FnOnce() -> Result<(), Fault> + Send + 'static {
    let (manifest, bless) = (run.manifest.clone(), run.bless.clone());
    let (reporter, upstreams) = (run.reporter.clone(), run.upstreams.clone());
    let (places, bless_command) = (run.places.clone(), run.bless_command.clone());
    let blessing = run.bless.is_some();
    let pass = caller.pass();
    let planned = run.plan.runs(pass, index);
    let tolerate =
        run.settings.min_success_rate.is_some() || run.settings.min_strict_success_rate.is_some();
    move || {
        let example = (manifest.examples.get(index)).ok_or(NoAnswer::NoExample(index))?;
        let gateway = manifest.gateway();
        let ends = match caller.ends_of(index) {
            Err(why) => {
                if let Some(bless) = &bless {
                    bless.unanswered(pass, &example.name, &why.to_string());
                }
                return Err(Fault::from(why));
            }
            Ok(ends) => ends,
        };
        let hint = (upstreams.as_deref()).and_then(|u| {
            (ends.iter())
                .filter_map(|end| end.answer.as_ref().ok())
                .find_map(|got| rerecord(u, gateway, example, got))
        });
        // The trial's time is its calls', made ahead of it: the longest of them.
        if let Some(longest) = ends.iter().map(|e| e.took).max() {
            crate::record::calls_took(longest);
        }
        let live = caller.live();
        let judged = match ends.as_slice() {
            [] => Err(Fault::from(NoAnswer::NotPlanned)),
            [one] if planned <= 1 => match &one.answer {
                Err(why) => {
                    if let Some(bless) = &bless {
                        bless.unanswered(pass, &example.name, &why.to_string());
                    }
                    Err(Fault::from(why.clone()))
                }
                Ok(got) => {
                    if let Some(bless) = &bless {
                        bless.observe(pass, gateway, example, got, one.failure.as_deref());
                    }
                    let judging = verdict::Judging {
                        live,
                        pass,
                        tolerate,
                        reporter: &reporter,
                    };
                    verdict::judge_one(gateway, example, got.clone(), &judging)
                }
            },
            many => {
                let judging = verdict::Judging {
                    live,
                    pass,
                    tolerate,
                    reporter: &reporter,
                };
                verdict::judge_many(gateway, example, many, &judging)
            }
        };
        judged.map_err(|mut fault| {
            fault.message.extend(hint);
            placed(&mut fault, places.of(index), &bless_command, blessing);
            fault
        })
    }
}

/// A verdict on an example, said where the example is (`--> holon.yaml:28:5`, under the first
/// line); for an answer that is a success but not the example's, the command that writes it into
/// the example, when the agent is right (unless this run is `blessing`, and writes it).
fn placed(fault: &mut Fault, place: Option<String>, bless_command: &str, blessing: bool) {
    let Some(cause) = &fault.cause else {
        return;
    };
    if let Some(place) = place {
        let (first, rest) = fault
            .message
            .split_once('\n')
            .unwrap_or((&fault.message, ""));
        fault.message = format!("{first}\n  {place}\n{rest}");
    }
    if cause.status == Status::Success && !blessing {
        fault.message.push_str(&format!(
            "\n(if the agent is right and the example is out of date, `{bless_command}` writes the answer into it)"
        ));
    }
}

/// What to do about a replayed example that answers a code marked `retryable: true` where it
/// promises an output: its recording may hold an answer the upstream gave on a bad day, which
/// only recording that example again replaces.
fn rerecord(
    upstreams: &Upstreams,
    gateway: &Gateway,
    example: &Example,
    got: &Answer,
) -> Option<String> {
    let Status::Declared(code) = got.status(gateway) else {
        return None;
    };
    let transient = gateway.declared(&code).is_some_and(|d| d.retryable);
    if upstreams.mode() != Mode::Replay
        || !transient
        || !matches!(example.expect, Expect::Output(_))
    {
        return None;
    }
    Some(format!(
        "\n(replayed, the agent answers `{code}`, marked `retryable: true`: the recording may hold an upstream's answer on a bad day; record this example alone again: {})",
        upstreams.refresh_one(&example.name)
    ))
}

/// The `explore::<pass>` trial: the run's plan through `caller`, a batch at a time where the
/// upstreams allow it; on the MCP pass, each answer compared with `reference`'s (the
/// function's) when given.
pub(crate) fn explore_trial(
    run: &Run,
    explorer: &Arc<Explorer>,
    caller: Arc<dyn Caller>,
    reference: Option<Arc<dyn Caller>>,
) -> Trial {
    let name = format!("explore::{}", caller.pass().name());
    let batch = batch_size(run);
    let (explorer, reporter) = (explorer.clone(), run.reporter.clone());
    record::trial(&run.records, name.clone(), move || {
        if let Some(why) = caller.unanswering() {
            return Err(Fault::from(format!(
                "explore did not send its cases: {why}"
            )));
        }
        let (one, all) = (caller.clone(), caller.clone());
        let call: Call = Box::new(move |input: &Value| one.one(input));
        let batch = batch.map(|n| {
            let send: Batch = Box::new(move |inputs: &[Value]| all.all(inputs));
            (send, n)
        });
        let reference = reference.clone().map(|function| {
            let call: Call = Box::new(move |input: &Value| function.one(input));
            call
        });
        let ran = explorer.run(
            &name,
            caller.pass(),
            &call,
            batch.as_ref(),
            reference.as_ref(),
        );
        if let Some(line) = explorer.line_of(&name) {
            reporter.emit(Event::Line(line));
        }
        ran.map_err(Fault::from)
    })
}

/// How many of explore's cases may go out together: up to the concurrency, except under
/// replay, where each case's upstream requests must be its own and they go one at a time.
fn batch_size(run: &Run) -> Option<usize> {
    let replay = (run.upstreams.as_ref()).is_some_and(|u| u.mode() == Mode::Replay);
    (!replay).then_some(run.settings.concurrency.max(1))
}
