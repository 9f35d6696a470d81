//! One call on a pass as the proxies see it: the calls in flight on each pass, each with the
//! requests attributed to it and what they were answered, and what the proxies of a run share
//! (the recordings read and indexed by content, what this run recorded, the real services'
//! addresses, the requests counted).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::fault::{Faulted, Plant};
use crate::index::{Index, Print};
use crate::ledger::{Charge, Used};
use crate::matching;
use crate::mode::{Mode, Refresh};
use crate::recording::{Read, Request, Response, Scope};
use holon_config::secrets::Secrets;
use holon_core::gateway::{Answer, Pass, Reply, Trouble};

/// One of a thing for each pass.
pub(crate) struct PerPass<T> {
    function: T,
    mcp: T,
}

impl<T> PerPass<T> {
    pub(crate) fn new(make: impl Fn() -> T) -> PerPass<T> {
        PerPass {
            function: make(),
            mcp: make(),
        }
    }

    pub(crate) fn get(&self, pass: Pass) -> &T {
        match pass {
            Pass::Function => &self.function,
            Pass::Mcp => &self.mcp,
        }
    }
}

/// One answer a record run got for a request, shared by every pass that makes that request
/// for the same example (the `occurrence`-th time in its call), so that the two passes and
/// explore see the same upstream answers.
pub(crate) struct Slot {
    pub(crate) upstream: String,
    pub(crate) request: Request,
    pub(crate) occurrence: usize,
    pub(crate) answer: tokio::sync::OnceCell<Result<Response, String>>,
}

/// What the proxies of a run share.
pub(crate) struct ProxyState {
    pub(crate) mode: Mode,
    pub(crate) secrets: Secrets,
    /// Each upstream's real base URL (record and live).
    pub(crate) real: HashMap<String, String>,
    /// The recordings read at the start (replay).
    pub(crate) recorded: Vec<Read>,
    /// The recordings by content: which scope records which request, answered how.
    pub(crate) index: Index,
    /// What this run recorded, by scope, in the order it was first asked for.
    pub(crate) fresh: Mutex<HashMap<Scope, Vec<Arc<Slot>>>>,
    /// The calls in flight on each pass, in the order they were entered.
    pub(crate) current: PerPass<Mutex<Vec<Arc<Call>>>>,
    /// Told on each pass when a call leaves it: a call waiting to be told apart from those in
    /// flight may enter.
    pub(crate) left: PerPass<tokio::sync::Notify>,
    /// Requests seen, by upstream.
    pub(crate) requests: Mutex<HashMap<String, usize>>,
    /// Every request, what it was for and what it was answered.
    pub(crate) ledger: Arc<crate::ledger::Ledger>,
    /// What went wrong outside any call (a server's start).
    pub(crate) outside: Mutex<Vec<String>>,
    /// The reports of requests no recording answers that a trial printed in full already: the
    /// other pass's trial of the same example says so in one line.
    pub(crate) reported: Mutex<HashSet<String>>,
    /// The client that forwards to the real services.
    pub(crate) client: reqwest::Client,
    /// How long a forwarded request may take.
    pub(crate) limit: Duration,
    /// The manifest's folder, which messages name the recordings from.
    pub(crate) base: std::path::PathBuf,
}

/// One call on a pass, as the proxy attributes the requests it sees: what it is for, the
/// input it carries, how many times it made each request, what each was answered, what went
/// wrong, and the fault planted in it.
pub(crate) struct Call {
    /// What the call is for.
    pub(crate) scope: Scope,
    /// The text of the call's input (its strings, longest first): a live run tells a
    /// request's call by the input it carries.
    pub(crate) needles: Vec<String>,
    occurrences: Mutex<Vec<(Request, usize)>>,
    /// Each request attributed to the call, in order, with its answer once it came.
    used: Mutex<Vec<Arc<Charge>>>,
    misses: Mutex<Vec<String>>,
    /// The harness's own failures to get an answer (record): the call is not judged.
    failures: Mutex<Vec<String>>,
    /// The real service's failures (live): the call is judged, but never blessed into an error.
    upstream_failures: Mutex<Vec<String>>,
    /// The fault planted in the call, if any.
    pub(crate) plant: Option<Plant>,
    fired: AtomicBool,
    /// Told when the call's verdict is in: a held answer is dropped then.
    pub(crate) ended: Arc<tokio::sync::Notify>,
    /// Whether the proxy holds an answer of this call back (the `slow` fault), and the signal.
    held: AtomicBool,
    holding: tokio::sync::Notify,
}

impl Call {
    /// A call for `scope` with `inputs` (the input of one call, or a batch's), with `plant`
    /// failing one of its requests.
    pub(crate) fn new(scope: Scope, inputs: &[Value], plant: Option<Plant>) -> Call {
        Call {
            scope,
            needles: needles(inputs),
            occurrences: Mutex::new(Vec::new()),
            used: Mutex::new(Vec::new()),
            misses: Mutex::new(Vec::new()),
            failures: Mutex::new(Vec::new()),
            upstream_failures: Mutex::new(Vec::new()),
            plant,
            fired: AtomicBool::new(false),
            ended: Arc::new(tokio::sync::Notify::new()),
            held: AtomicBool::new(false),
            holding: tokio::sync::Notify::new(),
        }
    }

    /// How many times this call made `request` so far, without counting this one.
    pub(crate) fn made(&self, request: &Request) -> usize {
        (self.occurrences.lock().ok())
            .and_then(|seen| {
                (seen.iter().find(|(r, _)| matching::same(r, request))).map(|(_, n)| n + 1)
            })
            .unwrap_or(0)
    }

    /// How many requests were attributed to this call so far.
    pub(crate) fn requests(&self) -> usize {
        self.used.lock().map(|u| u.len()).unwrap_or(0)
    }

    /// A request of this call to `upstream` whose print is `print`, its answer to come: put
    /// on the call's list, and given to whoever records the answer.
    pub(crate) fn request_to(&self, upstream: &str, print: Print) -> Option<Arc<Charge>> {
        let charge = Arc::new(Charge::new(upstream, print));
        self.used.lock().ok()?.push(charge.clone());
        Some(charge)
    }

    /// The proxy holds an answer of this call back (the `slow` fault): the call waits on the
    /// agent's own patience from now on.
    pub(crate) fn hold(&self) {
        self.held.store(true, Ordering::SeqCst);
        self.holding.notify_waiters();
    }

    /// How many times this call made `request` before (0 the first time).
    pub(crate) fn occurrence(&self, request: &Request) -> usize {
        let Ok(mut seen) = self.occurrences.lock() else {
            return 0;
        };
        match seen.iter_mut().find(|(r, _)| matching::same(r, request)) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                seen.push((request.clone(), 0));
                0
            }
        }
    }

    pub(crate) fn miss(&self, report: String) {
        if let Ok(mut m) = self.misses.lock() {
            m.push(report);
        }
    }

    pub(crate) fn fail(&self, report: String) {
        if let Ok(mut f) = self.failures.lock() {
            f.push(report);
        }
    }

    pub(crate) fn upstream_failed(&self, report: String) {
        if let Ok(mut f) = self.upstream_failures.lock() {
            f.push(report);
        }
    }

    pub(crate) fn played(&self) {
        self.fired.store(true, Ordering::SeqCst);
    }
}

/// The strings of `inputs`, longest first, each once: what a request that carries the input
/// holds.
fn needles(inputs: &[Value]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut stack: Vec<&Value> = inputs.iter().collect();
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) if !s.trim().is_empty() => found.push(s.clone()),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    found.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    found.dedup();
    found
}

/// A call in flight on a pass: the requests attributed to it are its own until this is
/// dropped. Held by whatever waits for the call (never by the agent's task), so a call given
/// up on leaves the pass.
pub struct Entered {
    pub(crate) call: Arc<Call>,
    pub(crate) pass: Pass,
    pub(crate) state: Arc<ProxyState>,
    /// The command that refreshes the recordings, for the report of a request none answered.
    pub(crate) refresh: Arc<Refresh>,
    /// The pass's turn, in the modes whose calls go one at a time (record, a live run that
    /// blesses).
    pub(crate) _turn: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl Entered {
    /// Each upstream request attributed to this call so far, in order, with its answer. In a
    /// live run, asked as the call ends, a request still waiting for its answer is first
    /// swapped for one of the same content already answered that was charged to another call
    /// of the same example in flight: the calls of one example cannot be told apart by
    /// content, so the request was dealt in turn, and the call that ends had its answer (the
    /// call still waiting is the one the request still waiting is for).
    pub fn used(&self) -> Vec<Used> {
        if self.state.mode == Mode::Live {
            self.settle();
        }
        (self.call.used.lock().ok())
            .map(|u| u.iter().filter_map(|c| c.used()).collect())
            .unwrap_or_default()
    }

    /// The requests of this call still waiting for their answer, as [`Entered::used`] left
    /// them (asked after it): a late answer to each is the call's all the same.
    pub fn waiting(&self) -> Vec<crate::ledger::Waiting> {
        (self.call.used.lock().ok())
            .map(|u| {
                (u.iter().filter(|c| !c.done()))
                    .map(|c| crate::ledger::Waiting(c.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// See [`Entered::used`]. Under the pass's lock, which every charge is made under, so the
    /// lists change in one place at a time.
    fn settle(&self) {
        let Ok(current) = self.state.current.get(self.pass).lock() else {
            return;
        };
        let Ok(mut mine) = self.call.used.lock() else {
            return;
        };
        let others: Vec<&Arc<Call>> = (current.iter())
            .filter(|c| !Arc::ptr_eq(c, &self.call) && c.scope == self.call.scope)
            .collect();
        for charge in mine.iter_mut().filter(|c| !c.done()) {
            for other in &others {
                let Ok(mut theirs) = other.used.lock() else {
                    continue;
                };
                let answered = (theirs.iter_mut()).find(|t| t.done() && t.print == charge.print);
                if let Some(answered) = answered {
                    std::mem::swap(charge, answered);
                    break;
                }
            }
        }
    }

    /// Resolves once the proxy holds an answer of this call back (the `slow` fault): from then
    /// on the call only waits on the agent giving up on its upstream, and uses nothing else.
    pub fn held(&self) -> impl Future<Output = ()> + Send + 'static {
        let call = self.call.clone();
        async move {
            loop {
                let holding = call.holding.notified();
                tokio::pin!(holding);
                holding.as_mut().enable();
                if call.held.load(Ordering::SeqCst) {
                    return;
                }
                holding.await;
            }
        }
    }

    /// Whether the fault planted in this call was played (its request was made).
    pub fn fault_played(&self) -> bool {
        self.call.fired.load(Ordering::SeqCst)
    }

    /// The call's end, with `answer`: what a fault trial judges.
    pub fn faulted(self, answer: Answer) -> Faulted {
        Faulted {
            answer,
            played: self.fault_played(),
            misses: self.misses(),
        }
    }

    /// The first failure of a real service this call saw (live: a 429, a 5xx, no connection).
    pub fn upstream_failure(&self) -> Option<String> {
        (self.call.upstream_failures.lock().ok()).and_then(|f| f.first().cloned())
    }

    /// The requests of this call no recording answered.
    pub fn misses(&self) -> Vec<String> {
        self.call
            .misses
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    /// What the call came back with, its upstreams considered: `answer`, or the trouble that
    /// keeps it from being judged.
    pub fn reply(&self, answer: Answer) -> Reply {
        match self.trouble() {
            Some(trouble) => Err(trouble),
            None => Ok(answer),
        }
    }

    /// What went wrong with this call's upstream requests, if anything.
    pub fn trouble(&self) -> Option<Trouble> {
        let failures = self
            .call
            .failures
            .lock()
            .map(|f| f.clone())
            .unwrap_or_default();
        if let Some(first) = failures.first() {
            return Some(Trouble::Upstream(first.clone()));
        }
        let misses = self
            .call
            .misses
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default();
        if misses.is_empty() {
            return None;
        }
        // One report per cause: a request another trial reported in full (the same example's
        // call on the other pass) is said here in its first line.
        let mut full = Vec::new();
        let mut said = Vec::new();
        for miss in misses {
            let first = self
                .state
                .reported
                .lock()
                .map_or(true, |mut r| r.insert(miss.clone()));
            if first {
                full.push(miss);
            } else {
                said.push(format!(
                    "{} (the same request as another trial's, whose report says where it differs)",
                    miss.lines().next().unwrap_or("").trim_end_matches(':')
                ));
            }
        }
        let mut text = full.join("\n");
        if !full.is_empty() {
            text.push_str(&format!(
                "\nrefresh the recordings: {}",
                self.refresh.whole()
            ));
            if let Scope::Example(name) = &self.call.scope {
                text.push_str(&format!(
                    "\n  (this example alone: {})",
                    self.refresh.one(name)
                ));
            }
        }
        for line in said {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&line);
        }
        Some(Trouble::Unrecorded(text))
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        // A request still waiting for its answer outlives its call: its answer is late.
        if let Ok(used) = self.call.used.lock() {
            for charge in used.iter().filter(|c| !c.done()) {
                charge.orphaned.store(true, Ordering::SeqCst);
            }
        }
        self.call.ended.notify_one();
        if let Ok(mut current) = self.state.current.get(self.pass).lock() {
            current.retain(|c| !Arc::ptr_eq(c, &self.call));
        }
        self.state.left.get(self.pass).notify_waiters();
    }
}
