//! How a request an agent sends is matched with a recorded one: by method, path, query and
//! body, a JSON body compared as JSON (key order and whitespace do not matter), credentials and
//! secrets out of the picture (`scrub` replaced them before). When nothing matches, the closest
//! recorded request and the first place where it differs, for the report.

use serde_json::Value;

use crate::recording::{Body, Exchange, Request, Scope};
use holon_core::json::{equal, first_difference};

/// Whether two requests are the same for replay.
pub fn same(a: &Request, b: &Request) -> bool {
    a.method.eq_ignore_ascii_case(&b.method)
        && a.path == b.path
        && same_query(&a.query, &b.query)
        && same_body(&a.body, &b.body)
}

fn same_query(a: &[(String, String)], b: &[(String, String)]) -> bool {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort();
    b.sort();
    a == b
}

fn same_body(a: &Body, b: &Body) -> bool {
    match (a, b) {
        (Body::Json(x), Body::Json(y)) => equal(x, y),
        // A JSON body sent without a JSON content type, recorded with one (or the reverse).
        (Body::Json(x), Body::Text(t)) | (Body::Text(t), Body::Json(x)) => {
            serde_json::from_str::<Value>(t).is_ok_and(|y| equal(x, &y))
        }
        _ => a == b,
    }
}

/// The recorded exchange closest to a request none matched, and where it differs.
pub struct Closest<'a> {
    /// What it was recorded for.
    pub scope: &'a Scope,
    /// Its place in its file, from 0.
    pub index: usize,
    /// The first difference, in words.
    pub difference: String,
}

/// The recorded request of `upstream` closest to `request`, preferring `scope`'s own.
pub fn closest<'a>(
    request: &Request,
    upstream: &str,
    scope: &Scope,
    recorded: impl Iterator<Item = (&'a Scope, usize, &'a Exchange)>,
) -> Option<Closest<'a>> {
    let mut best: Option<((u8, usize), Closest<'a>)> = None;
    for (s, index, exchange) in recorded {
        if exchange.upstream != upstream {
            continue;
        }
        let theirs = &exchange.request;
        let (rank, difference) = if !theirs.method.eq_ignore_ascii_case(&request.method) {
            (
                4,
                format!(
                    "in its method: recorded `{}`, now `{}`",
                    theirs.method, request.method
                ),
            )
        } else if theirs.path != request.path {
            (
                3,
                format!(
                    "in its path: recorded `{}`, now `{}`",
                    theirs.path, request.path
                ),
            )
        } else if !same_query(&theirs.query, &request.query) {
            (
                2,
                format!(
                    "in its query: recorded `{}`, now `{}`",
                    query(&theirs.query),
                    query(&request.query)
                ),
            )
        } else {
            (1, body_difference(&theirs.body, &request.body))
        };
        let distance = match (&theirs.body, &request.body) {
            (Body::Json(a), Body::Json(b)) => differences(a, b),
            _ => usize::from(theirs.body != request.body),
        };
        let own = u8::from(s != scope);
        let key = (rank * 2 + own, distance);
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((
                key,
                Closest {
                    scope: s,
                    index,
                    difference,
                },
            ));
        }
    }
    best.map(|(_, c)| c)
}

fn query(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

fn body_difference(recorded: &Body, now: &Body) -> String {
    match (recorded, now) {
        (Body::Json(a), Body::Json(b)) => match first_difference(a, b) {
            Some((at, Some(Value::String(x)), Some(Value::String(y)))) => {
                let (x, y) = around_difference(x, y);
                format!(
                    "at `{}` of its body:\n    recorded: {x}\n    now:      {y}",
                    if at.is_empty() { "/" } else { &at },
                )
            }
            Some((at, x, y)) => format!(
                "at `{}` of its body:\n    recorded: {}\n    now:      {}",
                if at.is_empty() { "/" } else { &at },
                shown(x),
                shown(y)
            ),
            None => "in its body".into(),
        },
        _ => "in its body".into(),
    }
}

/// Two strings around where they first differ: a few characters before, some after, quoted.
fn around_difference(a: &str, b: &str) -> (String, String) {
    let first = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let window = |s: &str| {
        let start = first.saturating_sub(24);
        let cut: String = s.chars().skip(start).take(72).collect();
        let before = if start > 0 { "..." } else { "" };
        let after = if s.chars().count() > start + 72 {
            "..."
        } else {
            ""
        };
        format!("\"{before}{}{after}\"", cut.escape_debug())
    };
    (window(a), window(b))
}

fn shown(v: Option<&Value>) -> String {
    match v {
        None => "(nothing)".into(),
        Some(v) => holon_core::message::short(v),
    }
}

/// How many leaves differ between two JSON values (a rough distance).
fn differences(a: &Value, b: &Value) -> usize {
    let mut count = 0;
    let mut stack = vec![(Some(a), Some(b))];
    while let Some(pair) = stack.pop() {
        match pair {
            (Some(Value::Object(p)), Some(Value::Object(q))) => {
                for k in p.keys().chain(q.keys().filter(|k| !p.contains_key(*k))) {
                    stack.push((p.get(k), q.get(k)));
                }
            }
            (Some(Value::Array(p)), Some(Value::Array(q))) => {
                for i in 0..p.len().max(q.len()) {
                    stack.push((p.get(i), q.get(i)));
                }
            }
            (Some(x), Some(y)) if equal(x, y) => {}
            _ => count += 1,
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(body: Value) -> Request {
        Request {
            method: "POST".into(),
            path: "/chat/completions".into(),
            query: vec![],
            content_type: Some("application/json".into()),
            body: Body::Json(body),
        }
    }

    #[test]
    fn json_bodies_match_as_json() {
        let a = request(json!({"model": "m", "n": 1, "messages": ["hi"]}));
        let b = request(json!({"messages": ["hi"], "n": 1.0, "model": "m"}));
        assert!(same(&a, &b));
        assert!(!same(
            &a,
            &request(json!({"model": "m", "n": 2, "messages": ["hi"]}))
        ));
    }

    #[test]
    fn the_closest_request_says_where_it_differs() {
        let recorded = Exchange {
            upstream: "model".into(),
            request: request(json!({"messages": [{"content": "Summarize"}]})),
            response: crate::recording::Response {
                status: 200,
                content_type: None,
                body: Body::Empty,
            },
        };
        let scope = Scope::Example("x".into());
        let now = request(json!({"messages": [{"content": "Summarise"}]}));
        let found = closest(
            &now,
            "model",
            &scope,
            std::iter::once((&scope, 0, &recorded)),
        )
        .expect("one recorded");
        assert!(
            found.difference.contains("`/messages/0/content`"),
            "{}",
            found.difference
        );
        assert!(
            found.difference.contains("\"Summarize\""),
            "{}",
            found.difference
        );
    }
}
