//! The MCP pass in one era: one server shared by the trials of this process (and by the eras it
//! is tested in) and the calls made to it in this era, as a [`Caller`]; plus its own trials,
//! `mcp::tools/list` and (for a server already running) `mcp::initialize`.

use std::sync::Arc;

use serde_json::Value;

use super::calls::{Calls, Shape};
use super::server::{Server, ServerAt};
use super::tools::check_tools;
use crate::context::Run;
use crate::error::{NoAnswer, ServerError, ToolsError};
use crate::measure::CallEnd;
use crate::pass::{Caller, Planted};
use holon_core::gateway::{Pass, Reply, Status};
use holon_core::manifest::Manifest;
use holon_upstream::fault::Faulted;
use holon_upstream::{Mode, Scope};

/// The MCP pass of one run in one era: its server, and the calls made to it in that era.
pub(crate) struct McpPass {
    manifest: Arc<Manifest>,
    server: Arc<Server>,
    /// Which of the eras the server is tested in (0: the newest).
    slot: usize,
    calls: Arc<Calls>,
    /// Whether the answers come from real upstreams, which vary (live mode, or a server
    /// already running with upstreams declared): a difference from an example is then a note.
    live: bool,
}

impl McpPass {
    /// The server of a run's MCP pass, started on `at` with `env` beside `PORT` and `HOST`, in
    /// the eras `--protocol` asks for; nothing starts until a trial asks for it.
    pub(crate) fn server(run: &Run, at: ServerAt, env: Vec<(String, String)>) -> Arc<Server> {
        Arc::new(Server::new(
            run.manifest.clone(),
            at,
            run.settings.startup,
            run.settings.protocol,
            env,
        ))
    }

    /// The pass on `server`'s `slot`-th era (0: the newest it speaks).
    pub(crate) fn new(run: &Run, server: Arc<Server>, slot: usize) -> McpPass {
        let manifest = run.manifest.clone();
        // A server already running calls its own upstreams, the real ones: nothing here can
        // replay into it, so its answers are judged as a live run's are.
        let running = server.running();
        let upstreams = if running { None } else { run.upstreams.clone() };
        let live = match &run.upstreams {
            Some(u) => running || u.mode() == Mode::Live,
            None => false,
        };
        // In a record run (and a live run that blesses), one call at a time: each upstream
        // request is then one call's for sure.
        let serial = upstreams.as_ref().is_some_and(|u| u.serial());
        let concurrency = if serial {
            1
        } else {
            run.settings.concurrency.max(1)
        };
        // The newest era is the one measured (`--repeat`, the meter); a second era's trials
        // call each example once, for what it answers in that era.
        let measured = slot == 0;
        let shape = Shape {
            concurrency,
            runs: match measured {
                true => run.plan.all_runs(Pass::Mcp),
                false => run.plan.once(),
            },
            retry: run.settings.retries(),
        };
        let calls = Arc::new(Calls::new(
            manifest.clone(),
            server.clone(),
            slot,
            shape,
            upstreams,
            run.meter.clone().filter(|_| measured),
        ));
        McpPass {
            manifest,
            server,
            slot,
            calls,
            live,
        }
    }

    /// What the trials that will run need (libtest's filters applied): `tools/list` or not,
    /// and the examples' calls, in trial order. By default, everything.
    pub(crate) fn select(&self, list_tools: bool, examples: Vec<usize>) {
        self.calls.select(list_tools, examples);
    }

    /// Whether the server was already running (`--url`, `HOLON_SERVER_URL`): none started.
    pub(crate) fn running(&self) -> bool {
        self.server.running()
    }

    /// The `mcp::initialize` trial of a server already running, in this pass's era: it serves
    /// the manifest under test, or announces none.
    pub(crate) fn initialize(&self) -> Result<(), ServerError> {
        self.server.initialize(self.slot)
    }

    /// Why this pass's era has nothing to test (the server speaks fewer eras); `None` while it
    /// has. Starts the server when no trial did yet.
    pub(crate) fn missing(&self) -> Option<String> {
        self.server.missing(self.slot)
    }

    /// The `mcp::tools/list` trial: what the server listed, held to the manifest.
    pub(crate) fn tools_list(&self) -> Result<(), ToolsError> {
        check_tools(&self.manifest, &self.calls.tools()?)
    }

    /// Whether a call of this era tried alone got no answer in time.
    pub(crate) fn hung(&self) -> bool {
        self.calls.hung()
    }
}

impl Caller for McpPass {
    fn pass(&self) -> Pass {
        Pass::Mcp
    }

    fn ends_of(&self, index: usize) -> Result<Vec<CallEnd>, NoAnswer> {
        self.calls.ends_of(index)
    }

    fn live(&self) -> bool {
        self.live
    }

    fn one(&self, input: &Value) -> Reply {
        self.calls.one(input)
    }

    fn all(&self, inputs: &[Value]) -> Vec<Reply> {
        self.calls.all(inputs)
    }

    fn single(&self, input: &Value, scope: Scope) -> CallEnd {
        self.calls.single(input, scope)
    }

    fn faulted_all(&self, calls: &[Planted], done: &(dyn Fn(usize, Faulted) + Sync)) {
        self.calls.faulted_all(calls, done)
    }

    /// The server answered none of this run's calls in time, and a call tried alone got no
    /// answer either: each call would wait `timeout_s` (and the grace) for nothing.
    fn unanswering(&self) -> Option<String> {
        self.calls.silent().then(|| {
            format!(
                "the server answered none of this run's calls within `runtime.limits.timeout_s` ({} s), and a call tried alone got no answer either\ngateway status: {}",
                self.manifest.runtime.limits.timeout_s,
                Status::Timeout
            )
        })
    }

    fn retry_note(&self) -> Option<String> {
        self.calls.retry_note()
    }
}
