//! Every upstream request a run caused, what it was for and what it was answered, an answer
//! that came after its call ended included: what the run's spend is counted from. A request
//! to the real service is waited for after the agent gave up on it (it is paid for all the
//! same), until it answers or its time limit passes, and the run waits for those still open
//! (bounded) before it counts.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::index::Print;
use crate::usage::Tokens;
use holon_core::gateway::Pass;

/// One upstream request of a call and its answer, as a receipt lists it: the upstream, the
/// status it answered (none when no answer came, or none before the call ended) and the tokens
/// the answer says it used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Used {
    /// The upstream's name in `holon-test.toml`.
    pub upstream: String,
    /// The HTTP status of its answer; `None` when none came (a reset, no answer yet).
    pub status: Option<u16>,
    /// The tokens its answer says it used.
    pub tokens: Tokens,
}

/// One request charged to a call, shared with the proxy task that waits for its answer: the
/// request's print, what it was answered, and whether the proxy is done with it (answered, or
/// given no answer). A live run may hand it to another call of the same example when the call
/// it was charged to ends without it (see [`Entered::used`]).
pub(crate) struct Charge {
    pub(crate) print: Print,
    used: Mutex<Used>,
    done: AtomicBool,
    /// Its call ended before it was answered.
    pub(crate) orphaned: AtomicBool,
    /// It was answered after its call ended.
    late: AtomicBool,
}

impl Charge {
    /// A request to `upstream` whose print is `print`, its answer to come.
    pub(crate) fn new(upstream: &str, print: Print) -> Charge {
        Charge {
            print,
            used: Mutex::new(Used {
                upstream: upstream.to_string(),
                status: None,
                tokens: Tokens::default(),
            }),
            done: AtomicBool::new(false),
            orphaned: AtomicBool::new(false),
            late: AtomicBool::new(false),
        }
    }

    /// What the request was answered: the status (`None`: no answer came) and the tokens.
    pub(crate) fn answered(&self, status: Option<u16>, tokens: Tokens) {
        if let Ok(mut used) = self.used.lock() {
            used.status = status;
            used.tokens = tokens;
        }
        if status.is_some() && self.orphaned.load(Ordering::SeqCst) {
            self.late.store(true, Ordering::SeqCst);
        }
        self.done.store(true, Ordering::SeqCst);
    }

    /// Its answer, once one came: the status, the tokens, and whether it came after its call
    /// ended.
    pub(crate) fn answer(&self) -> Option<(u16, Tokens, bool)> {
        let used = self.used()?;
        let status = used.status.filter(|_| self.done())?;
        Some((status, used.tokens, self.late.load(Ordering::SeqCst)))
    }

    pub(crate) fn done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }

    pub(crate) fn used(&self) -> Option<Used> {
        self.used.lock().ok().map(|u| u.clone())
    }
}

/// A request whose answer had not come when its call ended: what it is answered, once it is
/// (a late answer is paid for all the same, and written as a receipt line of its own).
#[derive(Clone)]
pub struct Waiting(pub(crate) Arc<Charge>);

impl Waiting {
    /// Its answer, once one came: `None` while none has (or none ever came).
    pub fn answered(&self) -> Option<Used> {
        self.0.answer()?;
        self.0.used()
    }
}

impl std::fmt::Debug for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Waiting").field(&self.0.used()).finish()
    }
}

/// What a request was made for: the call it came in, as the run names its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Purpose {
    /// An example's call on a pass (the measured calls, in a measured run).
    Examples(Pass),
    /// Explore's cases, on either pass.
    Explore,
    /// The fault trials' calls.
    Faults,
    /// No call: the server's start, or a call that had ended.
    Outside,
}

impl Purpose {
    /// How a report names it.
    pub fn describe(self) -> &'static str {
        match self {
            Purpose::Examples(Pass::Function) => "the function pass's examples",
            Purpose::Examples(Pass::Mcp) => "the MCP pass's examples",
            Purpose::Explore => "explore",
            Purpose::Faults => "the fault trials",
            Purpose::Outside => "outside any call",
        }
    }
}

/// What some requests came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// Requests made.
    pub requests: usize,
    /// Requests answered (with any status).
    pub answered: usize,
    /// Of those, answered after their call had ended (the agent gave up on them, and they
    /// are paid for all the same).
    pub late: usize,
    /// Answers whose tokens are not known (a stream without usage).
    pub unknown: usize,
    /// Input tokens of the answers that say.
    pub input: u64,
    /// Output tokens of the answers that say.
    pub output: u64,
}

impl Count {
    /// A request counted with no answer, answered after its call ended with `tokens`: a late
    /// answer a receipt line of its own reports.
    pub fn answered_late(&mut self, tokens: Tokens) {
        self.answered += 1;
        self.late += 1;
        match (tokens.input, tokens.output) {
            (Some(input), Some(output)) => {
                self.input += input;
                self.output += output;
            }
            _ => self.unknown += 1,
        }
    }

    /// Counts one request and its answer: the status, the tokens, and whether it came after its
    /// call ended; `None` when no answer came.
    pub fn add(&mut self, answer: Option<(u16, Tokens, bool)>) {
        self.requests += 1;
        let Some((_, tokens, late)) = answer else {
            return;
        };
        self.answered += 1;
        self.late += usize::from(late);
        match (tokens.input, tokens.output) {
            (Some(input), Some(output)) => {
                self.input += input;
                self.output += output;
            }
            _ => self.unknown += 1,
        }
    }
}

/// What one upstream's requests came to, by what they were for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spend {
    /// By purpose.
    pub by: BTreeMap<Purpose, Count>,
    /// All of them.
    pub total: Count,
}

/// One request, as the ledger keeps it.
struct Entry {
    upstream: String,
    purpose: Purpose,
    /// Whether it went to the real service (a live or record run's own request, not one a
    /// recording or a recorded answer shared between passes answered).
    real: bool,
    charge: Arc<Charge>,
}

/// Every request of a run, and the real ones still open.
#[derive(Default)]
pub(crate) struct Ledger {
    entries: Mutex<Vec<Entry>>,
    open: AtomicUsize,
    closed: tokio::sync::Notify,
}

impl Ledger {
    /// Enters a request to `upstream` made for `purpose`, its answer to come on `charge`.
    pub(crate) fn enter(&self, upstream: &str, purpose: Purpose, real: bool, charge: Arc<Charge>) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.push(Entry {
                upstream: upstream.to_string(),
                purpose,
                real,
                charge,
            });
        }
    }

    /// A real request is open until the guard is dropped.
    pub(crate) fn open(self: &Arc<Self>) -> Open {
        self.open.fetch_add(1, Ordering::SeqCst);
        Open(self.clone())
    }

    /// Waits, at most `limit`, for the real requests still open.
    pub(crate) async fn settle(&self, limit: Duration) {
        let wait = async {
            loop {
                let closed = self.closed.notified();
                tokio::pin!(closed);
                closed.as_mut().enable();
                if self.open.load(Ordering::SeqCst) == 0 {
                    return;
                }
                closed.await;
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
    }

    /// What each upstream's requests came to, `real` ones only when asked (what the run paid
    /// for), else every request as the agent made it (replay's, priced from the recordings).
    pub(crate) fn spend(&self, real: bool) -> BTreeMap<String, Spend> {
        let mut out: BTreeMap<String, Spend> = BTreeMap::new();
        let Ok(entries) = self.entries.lock() else {
            return out;
        };
        for entry in entries.iter().filter(|e| e.real || !real) {
            let answer = entry.charge.answer();
            let spend = out.entry(entry.upstream.clone()).or_default();
            spend.by.entry(entry.purpose).or_default().add(answer);
            spend.total.add(answer);
        }
        out
    }
}

/// A real request open: the ledger waits for it at the end of the run.
pub(crate) struct Open(Arc<Ledger>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.closed.notify_waiters();
    }
}
