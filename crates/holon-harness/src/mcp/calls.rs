//! The MCP pass's calls in one era: `tools/list` and every selected example's `tools/call` (one,
//! or `--repeat`'s, a round of every example at a time), sent ahead of the trials, up to N in
//! flight at once, each ending gathered for its trial (and, when this pass is measured, counted
//! and written as a receipt); a call that got no answer in time (or no connection) among others
//! tried again alone, unless the run measures many calls; and explore's and the fault trials'
//! calls through the same client. In 2026-07-28 every result must carry its `resultType`, as
//! the envelope rules say.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, PaginatedRequestParams, Tool};
use rmcp::service::ServiceError;
use serde_json::Value;

use super::alone::{Alone, Tried, Went, crash, retry_of};
use super::server::{Conn, Server, exited, exited_message};
use super::words::{http_status, service_error};
use crate::era::Era;
use crate::error::{NoAnswer, ServerError, ToolsError};
use crate::flight::{Crowd, Crowded, Gathered, Sent, Slots, Transport, unplayed};
use crate::measure::{CallEnd, Meter};
use crate::pass::Planted;
use crate::planted::giving_way;
use holon_core::gateway::{Answer, Pass, Reply, Status};
use holon_core::manifest::Manifest;
use holon_upstream::fault::Faulted;
use holon_upstream::{Entered, Scope, Upstreams};

/// How a pass's calls go out.
pub(crate) struct Shape {
    /// Calls in flight at once.
    pub concurrency: usize,
    /// The runs (from 1) each example is called, by place.
    pub runs: Vec<Vec<u32>>,
    /// Whether a call that failed among others is tried again alone.
    pub retry: bool,
}

impl Sent {
    fn went(&self) -> Went<'_> {
        Went {
            answer: Some(&self.answer),
            crowded: self.crowded,
            first: self.first,
        }
    }
}

/// Extra time given to a call past `timeout_s`, so the server's own `timeout` answer arrives
/// before the harness gives up on it: on loopback it takes milliseconds. (It was 2 s; every
/// second of it is paid twice by a server that hangs, in the crowd and alone.)
const CALL_GRACE: Duration = Duration::from_secs(1);

/// The calls of one run's MCP pass in one era, and what they learned of the server.
pub(crate) struct Calls {
    manifest: Arc<Manifest>,
    server: Arc<Server>,
    /// Which of the eras the server is tested in (0: the newest).
    slot: usize,
    concurrency: usize,
    /// The examples whose trials run, in trial order: the calls the flight makes.
    selected: OnceLock<Vec<usize>>,
    /// Whether the `tools/list` trial runs.
    list_tools: OnceLock<bool>,
    tools: Slots<Result<Vec<Tool>, ToolsError>>,
    flight: OnceLock<()>,
    answers: Gathered,
    /// Whether a call that failed among others is tried again alone.
    retry: bool,
    /// What the calls made alone learned of the server.
    alone: Alone,
    /// The server answered a `tools/call` (in time, with anything).
    answered: AtomicBool,
    /// The upstreams the server is pointed at: none for a server already running.
    upstreams: Option<Arc<Upstreams>>,
    meter: Option<Arc<Meter>>,
}

impl Calls {
    /// The calls of a pass on `server` in its `slot`-th era, shaped by `shape`, each entered on
    /// `upstreams` and, when this pass is measured, counted by `meter`.
    pub(crate) fn new(
        manifest: Arc<Manifest>,
        server: Arc<Server>,
        slot: usize,
        shape: Shape,
        upstreams: Option<Arc<Upstreams>>,
        meter: Option<Arc<Meter>>,
    ) -> Calls {
        let alone = Alone::new(manifest.clone(), server.clone(), slot);
        Calls {
            manifest,
            server,
            slot,
            concurrency: shape.concurrency,
            selected: OnceLock::new(),
            list_tools: OnceLock::new(),
            tools: Slots::new(1),
            flight: OnceLock::new(),
            answers: Gathered::new(shape.runs),
            retry: shape.retry,
            alone,
            answered: AtomicBool::new(false),
            upstreams,
            meter,
        }
    }

    /// What the trials that will run need (libtest's filters applied): `tools/list` or not,
    /// and the examples' calls, in trial order. By default, everything.
    pub(crate) fn select(&self, list_tools: bool, examples: Vec<usize>) {
        let _ = self.list_tools.set(list_tools);
        let _ = self.selected.set(examples);
    }

    /// The note on calls retried alone, for the end of the run.
    pub(crate) fn retry_note(&self) -> Option<String> {
        self.alone.note(Pass::Mcp.who(), self.concurrency)
    }

    /// Whether a call tried alone got no answer in time, while none of the run's calls did.
    pub(crate) fn silent(&self) -> bool {
        self.alone.silent() && !self.answered.load(Ordering::SeqCst)
    }

    /// Whether a call tried alone got no answer in time.
    pub(crate) fn hung(&self) -> bool {
        self.alone.silent()
    }

    /// The server in this pass's era.
    fn conn(&self) -> Result<&Conn, ServerError> {
        self.server.conn(self.slot)
    }

    /// What the server listed, once the flight listed it alone, before the calls.
    pub(crate) fn tools(self: &Arc<Self>) -> Result<Vec<Tool>, ToolsError> {
        self.conn()?;
        self.flight.get_or_init(|| self.launch());
        self.tools.take(0).unwrap_or(Err(ToolsError::NotSent))
    }

    /// Example `index`'s calls as they ended, made with the others when the first trial asked
    /// for the server.
    pub(crate) fn ends_of(self: &Arc<Self>, index: usize) -> Result<Vec<CallEnd>, NoAnswer> {
        self.conn()?;
        if self
            .selected
            .get()
            .is_some_and(|selected| !selected.contains(&index))
        {
            return Err(NoAnswer::FilteredOut);
        }
        self.flight.get_or_init(|| self.launch());
        self.answers.take(index).ok_or(NoAnswer::NotMade)
    }

    /// One input through `tools/call` on the shared server, outside the example trials
    /// (explore's cases): what came back (unreachable when the server is gone, or never
    /// started). Alone, as the server's only call: a crash or a stall is settled as a call
    /// made alone is ([`Calls::settled`]).
    pub(crate) fn one(&self, input: &Value) -> Reply {
        let live = match self.conn() {
            Ok(live) => live,
            Err(why) => return Ok(Answer::Unreachable(why.to_string())),
        };
        live.runtime.block_on(async {
            let _alone = self.server.alone().await;
            if let Some(answer) = self.alone.unfit(None).await {
                return Ok(answer);
            }
            let attempt = async || {
                let entered = match &self.upstreams {
                    Some(u) => {
                        let inputs = std::slice::from_ref(input);
                        Some(u.enter(Pass::Mcp, Scope::Explore, inputs).await)
                    }
                    None => None,
                };
                let sent = self.send(input).await;
                let reply = match &entered {
                    Some(entered) => entered.reply(sent.answer),
                    None => Ok(sent.answer),
                };
                (reply, sent.crowded, sent.first)
            };
            let (reply, _, first) = attempt().await;
            let tried = Tried {
                answer: Ok(match reply {
                    Ok(answer) => answer,
                    Err(trouble) => return Err(trouble),
                }),
                crowded: None,
                first,
            };
            let again = async || {
                let (reply, crowded, first) = attempt().await;
                Tried {
                    answer: reply.map_err(NoAnswer::Trouble),
                    crowded,
                    first,
                }
            };
            match self.alone.settled(tried, None, &again).await {
                Ok(answer) => Ok(answer),
                Err(NoAnswer::Trouble(trouble)) => Err(trouble),
                Err(other) => Ok(Answer::Unreachable(other.to_string())),
            }
        })
    }

    /// The fault trials' calls through the server, up to the concurrency in flight, each
    /// entered with its fault on its own; a call whose answer the proxy holds back (`slow`)
    /// gives its place to the next. `done` is given each one's end as it comes.
    pub(crate) fn faulted_all(
        self: &Arc<Self>,
        calls: &[Planted],
        done: &(dyn Fn(usize, Faulted) + Sync),
    ) {
        let live = match self.conn() {
            Ok(live) => live,
            Err(why) => {
                for (i, _) in calls.iter().enumerate() {
                    done(i, unplayed(Answer::Unreachable(why.to_string())));
                }
                return;
            }
        };
        let Some(upstreams) = &self.upstreams else {
            for (i, _) in calls.iter().enumerate() {
                done(
                    i,
                    unplayed(Answer::Unreachable("no upstream is declared".into())),
                );
            }
            return;
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, Faulted)>();
        let permits = Arc::new(tokio::sync::Semaphore::new(self.concurrency.max(1)));
        let (me, upstreams, owned) = (self.clone(), upstreams.clone(), calls.to_vec());
        live.runtime.block_on(async move {
            tokio::spawn(async move {
                for (i, call) in owned.into_iter().enumerate() {
                    let Ok(permit) = permits.clone().acquire_owned().await else {
                        break;
                    };
                    let (me, upstreams, tx) = (me.clone(), upstreams.clone(), tx.clone());
                    tokio::spawn(async move {
                        let Planted {
                            input,
                            scope,
                            plant,
                        } = call;
                        let inputs = std::slice::from_ref(&input);
                        let entered = upstreams
                            .enter_with(Pass::Mcp, scope, inputs, Some(plant))
                            .await;
                        let _crowd = me.server.crowd().await;
                        let sent = giving_way(me.send(&input), entered.held(), permit).await;
                        let _ = tx.send((i, entered.faulted(sent.answer)));
                    });
                }
            });
            let mut left = calls.len();
            while left > 0 {
                let Some((i, faulted)) = rx.recv().await else {
                    break;
                };
                left -= 1;
                done(i, faulted);
            }
        });
    }

    /// Several inputs through `tools/call` at once, in flight together: the answers in the
    /// inputs' order. A call that gets no answer in time, or cannot connect, among others is
    /// tried again alone, as in the examples' flight.
    pub(crate) fn all(self: &Arc<Self>, inputs: &[Value]) -> Vec<Reply> {
        let live = match self.conn() {
            Ok(live) => live,
            Err(e) => {
                return inputs
                    .iter()
                    .map(|_| Ok(Answer::Unreachable(e.to_string())))
                    .collect();
            }
        };
        live.runtime.block_on(async {
            // The batch is one turn on the upstreams: in record mode its requests are explore's.
            let entered = match &self.upstreams {
                Some(u) => Some(u.enter(Pass::Mcp, Scope::Explore, inputs).await),
                None => None,
            };
            let answers = self.together(inputs).await;
            (answers.into_iter())
                .map(|a| match &entered {
                    Some(entered) => entered.reply(a),
                    None => Ok(a),
                })
                .collect()
        })
    }

    async fn together(self: &Arc<Self>, inputs: &[Value]) -> Vec<Answer> {
        let mut calls = tokio::task::JoinSet::new();
        for (i, input) in inputs.iter().cloned().enumerate() {
            let me = self.clone();
            calls.spawn(async move {
                let _crowd = me.server.crowd().await;
                (i, me.send(&input).await)
            });
        }
        let mut answers: Vec<Option<Answer>> = vec![None; inputs.len()];
        let mut again = Vec::new();
        while let Some(joined) = calls.join_next().await {
            match joined {
                Ok((i, sent)) => match retry_of(sent.went(), inputs.len() > 1, true) {
                    Some(retry) => again.push((i, retry)),
                    None => {
                        if let Some(slot) = answers.get_mut(i) {
                            *slot = Some(sent.answer);
                        }
                    }
                },
                Err(e) => {
                    let why = format!("the call's task failed: {e}");
                    return inputs
                        .iter()
                        .map(|_| Answer::Unreachable(why.clone()))
                        .collect();
                }
            }
        }
        again.sort_unstable_by_key(|(i, _)| *i);
        for (i, retry) in again {
            let (Some(input), Some(slot)) = (inputs.get(i), answers.get_mut(i)) else {
                continue;
            };
            let attempt = async || {
                let sent = self.send(input).await;
                Tried {
                    answer: Ok(sent.answer),
                    crowded: sent.crowded,
                    first: sent.first,
                }
            };
            *slot = Some(match self.alone.again(retry, &attempt).await {
                Ok(answer) => answer,
                Err(why) => Answer::Unreachable(why.to_string()),
            });
        }
        answers
            .into_iter()
            .map(|a| a.unwrap_or_else(|| Answer::Unreachable("the call gave no answer".into())))
            .collect()
    }

    /// The flight runs on a thread of its own, which drives the client's runtime while the
    /// trials wait for their answers.
    fn launch(self: &Arc<Self>) {
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("holon-mcp-flight".into())
            .spawn(move || {
                // A panic here (a bug of the harness or the MCP client) must not leave the
                // trials waiting for answers: it is on stderr, and each trial fails.
                let _tools = me.tools.on_panic(|_| Err(ToolsError::NotSent));
                let _answers = me.answers.on_panic(|| NoAnswer::Panicked);
                if let Ok(live) = me.conn() {
                    live.runtime.block_on(me.clone().fly());
                }
                me.tools.close(|_| Err(ToolsError::NotSent));
                me.answers.close(|| NoAnswer::RunEnded);
            });
        if let Err(e) = spawned {
            let why = NoAnswer::Thread(e.to_string());
            self.tools.close(|_| Err(ToolsError::NotSent));
            self.answers.close(|| why.clone());
        }
    }

    /// Every selected call, up to `concurrency` in flight, a round of every example at a
    /// time. A call that gets no answer in time, or cannot reach the server, while others are
    /// in flight is tried again alone once the rest are done (unless the run measures many
    /// calls, where each is one receipt): a server that takes one call at a time must not turn
    /// into false failures. After the first such call, the rest go out one at a time.
    async fn fly(self: Arc<Self>) {
        if self.list_tools.get().copied().unwrap_or(true) {
            let tools = self.list_tools().await;
            self.tools.put(0, tools);
        }
        let all: Vec<usize> = (0..self.manifest.examples.len()).collect();
        let order = self.selected.get().unwrap_or(&all).clone();
        let keys = self.answers.in_rounds(&order);
        let n = self.concurrency;
        let permits = Arc::new(tokio::sync::Semaphore::new(n));
        let alone = Arc::new(AtomicBool::new(false));
        let crowd = Arc::new(Crowd::default());
        let mut calls = tokio::task::JoinSet::new();
        for (index, run) in keys {
            let wanted = if alone.load(Ordering::Relaxed) { n } else { 1 };
            let Ok(permit) = permits.clone().acquire_many_owned(wanted as u32).await else {
                break;
            };
            let (me, alone) = (self.clone(), alone.clone());
            let crowd = crowd.clone();
            calls.spawn(async move {
                let turn = me.server.crowd().await;
                let seat = crowd.seat();
                let (end, why, first) = me.call_once(index, run).await;
                let crowded = seat.crowded();
                drop(seat);
                drop(turn);
                drop(permit);
                let went = Went {
                    answer: end.answer.as_ref().ok(),
                    crowded: why,
                    first,
                };
                if let Some(retry) = retry_of(went, crowded, me.retry) {
                    alone.store(true, Ordering::Relaxed);
                    return Some((index, run, retry));
                }
                me.ended(index, end);
                None
            });
        }
        let mut again = Vec::new();
        while let Some(joined) = calls.join_next().await {
            if let Ok(Some(call)) = joined {
                again.push(call);
            }
        }
        again.sort_unstable_by_key(|(index, run, _)| (*index, *run));
        for (index, run, retry) in again {
            let kept = std::sync::Mutex::new(None);
            let attempt = async || {
                let (end, crowded, first) = self.call_once(index, run).await;
                let tried = Tried {
                    answer: end.answer.clone(),
                    crowded,
                    first,
                };
                if let Ok(mut kept) = kept.lock() {
                    *kept = Some(end);
                }
                tried
            };
            let answer = self.alone.again(retry, &attempt).await;
            let kept = kept.into_inner().ok().flatten();
            let mut end = kept.unwrap_or_else(|| CallEnd::without(run, NoAnswer::NotMade));
            end.answer = answer;
            self.ended(index, end);
        }
    }

    /// A call of example `index` ended: counted when this pass is measured, and gathered for
    /// its trial.
    fn ended(&self, index: usize, end: CallEnd) {
        if let Some(meter) = &self.meter {
            meter.ended(Pass::Mcp, index, &end);
        }
        self.answers.put(index, end);
    }

    async fn list_tools(&self) -> Result<Vec<Tool>, ToolsError> {
        let conn = self.conn()?;
        let listed = tokio::time::timeout(Duration::from_secs(30), self.list_pages(conn)).await;
        match listed {
            Err(_) => Err(ToolsError::Silent),
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(ToolsError::Failed { why })) => Err(ToolsError::Failed {
                why: match self.exited().await {
                    Some(status) => exited_message(status, &why),
                    None => why,
                },
            }),
            Ok(Err(other)) => Err(other),
        }
    }

    /// Every page of `tools/list`; in 2026-07-28 each must carry its `resultType`.
    async fn list_pages(&self, conn: &Conn) -> Result<Vec<Tool>, ToolsError> {
        let client = (self.server.client(self.slot).await)
            .map_err(|e| ToolsError::Failed { why: e.to_string() })?;
        let mut tools = Vec::new();
        let mut cursor = None;
        loop {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let page = client
                .list_tools(Some(params))
                .await
                .map_err(|e| ToolsError::Failed {
                    why: format!("`tools/list` failed: {}", service_error(&e)),
                })?;
            if conn.era == Era::Modern && page.result_type.is_none() {
                return Err(ToolsError::NoResultType);
            }
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
    }

    /// The server's exit status, when it exited a moment ago.
    async fn exited(&self) -> Option<std::process::ExitStatus> {
        exited(self.server.live().ok()?).await
    }

    /// One call of example `index` (its `run`-th), entered on the upstreams, as it ended, and
    /// how it failed when the crowd may be the cause (no answer in time, no connection), so
    /// that alone it could go through. Nothing to judge when the call's upstream requests went
    /// wrong on the harness's side (no recording, the real service unreachable while
    /// recording).
    async fn call_once(&self, index: usize, run: u32) -> (CallEnd, Option<Crowded>, bool) {
        let Some(example) = self.manifest.examples.get(index) else {
            return (
                CallEnd::without(run, NoAnswer::NoExample(index)),
                None,
                false,
            );
        };
        let scope = Scope::Example(example.name.clone());
        self.call_input(&example.input, scope, run).await
    }

    /// One call of `input` (its `run`-th), entered on the upstreams in `scope`, as it ended;
    /// see [`Calls::call_once`].
    async fn call_input(
        &self,
        input: &Value,
        scope: Scope,
        run: u32,
    ) -> (CallEnd, Option<Crowded>, bool) {
        let entered = match &self.upstreams {
            Some(upstreams) => {
                let inputs = std::slice::from_ref(input);
                Some(upstreams.enter(Pass::Mcp, scope, inputs).await)
            }
            None => None,
        };
        let sent = Instant::now();
        let Sent {
            answer,
            crowded,
            first,
        } = self.send(input).await;
        let took = sent.elapsed();
        let answer = match &entered {
            Some(entered) => entered.reply(answer).map_err(NoAnswer::Trouble),
            None => Ok(answer),
        };
        let crowded = crowded.filter(|_| answer.is_ok());
        let end = CallEnd {
            run,
            answer,
            failure: entered.as_ref().and_then(Entered::upstream_failure),
            took,
            upstream: entered.as_ref().map(Entered::used).unwrap_or_default(),
            late: entered.as_ref().map(Entered::waiting).unwrap_or_default(),
        };
        (end, crowded, first)
    }

    /// One call of `input` by hand (`holon-test call`), entered on the upstreams in `scope`,
    /// alone on the server, as it ended; the server unreachable is its answer.
    pub(crate) fn single(&self, input: &Value, scope: Scope) -> CallEnd {
        let live = match self.conn() {
            Ok(live) => live,
            Err(why) => {
                return CallEnd {
                    answer: Ok(Answer::Unreachable(why.to_string())),
                    ..CallEnd::without(1, NoAnswer::NotMade)
                };
            }
        };
        live.runtime.block_on(async {
            let _alone = self.server.alone().await;
            self.call_input(input, scope, 1).await.0
        })
    }
}

impl Transport for Calls {
    /// One `tools/call` with `input` as its arguments; a server the run started that died
    /// before it is started again first. A call that loses its connection to a server that
    /// then exits is a crash, with the server's exit status and what it wrote meanwhile.
    async fn send(&self, input: &Value) -> Sent {
        let gone = |answer| Sent {
            answer,
            crowded: None,
            first: false,
        };
        let (conn, server) = match (self.conn(), self.server.live()) {
            (Ok(conn), Ok(server)) => (conn, server),
            (Err(why), _) | (_, Err(why)) => return gone(Answer::Unreachable(why.to_string())),
        };
        if let Some(status) = server.process().and_then(|p| p.exit_status())
            && let Err(why) = self.server.revive(self.slot, server.generation()).await
        {
            return gone(Answer::Unreachable(format!(
                "the server exited earlier in the run ({status}), and {why}"
            )));
        }
        let arguments = match input {
            Value::Object(map) => map.clone(),
            other => {
                return gone(Answer::Unreachable(format!(
                    "the call was not sent: the input is {}, but MCP arguments are an object",
                    holon_core::message::type_of(other)
                )));
            }
        };
        let client = match self.server.client(self.slot).await {
            Ok(client) => client,
            Err(why) => return gone(Answer::Unreachable(why.to_string())),
        };
        let limit = self.manifest.runtime.limits.timeout() + CALL_GRACE;
        let mut params = CallToolRequestParams::new(self.manifest.runtime.tool.clone())
            .with_arguments(arguments);
        // File handles reach the server as signed links in `_meta`, as the gateway sends them.
        match conn.files.meta_for(input) {
            Ok(Some(meta)) => params.meta = Some(rmcp::model::RequestMetaObject::from(meta)),
            Ok(None) => {}
            Err(e) => return gone(Answer::Unreachable(format!("the call was not sent: {e}"))),
        }
        let process = server.process();
        let mark = process.as_ref().map(|p| p.output.mark());
        let first = server.serve() == 0;
        // `timeout_s` counts from when the call is sent. A call given up on is dropped, and
        // rmcp cancels a dropped call with `notifications/cancelled`, as MCP specifies.
        let sent = Instant::now();
        let called = tokio::time::timeout(limit, client.call_tool(params)).await;
        let late = sent.elapsed() > self.manifest.runtime.limits.timeout();
        if let Ok(Ok(_) | Err(ServiceError::McpError(_))) = &called {
            self.answered.store(true, Ordering::SeqCst);
        }
        let (answer, crowded) = match called {
            Err(_) => (
                Answer::Hung(self.manifest.runtime.limits.timeout_s),
                Some(Crowded::TimedOut),
            ),
            Ok(Ok(result)) => (from_result(conn.era, result), None),
            Ok(Err(ServiceError::McpError(e))) => (
                Answer::RpcError {
                    code: e.code.0,
                    message: rpc_message(conn.era, &e),
                },
                None,
            ),
            // An HTTP error status is the server's answer, not a flake to hide.
            Ok(Err(e)) => match http_status(&e) {
                Some(answer) => {
                    self.answered.store(true, Ordering::SeqCst);
                    (answer, None)
                }
                None => {
                    let what = format!("the call failed: {}", service_error(&e));
                    match (self.exited().await, &process, mark) {
                        (Some(status), Some(process), Some(mark)) => (
                            Answer::Crashed(crash(status, input, &process.output, mark)),
                            Some(Crowded::Died),
                        ),
                        (Some(status), _, _) => {
                            (Answer::Unreachable(exited_message(status, &what)), None)
                        }
                        (None, _, _) => (Answer::Unreachable(what), Some(Crowded::Refused)),
                    }
                }
            },
        };
        // An answer that came in the grace, past `timeout_s`, is one the gateway would have
        // stopped the call before: a `timeout` (unless it says so itself, or is no answer).
        let stopped = matches!(answer.status(self.manifest.gateway()), Status::Timeout)
            || matches!(answer, Answer::Unreachable(_) | Answer::Crashed(_));
        if late && !stopped {
            return Sent {
                answer: Answer::Hung(self.manifest.runtime.limits.timeout_s),
                crowded: Some(Crowded::TimedOut),
                first,
            };
        }
        Sent {
            answer,
            crowded,
            first,
        }
    }
}

/// A JSON-RPC error's message; in 2026-07-28, a `HeaderMismatch` says the harness's headers
/// matched, since rmcp sends them from the body it sends.
fn rpc_message(era: Era, error: &rmcp::model::ErrorData) -> String {
    if era == Era::Modern && error.code == rmcp::model::ErrorCode::HEADER_MISMATCH {
        format!(
            "HeaderMismatch, though the request's `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers match its body: {}",
            error.message
        )
    } else {
        error.message.to_string()
    }
}

/// A `tools/call` result as an answer: `structuredContent`, or the failure it carries; in
/// 2026-07-28 a result without its `resultType` breaks the envelope rules, whatever it holds.
fn from_result(era: Era, result: CallToolResult) -> Answer {
    if era == Era::Modern && result.result_type.is_none() {
        return Answer::Malformed(
            "its `tools/call` result has no `resultType`, which every 2026-07-28 result carries"
                .to_string(),
        );
    }
    let text: Vec<String> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    if result.is_error == Some(true) {
        let code = result
            .structured_content
            .as_ref()
            .and_then(|s| s.pointer("/error/code"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let message = result
            .structured_content
            .as_ref()
            .and_then(|s| s.pointer("/error/message"))
            .and_then(Value::as_str)
            .map(str::to_string);
        return Answer::Failed {
            code,
            message: message
                .or_else(|| text.first().cloned())
                .unwrap_or_default(),
        };
    }
    match result.structured_content {
        Some(value) => Answer::Output(value),
        None => Answer::TextOnly(text.join("\n")),
    }
}
