//! Which call in flight a request is, by its content, so that a pass's calls need not go one
//! at a time for their upstream requests to be told apart:
//!
//! - **replay**: the call whose example's recording holds the request (its body matched as
//!   matching matches it). Calls that could not be told apart where it matters never fly
//!   together ([`may_join`]): a request two of them could make answered two ways, or one a
//!   fault is planted on. Among calls the request could be, the one that made it least (so
//!   two calls of one example each get their own turn at its recorded answers). A request no
//!   recording holds is charged to the call whose input it carries, else to the call whose
//!   recording holds the closest request.
//! - **live**: the call whose input the request carries (the agent puts the ticket in its
//!   prompt); among calls of one example, which cannot be told apart by content, the one with
//!   the fewest requests so far.
//! - **record** (and a live run that blesses): one call at a time, the pass's turn.
//!
//! One call in flight is always its own answer, as it was when every call went alone.

use std::sync::Arc;

use crate::call::{Call, ProxyState};
use crate::index::{Print, request_print};
use crate::ledger::Charge;
use crate::matching;
use crate::mode::Mode;
use crate::recording::{Body, Request, Scope};
use holon_core::gateway::Pass;

/// A request as charged to its call: the call, the charge its answer is recorded on, and how
/// many times the call made that request before.
pub(crate) struct Claimed {
    pub(crate) call: Arc<Call>,
    pub(crate) charge: Option<Arc<Charge>>,
    pub(crate) occurrence: usize,
}

/// The call in flight on `pass` that `request` to `upstream` belongs to, the request put on
/// its list; `None` when none is in flight, or (replay) the request is recorded for no call in
/// flight but for another scope, which answers it: nothing is charged to a call it may not be.
/// The choice and the charge are made under the pass's lock: two requests that come together
/// are dealt to two calls of one example, not both to the one that had made the fewest.
pub(crate) fn claim(
    state: &ProxyState,
    pass: Pass,
    upstream: &str,
    request: &Request,
) -> Option<Claimed> {
    let current = state.current.get(pass).lock().ok()?;
    let call = match current.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        calls => match state.mode {
            Mode::Replay => by_recording(state, calls, upstream, request),
            Mode::Live | Mode::Record => by_input(calls, request),
        },
    }?;
    let charge = call.request_to(upstream, request_print(upstream, request));
    let occurrence = match call.scope {
        Scope::Example(_) => call.occurrence(request),
        _ => 0,
    };
    drop(current);
    Some(Claimed {
        call,
        charge,
        occurrence,
    })
}

/// Whether `call` may fly with `others` under replay: no request either could make is one that
/// would be answered differently depending on whose it is.
pub(crate) fn may_join(state: &ProxyState, call: &Call, others: &[Arc<Call>]) -> bool {
    let planted_on = |c: &Call| {
        (c.plant.as_ref()).map(|p| (request_print(&p.upstream, &p.request), p.upstream.clone()))
    };
    let mine = planted_on(call);
    others.iter().all(|other| {
        let theirs = planted_on(other);
        let planted = |plant: &Option<(Print, String)>, scope: &Scope| {
            plant
                .as_ref()
                .is_some_and(|(print, _)| state.index.records(scope, *print))
        };
        !planted(&mine, &other.scope)
            && !planted(&theirs, &call.scope)
            && !state.index.confusable(&call.scope, &other.scope)
    })
}

/// Replay: the call whose recording holds the request, the one that made it least first; a
/// request recorded only for a scope not in flight is nobody's; one recorded nowhere is the
/// call's whose recording holds the closest request.
fn by_recording(
    state: &ProxyState,
    calls: &[Arc<Call>],
    upstream: &str,
    request: &Request,
) -> Option<Arc<Call>> {
    let print = request_print(upstream, request);
    let mine = (calls.iter().enumerate())
        .filter(|(_, c)| state.index.records(&c.scope, print))
        .min_by_key(|(at, c)| (c.made(request), *at))
        .map(|(_, c)| c.clone());
    if mine.is_some() || state.index.anywhere(print) {
        return mine;
    }
    // Recorded nowhere (a prompt changed since the recording): the call whose input the
    // request carries, as a live run tells them, so that each example's own trial reports its
    // own stale request; only a request that carries no call's input goes by the closest one.
    if let Some(carrier) = carrier(calls, request) {
        return Some(carrier);
    }
    // Calls of one example carry its input alike (its trials in two eras, its runs under
    // `--repeat`): each gets its own turn, so each trial reports its own stale request and none
    // is judged on an answer to a request no recording holds.
    let scored = carried(calls, request);
    let best = scored.iter().map(|(s, _)| *s).max().unwrap_or(0);
    let alike: Vec<&Arc<Call>> = (scored.iter())
        .filter(|(s, _)| *s == best && best > 0)
        .map(|(_, c)| *c)
        .collect();
    if alike
        .first()
        .is_some_and(|first| alike.iter().all(|c| c.scope == first.scope))
    {
        return least_made(alike.into_iter(), request);
    }
    let recorded = calls.iter().flat_map(|c| {
        let at = state.index.recording_of(&c.scope);
        let exchanges = at
            .and_then(|at| state.recorded.get(at))
            .map(|read| read.recording.exchanges.as_slice())
            .unwrap_or_default();
        (exchanges.iter().enumerate()).map(move |(i, x)| (&c.scope, i, x))
    });
    let closest = matching::closest(request, upstream, &Scope::Startup, recorded);
    match closest {
        Some(found) => least_made(calls.iter().filter(|c| c.scope == *found.scope), request),
        None => calls.first().cloned(),
    }
}

/// Among `calls` (of one example), the one that made `request` least, then the one with the
/// fewest requests, then the first entered.
fn least_made<'a>(
    calls: impl Iterator<Item = &'a Arc<Call>>,
    request: &Request,
) -> Option<Arc<Call>> {
    (calls.enumerate())
        .min_by_key(|(at, c)| (c.made(request), c.requests(), *at))
        .map(|(_, c)| c.clone())
}

/// Live: the call whose input the request carries most of (the longest strings of its input
/// found in the request's body); among those alike, the one with the fewest requests so far,
/// then the first entered.
fn by_input(calls: &[Arc<Call>], request: &Request) -> Option<Arc<Call>> {
    let scored = carried(calls, request);
    let best = scored.iter().map(|(s, _)| *s).max().unwrap_or(0);
    (scored.iter().enumerate())
        .filter(|(_, (s, _))| *s == best)
        .min_by_key(|(at, (_, c))| (c.requests(), *at))
        .map(|(_, (_, c))| (*c).clone())
}

/// The one call whose input the request carries more of than any other's; `None` when it
/// carries none, or two carry as much.
fn carrier(calls: &[Arc<Call>], request: &Request) -> Option<Arc<Call>> {
    let mut scored = carried(calls, request);
    scored.sort_by_key(|s| std::cmp::Reverse(s.0));
    match scored.as_slice() {
        [(best, call), rest @ ..] if *best > 0 && rest.first().is_none_or(|(n, _)| n < best) => {
            Some((*call).clone())
        }
        _ => None,
    }
}

/// How much of each call's input the request carries: the length of the strings of the input
/// found in the request's body.
fn carried<'a>(calls: &'a [Arc<Call>], request: &Request) -> Vec<(usize, &'a Arc<Call>)> {
    let texts = strings(&request.body);
    let score = |call: &Call| -> usize {
        (call.needles.iter())
            .filter(|needle| texts.iter().any(|t| t.contains(needle.as_str())))
            .map(String::len)
            .sum()
    };
    calls.iter().map(|c| (score(c), c)).collect()
}

/// The strings of a request's body: a JSON body's string values, or its text.
fn strings(body: &Body) -> Vec<String> {
    match body {
        Body::Json(value) => {
            let mut out = Vec::new();
            let mut stack = vec![value];
            while let Some(v) = stack.pop() {
                match v {
                    serde_json::Value::String(s) => out.push(s.clone()),
                    serde_json::Value::Array(items) => stack.extend(items),
                    serde_json::Value::Object(map) => stack.extend(map.values()),
                    _ => {}
                }
            }
            out
        }
        Body::Text(text) => vec![text.clone()],
        Body::Sse(events) => events.iter().map(|e| e.data.to_string()).collect(),
        Body::Empty | Body::Binary(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chat(ticket: &str) -> Request {
        Request {
            method: "POST".into(),
            path: "/chat/completions".into(),
            query: vec![],
            content_type: Some("application/json".into()),
            body: Body::Json(json!({"messages": [
                {"role": "system", "content": "You triage support tickets."},
                {"role": "user", "content": ticket},
            ]})),
        }
    }

    fn call(name: &str, ticket: &str) -> Arc<Call> {
        Arc::new(Call::new(
            Scope::Example(name.into()),
            &[json!({"ticket": ticket})],
            None,
        ))
    }

    #[test]
    fn a_live_request_is_the_call_whose_input_it_carries() {
        let calls = [
            call("a", "The dashboard is down"),
            call("b", "How do I change my email?"),
        ];
        let chosen = by_input(&calls, &chat("How do I change my email?")).expect("a call");
        assert_eq!(chosen.scope, Scope::Example("b".into()));
        let chosen = by_input(&calls, &chat("The dashboard is down")).expect("a call");
        assert_eq!(chosen.scope, Scope::Example("a".into()));
    }

    #[test]
    fn calls_of_one_example_share_its_requests_in_turn() {
        let calls = [call("a", "down"), call("a", "down"), call("b", "up?")];
        let first = by_input(&calls, &chat("down")).expect("a call");
        assert!(Arc::ptr_eq(&first, &calls[0]));
        first.request_to("model", 0);
        let second = by_input(&calls, &chat("down")).expect("a call");
        assert!(
            Arc::ptr_eq(&second, &calls[1]),
            "the one with no request yet"
        );
        // A request that carries no call's input goes to the call with the fewest so far.
        second.request_to("model", 0);
        let other = by_input(&calls, &chat("a question nobody asked")).expect("a call");
        assert!(Arc::ptr_eq(&other, &calls[2]));
    }
}
