//! The explorer of one run: the plan drawn once and shared by both trials, each case's answer
//! settled as the gateway would, the first defect shrunk and reported.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::error::ExploreError;
use crate::plan::{Origin, Plan, plan};
use crate::settings::Settings;
use crate::{judge, report, shrink};
use holon_core::gateway::{Answer, Pass, Reply, Status, Trouble};
use holon_core::manifest::Manifest;

/// A way to call the agent: one input in, what came back out.
pub type Call = Box<dyn Fn(&Value) -> Reply + Send + Sync>;

/// A way to call the agent with several inputs in flight at once: the replies, in the inputs'
/// order. A call that got no answer in time among others has been tried again alone.
pub type Batch = Box<dyn Fn(&[Value]) -> Vec<Reply> + Send + Sync>;

/// What the explore trials of one run share: the plan, drawn once, and the function's answers,
/// which the differential of `explore::mcp` reuses instead of calling the function again.
pub struct Explorer {
    manifest: Arc<Manifest>,
    settings: Arc<Settings>,
    plan: OnceLock<Result<Plan, ExploreError>>,
    answers: Mutex<HashMap<String, Answer>>,
    /// The declared codes the cases reached, each with the first trial and case that did.
    reached: Mutex<BTreeMap<String, String>>,
    /// What each trial's cases reached, as it ended.
    explored: Mutex<Vec<Explored>>,
}

/// What one explore trial's cases reached, for a report to draw: the statuses by code, and the
/// line the trial printed of them.
#[derive(Debug, Clone)]
pub struct Explored {
    /// The trial (`explore::mcp`).
    pub trial: String,
    /// Cases sent.
    pub cases: usize,
    /// Of which edge cases.
    pub edges: usize,
    /// The statuses the cases ended in, by code.
    pub statuses: BTreeMap<String, usize>,
    /// The trial's line: the cases, what they reached, the codes none reached.
    pub line: String,
}

impl Explorer {
    /// The explorer of one run.
    pub fn new(manifest: Arc<Manifest>, settings: Arc<Settings>) -> Arc<Explorer> {
        Arc::new(Explorer {
            manifest,
            settings,
            plan: OnceLock::new(),
            answers: Mutex::new(HashMap::new()),
            reached: Mutex::new(BTreeMap::new()),
            explored: Mutex::new(Vec::new()),
        })
    }

    /// What each trial that ended reached, in the order they ended.
    pub fn explored(&self) -> Vec<Explored> {
        self.explored.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// The line of the trial `trial`, once it ended: the cases, what they reached, the codes
    /// none reached (the harness says it).
    pub fn line_of(&self, trial: &str) -> Option<String> {
        let explored = self.explored.lock().ok()?;
        explored
            .iter()
            .rev()
            .find(|e| e.trial == trial)
            .map(|e| e.line.clone())
    }

    /// Keeps a trial's line, and what it reached.
    fn said(&self, trial: &str, tally: &report::Tally, plan: &Plan) {
        let line = tally.line(trial, &self.manifest, plan.refused);
        let line = match &self.settings.partition {
            Some(partition) => format!(
                "{line} (this shard's {} of the run's {} cases, `--partition {}`)",
                plan.cases.len(),
                plan.drawn,
                partition.name()
            ),
            None => line,
        };
        if let Ok(mut explored) = self.explored.lock() {
            explored.push(Explored {
                trial: trial.to_string(),
                cases: tally.cases,
                edges: tally.edges,
                statuses: tally.statuses.clone(),
                line,
            });
        }
    }

    /// The declared codes the cases of either trial reached, each with the first trial and
    /// case that did (`` `explore::mcp` (its case 12) ``): the agent raises each, as the tests
    /// show. A case not judged (an upstream request with no recording) reached nothing.
    pub fn reached(&self) -> BTreeMap<String, String> {
        self.reached.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// One answer settled as the gateway would. The function's answers are kept; the
    /// server's, when there is a `reference`, are compared with the function's for the same
    /// input (kept from `explore::function`, or asked of the reference now).
    fn settle(
        &self,
        pass: Pass,
        reference: Option<&Call>,
        input: &Value,
        got: Answer,
    ) -> judge::Outcome {
        let mut outcome = judge::settle(self.manifest.gateway(), &got);
        match (pass, reference) {
            (Pass::Function, _) => {
                if let Ok(mut answers) = self.answers.lock() {
                    answers.insert(input.to_string(), got);
                }
            }
            (Pass::Mcp, Some(reference)) if outcome.defect.is_none() => {
                let kept = self
                    .answers
                    .lock()
                    .ok()
                    .and_then(|a| a.get(&input.to_string()).cloned());
                let expected = kept.or_else(|| reference(input).ok());
                if let Some(expected) = expected
                    && let Some(difference) = judge::differ(&expected, &got)
                {
                    outcome.defect = Some(difference);
                }
            }
            (Pass::Mcp, _) => {}
        }
        outcome
    }

    /// The trial named `name` on `pass`: the plan's cases through `call`, or, when given,
    /// `batch` inputs at a time through `batch` (the shrinking still goes one at a time). On the
    /// MCP pass, a `reference` (the function) makes each answer the server gives a defect
    /// unless it equals the function's for the same input.
    pub fn run(
        &self,
        name: &str,
        pass: Pass,
        call: &Call,
        batch: Option<&(Batch, usize)>,
        reference: Option<&Call>,
    ) -> Result<(), ExploreError> {
        let manifest = &*self.manifest;
        let (gateway, settings) = (manifest.gateway(), &*self.settings);
        let plan = self
            .plan
            .get_or_init(|| plan(manifest, gateway, settings))
            .as_ref()
            .map_err(Clone::clone)?;
        let settle = |input: &Value, got| self.settle(pass, reference, input, got);
        // Shrinking keeps only inputs whose every upstream request was recorded.
        let check = |input: &Value| call(input).ok().map(|answer| settle(input, answer));
        let mut tally = report::Tally::default();
        let mut found = None;
        // The size of the defect's batch when none of its calls got an answer in time, alone or
        // among others; 0 otherwise.
        let mut silent = 0;
        // The cases go out `size` at a time; each batch is judged in plan order, so the first
        // defect found is the first in the plan, whatever the concurrency.
        let size = batch.map_or(1, |(_, n)| (*n).max(1));
        'cases: for chunk in plan.cases.chunks(size) {
            let gots = match batch {
                Some((send, _)) if chunk.len() > 1 => {
                    send(&chunk.iter().map(|c| c.input.clone()).collect::<Vec<_>>())
                }
                _ => chunk.iter().map(|c| call(&c.input)).collect(),
            };
            let unanswered =
                |r: &Reply| matches!(r, Ok(Answer::HungAlone(_) | Answer::HungNotRetried(_)));
            silent = if gots.len() > 1 && gots.iter().all(unanswered) {
                gots.len()
            } else {
                0
            };
            for (case, got) in chunk.iter().zip(gots) {
                tally.cases += 1;
                let got = match got {
                    Ok(answer) => answer,
                    Err(Trouble::Unrecorded(_)) => {
                        tally.unrecorded += 1;
                        continue;
                    }
                    Err(trouble @ Trouble::Upstream(_)) => {
                        self.said(name, &tally, plan);
                        return Err(ExploreError::Upstream(trouble));
                    }
                };
                let outcome = settle(&case.input, got);
                if let Status::Declared(code) = &outcome.status
                    && let Ok(mut reached) = self.reached.lock()
                {
                    reached
                        .entry(code.clone())
                        .or_insert_with(|| format!("`{name}` (its case {})", tally.cases));
                }
                if matches!(case.origin, Origin::Edge(_)) {
                    tally.edges += 1;
                }
                *tally
                    .statuses
                    .entry(outcome.status.code().to_string())
                    .or_default() += 1;
                if outcome.defect.is_some() {
                    found = Some((case, outcome));
                    break 'cases;
                }
            }
        }
        self.said(name, &tally, plan);
        let Some((case, outcome)) = found else {
            return match tally.only_failures(manifest) {
                Some(reached) => Err(ExploreError::OnlyFailures {
                    reached,
                    command: self.settings.command.clone(),
                }),
                None => Ok(()),
            };
        };
        // A server that answered none of the calls in flight, and none tried alone, does not
        // fail on this input: each smaller one would only wait `timeout_s` again.
        let shrunk = if silent > 0 {
            shrink::Shrunk {
                input: case.input.clone(),
                outcome,
                steps: 0,
                cut_short: Some(format!(
                    "none of the {silent} calls in flight with it got an answer in time, nor one tried alone: the server does not answer, whatever the input"
                )),
            }
        } else {
            shrink::shrink(
                case.input.clone(),
                outcome,
                // A candidate is one the gate admits and `check` takes: a handle still names
                // a file of `files/` (`holon://files/blob.bin` halved is no file at all).
                |v| gateway.admit(v).is_ok() && plan.names_files(v),
                check,
            )
        };
        Err(ExploreError::Found(
            report::Failure {
                trial: name,
                case,
                total: plan.drawn,
                shrunk: &shrunk,
                seed: settings.seed,
                seed_from_manifest: settings.seed_from_manifest,
                replay: settings.replay.replace("{trial}", name),
            }
            .render(),
        ))
    }
}
