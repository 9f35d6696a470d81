//! One call on a pass as the proxies see it: the call in flight on each pass, whose requests are
//! its own, and what the proxies of a run share (the recordings read, what this run recorded,
//! the real services' addresses, the requests counted).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::fault::{Faulted, Plant};
use crate::matching;
use crate::mode::{Mode, Refresh};
use crate::recording::{Read, Request, Response, Scope};
use holon_core::gateway::{Answer, Pass, Reply, Trouble};
use holon_core::secrets::Secrets;

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
    /// What this run recorded, by scope, in the order it was first asked for.
    pub(crate) fresh: Mutex<HashMap<Scope, Vec<Arc<Slot>>>>,
    /// The call in flight on each pass.
    pub(crate) current: PerPass<Mutex<Option<Arc<Call>>>>,
    /// Requests seen, by upstream.
    pub(crate) requests: Mutex<HashMap<String, usize>>,
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

/// One call on a pass, as the proxy attributes the requests it sees: what it is for, how many
/// times it made each request, what went wrong, and the fault planted in it.
pub(crate) struct Call {
    /// What the call is for.
    pub(crate) scope: Scope,
    occurrences: Mutex<Vec<(Request, usize)>>,
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
}

impl Call {
    /// A call for `scope`, with `plant` failing one of its requests.
    pub(crate) fn new(scope: Scope, plant: Option<Plant>) -> Call {
        Call {
            scope,
            occurrences: Mutex::new(Vec::new()),
            misses: Mutex::new(Vec::new()),
            failures: Mutex::new(Vec::new()),
            upstream_failures: Mutex::new(Vec::new()),
            plant,
            fired: AtomicBool::new(false),
            ended: Arc::new(tokio::sync::Notify::new()),
        }
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

/// A call in flight on a pass: its requests are its own until this is dropped. Held by
/// whatever waits for the call (never by the agent's task), so a call given up on frees the
/// pass.
pub struct Entered {
    pub(crate) call: Arc<Call>,
    pub(crate) pass: Pass,
    pub(crate) state: Arc<ProxyState>,
    /// The command that refreshes the recordings, for the report of a request none answered.
    pub(crate) refresh: Arc<Refresh>,
    pub(crate) _turn: tokio::sync::OwnedMutexGuard<()>,
}

impl Entered {
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
        self.call.ended.notify_one();
        if let Ok(mut current) = self.state.current.get(self.pass).lock()
            && current.as_ref().is_some_and(|c| Arc::ptr_eq(c, &self.call))
        {
            *current = None;
        }
    }
}
