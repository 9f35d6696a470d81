//! The recordings indexed by content, so that a replayed request is known by what it says
//! rather than by the one call in flight: each recorded request's print (its upstream, method,
//! path, query and body, a JSON body in canonical form), the scopes that record it, and what
//! each answered. From it, whether two calls may be in flight together on one pass: they may
//! when no request either can make would be answered differently depending on whose it is.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use serde_json::Value;

use crate::recording::{Body, Read, Request, Response, Scope};

/// A request's print: equal for two requests `matching::same` holds equal (a JSON body in
/// canonical form, so key order, layout and `1` against `1.0` do not matter), and for very few
/// others (a hash).
pub(crate) type Print = u64;

/// What a run's recordings say, by request.
#[derive(Default)]
pub(crate) struct Index {
    /// For each scope, the recording (its place in the run's list) and its requests' prints.
    scopes: HashMap<Scope, (usize, HashSet<Print>)>,
    /// For each print, the answers recorded for it, by scope (each answer's print).
    answers: HashMap<Print, HashMap<Scope, HashSet<Print>>>,
}

impl Index {
    /// The index of `recorded`.
    pub(crate) fn new(recorded: &[Read]) -> Index {
        let mut index = Index::default();
        for (at, read) in recorded.iter().enumerate() {
            let scope = &read.recording.scope;
            let mut prints = HashSet::new();
            for exchange in &read.recording.exchanges {
                let print = request_print(&exchange.upstream, &exchange.request);
                prints.insert(print);
                index
                    .answers
                    .entry(print)
                    .or_default()
                    .entry(scope.clone())
                    .or_default()
                    .insert(response_print(&exchange.response));
            }
            index.scopes.insert(scope.clone(), (at, prints));
        }
        index
    }

    /// Where the recording of `scope` is in the run's list, when there is one.
    pub(crate) fn recording_of(&self, scope: &Scope) -> Option<usize> {
        self.scopes.get(scope).map(|(at, _)| *at)
    }

    /// Whether `scope` records a request with this print.
    pub(crate) fn records(&self, scope: &Scope, print: Print) -> bool {
        (self.scopes.get(scope)).is_some_and(|(_, prints)| prints.contains(&print))
    }

    /// Whether any recording holds a request with this print.
    pub(crate) fn anywhere(&self, print: Print) -> bool {
        self.answers.contains_key(&print)
    }

    /// Whether a call of `a` and a call of `b` could not be told apart where it matters: some
    /// request both could make was recorded with more than one answer between them (two calls
    /// of one scope: within it), so which answer a request gets would depend on whose it is.
    pub(crate) fn confusable(&self, a: &Scope, b: &Scope) -> bool {
        let (Some((_, pa)), Some((_, pb))) = (self.scopes.get(a), self.scopes.get(b)) else {
            return false;
        };
        let (small, large) = if pa.len() <= pb.len() {
            (pa, pb)
        } else {
            (pb, pa)
        };
        small.iter().filter(|p| large.contains(p)).any(|print| {
            let Some(by_scope) = self.answers.get(print) else {
                return false;
            };
            let mut distinct: HashSet<&Print> = HashSet::new();
            for scope in [a, b] {
                distinct.extend(by_scope.get(scope).into_iter().flatten());
            }
            distinct.len() > 1
        })
    }
}

/// The print of a request to `upstream`.
pub(crate) fn request_print(upstream: &str, request: &Request) -> Print {
    let mut hasher = DefaultHasher::new();
    upstream.hash(&mut hasher);
    request.method.to_ascii_uppercase().hash(&mut hasher);
    request.path.hash(&mut hasher);
    let mut query = request.query.clone();
    query.sort();
    query.hash(&mut hasher);
    body_print(&request.body).hash(&mut hasher);
    hasher.finish()
}

/// The print of an answer: its status, content type and bytes.
fn response_print(response: &Response) -> Print {
    let mut hasher = DefaultHasher::new();
    response.status.hash(&mut hasher);
    response.content_type.hash(&mut hasher);
    response.body.bytes().hash(&mut hasher);
    hasher.finish()
}

/// A body as matching compares it: JSON in canonical form (a JSON text sent as plain text
/// too), anything else as its bytes.
fn body_print(body: &Body) -> String {
    let json = match body {
        Body::Json(value) => Some(value.clone()),
        Body::Text(text) => serde_json::from_str::<Value>(text).ok(),
        _ => None,
    };
    match json {
        Some(value) => format!("json:{}", holon_core::json::canonical(&value)),
        None => format!("bytes:{:?}", body.bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::{Exchange, Recording};
    use serde_json::json;

    fn exchange(ticket: &str, answer: &str) -> Exchange {
        Exchange {
            upstream: "model".into(),
            request: Request {
                method: "POST".into(),
                path: "/chat/completions".into(),
                query: vec![],
                content_type: Some("application/json".into()),
                body: Body::Json(json!({"model": "m", "n": 1, "messages": [ticket]})),
            },
            response: Response {
                status: 200,
                content_type: Some("application/json".into()),
                body: Body::Json(json!({"answer": answer})),
            },
        }
    }

    fn read(scope: &str, exchanges: Vec<Exchange>) -> Read {
        Read {
            path: format!("{scope}.json").into(),
            recording: Recording {
                scope: Scope::Example(scope.into()),
                seed: None,
                exchanges,
            },
        }
    }

    #[test]
    fn the_print_is_the_matching_of_json_bodies() {
        let a = exchange("hi", "x").request;
        let mut b = a.clone();
        b.body = Body::Text("{\"messages\": [\"hi\"], \"n\": 1.0, \"model\": \"m\"}".into());
        b.method = "post".into();
        assert_eq!(request_print("model", &a), request_print("model", &b));
        assert!(crate::matching::same(&a, &b));
        assert_ne!(request_print("model", &a), request_print("other", &a));
        let c = exchange("ho", "x").request;
        assert_ne!(request_print("model", &a), request_print("model", &c));
    }

    #[test]
    fn calls_are_confusable_only_where_a_shared_request_has_two_answers() {
        let index = Index::new(&[
            read("a", vec![exchange("one", "x")]),
            read("b", vec![exchange("two", "y")]),
            // The same request as `a`'s, answered the same: whoever made it, the answer holds.
            read("c", vec![exchange("one", "x")]),
            // The same request as `a`'s, answered otherwise.
            read("d", vec![exchange("one", "z")]),
            // A poll: one request, answered two ways in turn.
            read(
                "e",
                vec![exchange("job", "pending"), exchange("job", "done")],
            ),
        ]);
        let s = |name: &str| Scope::Example(name.into());
        assert!(!index.confusable(&s("a"), &s("b")));
        assert!(!index.confusable(&s("a"), &s("c")));
        assert!(
            !index.confusable(&s("a"), &s("a")),
            "two calls of one example"
        );
        assert!(index.confusable(&s("a"), &s("d")));
        assert!(
            index.confusable(&s("e"), &s("e")),
            "two polls of one example"
        );
        assert!(!index.confusable(&s("e"), &s("a")));
        assert!(!index.confusable(&s("a"), &s("nothing recorded")));
        let one = request_print("model", &exchange("one", "").request);
        assert!(index.records(&s("c"), one) && !index.records(&s("b"), one));
        assert!(index.anywhere(one));
        assert_eq!(index.recording_of(&s("b")), Some(1));
    }
}
