//! Shrinking a failing input: smaller candidates first (a property left out, a string or an
//! array halved, a number moved toward zero), kept when the gate admits them and the agent
//! still fails with the same status. Bounded in time, and in how many calls may time out.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::judge::Outcome;
use holon_core::gateway::Status;

/// The most time shrinking may take.
pub const TIME: Duration = Duration::from_secs(30);
/// The most re-runs that may end in `timeout` (each costs `timeout_s`).
pub const TIMEOUTS: usize = 3;
/// Strings and arrays up to this length are also tried one element shorter at each place.
const ONE_BY_ONE: usize = 24;

/// The smallest failing input found, its outcome, and how many steps got there.
pub struct Shrunk {
    /// The smallest input that still fails the same way.
    pub input: Value,
    /// How it failed.
    pub outcome: Outcome,
    /// Candidates kept.
    pub steps: usize,
    /// Why shrinking stopped early, if it did.
    pub cut_short: Option<String>,
}

/// Shrinks `input`, which failed with `outcome`. `admit` is the gateway's gate; `run` calls
/// the agent (`None` when the input cannot be judged: its upstream had no recording).
pub fn shrink(
    input: Value,
    outcome: Outcome,
    admit: impl Fn(&Value) -> bool,
    mut run: impl FnMut(&Value) -> Option<Outcome>,
) -> Shrunk {
    let started = Instant::now();
    let status = outcome.status.clone();
    let mut best = Shrunk {
        input,
        outcome,
        steps: 0,
        cut_short: None,
    };
    if status == Status::RuntimeUnavailable {
        best.cut_short = Some("the server cannot be reached".into());
        return best;
    }
    let mut timeouts = 0;
    'outer: loop {
        for candidate in smaller(&best.input) {
            if started.elapsed() > TIME {
                best.cut_short = Some(format!("stopped after {} s", TIME.as_secs()));
                break 'outer;
            }
            if !admit(&candidate) {
                continue;
            }
            let Some(tried) = run(&candidate) else {
                continue;
            };
            if tried.status == Status::Timeout {
                timeouts += 1;
            }
            if tried.defect.is_some() && tried.status == status {
                best.input = candidate;
                best.outcome = tried;
                best.steps += 1;
                continue 'outer;
            }
            if timeouts >= TIMEOUTS {
                best.cut_short = Some(format!("stopped after {TIMEOUTS} calls that timed out"));
                break 'outer;
            }
        }
        break;
    }
    best
}

/// Candidates one step smaller than `v`, the boldest first.
pub fn smaller(v: &Value) -> Vec<Value> {
    match v {
        Value::Bool(true) => vec![Value::Bool(false)],
        Value::Number(n) => smaller_number(n),
        Value::String(s) => smaller_string(s),
        Value::Array(items) => smaller_array(items),
        Value::Object(map) => smaller_object(map),
        Value::Null | Value::Bool(false) => Vec::new(),
    }
}

/// Zero, half, and one step towards zero (an integer), or zero, the integer part and half (a
/// float).
fn smaller_number(n: &serde_json::Number) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(i) = n.as_i64() {
        for c in [0, i / 2, i - i.signum()] {
            if c != i && !out.contains(&Value::from(c)) {
                out.push(Value::from(c));
            }
        }
    } else if let Some(f) = n.as_f64() {
        for c in [0.0, f.trunc(), f / 2.0] {
            if c != f
                && let Some(c) = crate::schema::number_value(c)
                && !out.contains(&c)
            {
                out.push(c);
            }
        }
    }
    out
}

/// Empty, each half, three quarters; for short strings, each character removed, then each
/// replaced by `a`.
fn smaller_string(s: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    if n > 0 {
        out.push(Value::String(String::new()));
    }
    if n > 1 {
        let (head, tail) = chars.split_at(n / 2);
        out.push(Value::String(head.iter().collect()));
        out.push(Value::String(tail.iter().collect()));
        out.push(Value::String(chars.iter().take(n - n / 4).collect()));
    }
    if n <= ONE_BY_ONE {
        for i in 0..n {
            let mut fewer = chars.clone();
            fewer.remove(i);
            out.push(Value::String(fewer.into_iter().collect()));
        }
        for (i, &c) in chars.iter().enumerate() {
            if c != 'a' {
                let plain = chars
                    .iter()
                    .enumerate()
                    .map(|(j, &c)| if j == i { 'a' } else { c });
                out.push(Value::String(plain.collect()));
            }
        }
    }
    out
}

/// Empty, each half, each item removed (short arrays), then each of the first items smaller.
fn smaller_array(items: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    let n = items.len();
    if n > 0 {
        out.push(Value::Array(Vec::new()));
    }
    if n > 1 {
        let (head, tail) = items.split_at(n / 2);
        out.push(Value::Array(head.to_vec()));
        out.push(Value::Array(tail.to_vec()));
    }
    if n <= ONE_BY_ONE {
        for i in 0..n {
            let mut fewer = items.to_vec();
            fewer.remove(i);
            out.push(Value::Array(fewer));
        }
    }
    for (i, item) in items.iter().enumerate().take(ONE_BY_ONE) {
        for c in smaller(item) {
            let mut one = items.to_vec();
            if let Some(slot) = one.get_mut(i) {
                *slot = c;
            }
            out.push(Value::Array(one));
        }
    }
    out
}

/// Each property removed, then each property's value smaller.
fn smaller_object(map: &serde_json::Map<String, Value>) -> Vec<Value> {
    let mut out = Vec::new();
    for key in map.keys() {
        let mut fewer = map.clone();
        fewer.remove(key);
        out.push(Value::Object(fewer));
    }
    for (key, value) in map {
        for c in smaller(value) {
            let mut one = map.clone();
            one.insert(key.clone(), c);
            out.push(Value::Object(one));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outcome(status: Status, defect: bool) -> Outcome {
        Outcome {
            status,
            defect: defect.then(|| "defect".to_string()),
            answered: Vec::new(),
        }
    }

    #[test]
    fn shrinks_to_the_smallest_failing_input_the_gate_admits() {
        // Fails when the text holds a line break and `top` is at least 3; the gate wants `text`.
        let fails = |v: &Value| {
            let text = v["text"].as_str().unwrap_or_default();
            let top = v.get("top").and_then(Value::as_i64).unwrap_or(0);
            text.contains('\n') && top >= 3
        };
        let start = json!({"text": "some words\nand more words", "top": 40, "extra": [1, 2, 3]});
        let shrunk = shrink(
            start,
            outcome(Status::AgentCrashed, true),
            |v| v.get("text").is_some_and(Value::is_string),
            |v| Some(outcome(Status::AgentCrashed, fails(v))),
        );
        assert_eq!(shrunk.input, json!({"text": "\n", "top": 3}));
        assert!(shrunk.cut_short.is_none());
    }

    #[test]
    fn keeps_to_the_same_status() {
        // Smaller inputs fail too, but with another status: they are not the same defect.
        let shrunk = shrink(
            json!({"n": 8}),
            outcome(Status::Timeout, true),
            |_| true,
            |v| {
                Some(if v["n"].as_i64().unwrap_or(0) >= 5 {
                    outcome(Status::Timeout, true)
                } else {
                    outcome(Status::AgentCrashed, true)
                })
            },
        );
        assert_eq!(shrunk.input, json!({"n": 5}));
    }

    #[test]
    fn never_keeps_an_input_it_cannot_judge() {
        // Every smaller input's upstream had no recording: the input stays as it was found.
        let shrunk = shrink(
            json!({"text": "a long text"}),
            outcome(Status::AgentCrashed, true),
            |_| true,
            |_| None,
        );
        assert_eq!(shrunk.input, json!({"text": "a long text"}));
    }

    #[test]
    fn stops_after_a_few_calls_that_time_out() {
        let mut calls = 0;
        let shrunk = shrink(
            json!({"text": "a long text that crashed once"}),
            outcome(Status::AgentCrashed, true),
            |_| true,
            |_| {
                calls += 1;
                Some(outcome(Status::Timeout, true))
            },
        );
        assert_eq!(calls, TIMEOUTS);
        assert!(shrunk.cut_short.unwrap().contains("timed out"));
    }
}
