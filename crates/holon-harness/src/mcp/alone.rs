//! Calls made alone, so that a failure is laid on the input that causes it: a call that failed
//! among others (no answer in time, no connection, the server's process ended) is made again
//! with no other call of the run on the server, in either era, once the server is fit to take
//! it (started again when it died or stopped answering). A crash is the input's when its call
//! was the first of a server just started; a call that hangs alone while the server answers
//! nothing else blocks the server.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::service::ServiceError;
use serde_json::Value;

use super::server::Server;
use crate::error::NoAnswer;
use crate::flight::{Crowded, Retries};
use crate::process::Output;
use holon_core::gateway::Answer;
use holon_core::manifest::Manifest;

/// How long a server that should be idle may take to answer `tools/list`, before it counts as
/// answering nothing (a call alone blocks it).
const PING: Duration = Duration::from_secs(2);

/// After this many calls made alone in a row each ended a server just started, the server dies
/// whatever the input: the others are not made again.
const DEAD_ALONE: usize = 3;

/// How a call went, as [`retry_of`] reads it: its answer (none when there is nothing to
/// judge), why the crowd may be the cause of a failure, and whether it was the first call of
/// its process.
#[derive(Clone, Copy)]
pub(crate) struct Went<'a> {
    pub(crate) answer: Option<&'a Answer>,
    pub(crate) crowded: Option<Crowded>,
    pub(crate) first: bool,
}

/// A call made again alone, as it went: its answer to judge (or why there is none), why the
/// crowd may be the cause of a failure, and whether it was the first call of its process.
pub(crate) struct Tried {
    pub(crate) answer: Result<Answer, NoAnswer>,
    pub(crate) crowded: Option<Crowded>,
    pub(crate) first: bool,
}

/// A call to make again alone once the calls in flight are done: why it failed among them, and
/// when it ended the server while it was the only call (but not the first of that server), what
/// was said of that crash.
#[derive(Clone)]
pub(crate) struct Retry {
    pub(crate) why: Crowded,
    pub(crate) ended_alone: Option<String>,
}

/// Whether a call that went as `sent` is made again alone once the calls in flight are
/// done (`among` others, or not): one that failed among others in a way the crowd may
/// cause, and one that ended the server while it was its only call but not its first (so
/// that alone, first on a server started again, it shows whether the crash is its own).
pub(crate) fn retry_of(sent: Went<'_>, among: bool, retry: bool) -> Option<Retry> {
    if !retry {
        return None;
    }
    match (sent.answer, sent.crowded) {
        (_, Some(why)) if among => Some(Retry {
            why,
            ended_alone: None,
        }),
        (Some(Answer::Crashed(what)), _) if !sent.first => Some(Retry {
            why: Crowded::Died,
            ended_alone: Some(what.clone()),
        }),
        _ => None,
    }
}

/// What the calls made alone of one era's pass learned of the server, and the note they end
/// the run with.
pub(crate) struct Alone {
    manifest: Arc<Manifest>,
    server: Arc<Server>,
    /// Which of the eras the server is tested in (0: the newest).
    slot: usize,
    retries: Retries,
    /// A call tried alone got no answer in time while the server answered: it does not answer
    /// calls.
    silent: AtomicBool,
    /// The server answered no `tools/list` after a call alone hung: it is started again before
    /// the next call made alone.
    stalled: AtomicBool,
    /// Calls made alone in a row that each ended a server just started.
    dead_alone: AtomicUsize,
}

impl Alone {
    /// Nothing learned yet of the server in the era of `slot`.
    pub(crate) fn new(manifest: Arc<Manifest>, server: Arc<Server>, slot: usize) -> Alone {
        Alone {
            manifest,
            server,
            slot,
            retries: Retries::default(),
            silent: AtomicBool::new(false),
            stalled: AtomicBool::new(false),
            dead_alone: AtomicUsize::new(0),
        }
    }

    /// Whether a call tried alone got no answer in time while the server still answered.
    pub(crate) fn silent(&self) -> bool {
        self.silent.load(Ordering::SeqCst)
    }

    /// The note on calls made again alone, for the end of the run.
    pub(crate) fn note(&self, who: &str, concurrency: usize) -> Option<String> {
        self.retries.note(who, concurrency)
    }

    /// A call that failed among others (`retry.why`), or ended the server alone
    /// (`retry.ended_alone`), made again alone, one at a time across the run, on a server fit
    /// to take it ([`Alone::unfit`]) and settled as a call alone is ([`Alone::settled`]). Once
    /// a call tried alone got no answer in time while the server still answered, the server
    /// has shown that it does not answer calls: a call that timed out among others is then
    /// reported as it failed, rather than waiting `timeout_s` again (a server that hangs on
    /// every call would otherwise cost that for each call in turn).
    pub(crate) async fn again(
        &self,
        retry: Retry,
        attempt: &impl AsyncFn() -> Tried,
    ) -> Result<Answer, NoAnswer> {
        let _alone = self.server.alone().await;
        if retry.why == Crowded::TimedOut && self.silent.load(Ordering::SeqCst) {
            self.retries.not_retried();
            return Ok(Answer::HungNotRetried(
                self.manifest.runtime.limits.timeout_s,
            ));
        }
        if let Some(answer) = self.unfit(Some(retry.why)).await {
            self.retries.not_retried_for(retry.why);
            return Ok(answer);
        }
        let tried = attempt().await;
        self.retries.record(retry.why, tried.crowded.is_none());
        let settled = self.settled(tried, retry.ended_alone, attempt).await;
        if let Ok(Answer::Blocked(_)) = &settled {
            self.retries.blocked();
        }
        settled
    }

    /// Why a call alone is not made, when the server is not fit to take it: a server that died
    /// or stopped answering is started again first (a server already running cannot be, and
    /// is called as it is). `why`, the call's failure among others, if any: after
    /// [`DEAD_ALONE`] such calls in a row each ended a server just started, it dies whatever
    /// the input; a call that timed out among others is made only on a server that answers
    /// `tools/list`.
    pub(crate) async fn unfit(&self, why: Option<Crowded>) -> Option<Answer> {
        let dead_alone = self.dead_alone.load(Ordering::SeqCst);
        // Only for calls cut off among others: explore's own calls alone are each a new input,
        // and a run of crashing ones (shrinking one) says nothing of the next.
        if dead_alone >= DEAD_ALONE && why.is_some() {
            return Some(Answer::Crashed(format!(
                "not made again alone: the last {dead_alone} calls made alone each ended the server, each the first call of a server just started, so it dies whatever the input"
            )));
        }
        let live = match self.server.live() {
            Ok(live) => live,
            Err(why) => return Some(Answer::Unreachable(why.to_string())),
        };
        let generation = live.generation();
        let dead = (live.process()).and_then(|p| p.exit_status());
        let stalled = self.stalled.swap(false, Ordering::SeqCst);
        let unanswering = !stalled
            && dead.is_none()
            && why == Some(Crowded::TimedOut)
            && !self.answers_others().await;
        if dead.is_none() && !stalled && !unanswering {
            return None;
        }
        if let Err(why) = self.server.revive(self.slot, generation).await {
            // A server the run did not start (nor can start again) is called as it is.
            return dead.map(|status| {
                Answer::Unreachable(format!(
                    "the server exited earlier in the run ({status}), and {why}"
                ))
            });
        }
        if why == Some(Crowded::TimedOut) && !self.answers_others().await {
            // Started again, it answers nothing: no call alone would be answered either.
            self.silent.store(true, Ordering::SeqCst);
            return Some(Answer::HungNotRetried(
                self.manifest.runtime.limits.timeout_s,
            ));
        }
        None
    }

    /// Whether the server answers `tools/list` within [`PING`] (or `timeout_s`, when shorter):
    /// an answer of any kind, an error included, is an answer.
    async fn answers_others(&self) -> bool {
        let client = match self.server.client(self.slot).await {
            Ok(client) => client,
            Err(_) => return false,
        };
        let limit = PING.min(self.manifest.runtime.limits.timeout());
        matches!(
            tokio::time::timeout(limit, client.list_tools(None)).await,
            Ok(Ok(_) | Err(ServiceError::McpError(_)))
        )
    }

    /// What a call made alone came to, settled so that a failure is laid on the input that
    /// causes it: a crash is the input's when the call was the first of a server just started,
    /// and is made so once more when it was not (answered then, the crash came of the calls
    /// before); a call that ended the server alone before (`ended_alone`) and is answered now,
    /// first on a server started again, is that crash, not the input's; a call that hangs
    /// alone while the server answers nothing else blocks the server, which is started again
    /// before the next call.
    pub(crate) async fn settled(
        &self,
        tried: Tried,
        ended_alone: Option<String>,
        attempt: &impl AsyncFn() -> Tried,
    ) -> Result<Answer, NoAnswer> {
        let gateway = self.manifest.gateway();
        let answer = tried.answer?;
        let answer = match answer {
            Answer::Crashed(what) if tried.first => {
                self.dead_alone.fetch_add(1, Ordering::SeqCst);
                Answer::Crashed(format!(
                    "{what}\n(made alone, as the first call of a server just started: this input ends the server)"
                ))
            }
            Answer::Crashed(what) => {
                let generation = self.server.live().map_or(0, |l| l.generation());
                if let Err(why) = self.server.revive(self.slot, generation).await {
                    return Ok(Answer::Crashed(format!("{what}\n({why})")));
                }
                let again = attempt().await;
                match again.answer? {
                    Answer::Crashed(_) => {
                        self.dead_alone.fetch_add(1, Ordering::SeqCst);
                        Answer::Crashed(format!(
                            "{what}\n(made again alone, as the first call of the server started again, it ended that one too: this input ends the server)"
                        ))
                    }
                    other => {
                        self.dead_alone.store(0, Ordering::SeqCst);
                        history(&what, &other.describe(gateway))
                    }
                }
            }
            Answer::Hung(limit) => {
                self.dead_alone.store(0, Ordering::SeqCst);
                self.hung_alone(limit)
                    .await
                    .unwrap_or(Answer::HungAlone(limit))
            }
            answered => {
                self.dead_alone.store(0, Ordering::SeqCst);
                match ended_alone {
                    Some(what) => history(&what, &answered.describe(gateway)),
                    None => answered,
                }
            }
        };
        Ok(answer)
    }

    /// A call alone that got no answer within `timeout_s` (`limit` seconds): when the server
    /// answers nothing else either, the call blocks it (started again before the next call);
    /// `None` when the server still answers, and the call is only slow.
    async fn hung_alone(&self, limit: f64) -> Option<Answer> {
        if self.answers_others().await {
            self.silent.store(true, Ordering::SeqCst);
            return None;
        }
        self.stalled.store(true, Ordering::SeqCst);
        Some(Answer::Blocked(limit))
    }
}

/// A call the server's process ended during: its exit status, the call's input, and what the
/// server wrote since the call was sent (`mark`), set in under the line.
pub(crate) fn crash(
    status: std::process::ExitStatus,
    input: &Value,
    output: &Output,
    mark: usize,
) -> String {
    let input = holon_core::message::short(input);
    if output.mark() == mark {
        return format!(
            "the server exited ({status}) during this call, whose input was {input}; it wrote nothing meanwhile"
        );
    }
    let lines: Vec<String> = (output.since(mark).lines())
        .map(|l| format!("  | {l}"))
        .collect();
    format!(
        "the server exited ({status}) during this call, whose input was {input}; what it wrote meanwhile:\n{}",
        lines.join("\n")
    )
}

/// A crash that came of the calls the server took before: the call that was running when the
/// server ended (`what`), made again alone as the first call of the server started again, was
/// `answered`.
fn history(what: &str, answered: &str) -> Answer {
    Answer::Crashed(format!(
        "{what}\n(made again alone, as the first call of the server started again, it was answered ({answered}): the crash is not this input's doing, but came of the calls the server took before it)"
    ))
}
