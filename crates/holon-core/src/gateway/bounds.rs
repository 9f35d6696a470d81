//! The platform's payload bounds, checked without recursion before anything recursive runs.

use crate::ids::{self, Id};
use serde_json::Value;

/// Deepest nesting of arrays and objects in one payload.
pub const MAX_DEPTH: usize = 64;
/// Most values (containers and scalars, the root included) in one payload.
pub const MAX_VALUES: usize = 200_000;
/// Longest array in one payload.
pub const MAX_ARRAY_LEN: usize = 10_000;

/// A payload bound that was broken, with the RFC 6901 pointer (inside the payload) where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoundError {
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("is nested deeper than {MAX_DEPTH} levels")]
    TooDeep {
        /// Where the 65th level starts.
        pointer: String,
    },
    /// More than [`MAX_VALUES`] values.
    #[error("holds more than {MAX_VALUES} values")]
    TooManyValues {
        /// Where the value past the limit is.
        pointer: String,
    },
    /// An array longer than [`MAX_ARRAY_LEN`].
    #[error("holds an array of {len} items, more than {MAX_ARRAY_LEN}")]
    ArrayTooLong {
        /// Where the array is.
        pointer: String,
        /// Its length.
        len: usize,
    },
}

impl BoundError {
    /// The stable check id for the bound.
    pub fn check_id(&self) -> Id {
        match self {
            BoundError::TooDeep { .. } => ids::PAYLOAD_TOO_DEEP,
            BoundError::TooManyValues { .. } => ids::PAYLOAD_TOO_MANY_VALUES,
            BoundError::ArrayTooLong { .. } => ids::PAYLOAD_ARRAY_TOO_LONG,
        }
    }

    /// The pointer inside the payload.
    pub fn pointer(&self) -> &str {
        match self {
            BoundError::TooDeep { pointer }
            | BoundError::TooManyValues { pointer }
            | BoundError::ArrayTooLong { pointer, .. } => pointer,
        }
    }
}

/// Checks the three bounds on a payload, with an explicit stack: a hostile payload cannot
/// overflow ours. Nothing is allocated but the stack: the pointer is written only for an error,
/// from the segments the stack keeps (every call of both passes goes through here).
pub fn check(value: &Value) -> Result<(), BoundError> {
    // Each frame is a container being walked: how it was reached, and its children.
    enum Children<'a> {
        Array(std::iter::Enumerate<std::slice::Iter<'a, Value>>),
        Object(serde_json::map::Iter<'a>),
    }
    #[derive(Clone, Copy)]
    enum Segment<'a> {
        Index(usize),
        Key(&'a str),
    }
    fn pointer(frames: &[(Option<Segment>, Children)], last: Segment) -> String {
        let mut out = String::new();
        let segments = frames.iter().filter_map(|(s, _)| *s).chain([last]);
        for segment in segments {
            match segment {
                Segment::Index(i) => crate::pointer::push(&mut out, &i.to_string()),
                Segment::Key(k) => crate::pointer::push(&mut out, k),
            }
        }
        out
    }
    let mut count = 1usize;
    let mut stack: Vec<(Option<Segment>, Children)> = Vec::new();
    match value {
        Value::Array(a) if a.len() > MAX_ARRAY_LEN => {
            return Err(BoundError::ArrayTooLong {
                pointer: String::new(),
                len: a.len(),
            });
        }
        Value::Array(a) => stack.push((None, Children::Array(a.iter().enumerate()))),
        Value::Object(o) => stack.push((None, Children::Object(o.iter()))),
        _ => return Ok(()),
    }
    loop {
        let depth = stack.len();
        let Some((_, children)) = stack.last_mut() else {
            break;
        };
        let next = match children {
            Children::Array(it) => it.next().map(|(i, v)| (Segment::Index(i), v)),
            Children::Object(it) => it.next().map(|(k, v)| (Segment::Key(k.as_str()), v)),
        };
        let Some((segment, child)) = next else {
            stack.pop();
            continue;
        };
        count += 1;
        if count > MAX_VALUES {
            return Err(BoundError::TooManyValues {
                pointer: pointer(&stack, segment),
            });
        }
        match child {
            Value::Array(a) => {
                if depth + 1 > MAX_DEPTH {
                    return Err(BoundError::TooDeep {
                        pointer: pointer(&stack, segment),
                    });
                }
                if a.len() > MAX_ARRAY_LEN {
                    return Err(BoundError::ArrayTooLong {
                        pointer: pointer(&stack, segment),
                        len: a.len(),
                    });
                }
                stack.push((Some(segment), Children::Array(a.iter().enumerate())));
            }
            Value::Object(o) => {
                if depth + 1 > MAX_DEPTH {
                    return Err(BoundError::TooDeep {
                        pointer: pointer(&stack, segment),
                    });
                }
                stack.push((Some(segment), Children::Object(o.iter())));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(levels: usize) -> Value {
        let mut v = json!(1);
        for _ in 0..levels {
            v = json!([v]);
        }
        v
    }

    #[test]
    fn depth_is_accepted_at_the_edge_and_refused_one_past() {
        assert_eq!(check(&nested(MAX_DEPTH)), Ok(()));
        let err = check(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(err.check_id().name(), "payload-too-deep");
        assert_eq!(err.pointer(), "/0".repeat(MAX_DEPTH));
    }

    #[test]
    fn value_count_is_accepted_at_the_edge_and_refused_one_past() {
        // An object of arrays: the root, 25 arrays, and their items.
        let make = |total: usize| {
            let mut obj = serde_json::Map::new();
            let mut left = total - 1;
            let mut i = 0;
            while left > 0 {
                let n = (left - 1).min(MAX_ARRAY_LEN);
                obj.insert(format!("k{i}"), Value::Array(vec![json!(0); n]));
                left -= n + 1;
                i += 1;
            }
            Value::Object(obj)
        };
        assert_eq!(check(&make(MAX_VALUES)), Ok(()));
        let err = check(&make(MAX_VALUES + 1)).unwrap_err();
        assert_eq!(err.check_id().name(), "payload-too-many-values");
    }

    #[test]
    fn the_pointer_names_keys_and_indices_on_the_way() {
        let long = vec![0; MAX_ARRAY_LEN + 1];
        let err = check(&json!({"x": 1, "a": [{"b~": [0, long]}]})).unwrap_err();
        assert_eq!(err.pointer(), "/a/0/b~0/1");
    }

    #[test]
    fn array_length_is_accepted_at_the_edge_and_refused_one_past() {
        assert_eq!(check(&json!({"a": vec![0; MAX_ARRAY_LEN]})), Ok(()));
        let err = check(&json!({"a/b": vec![0; MAX_ARRAY_LEN + 1]})).unwrap_err();
        assert_eq!(
            err,
            BoundError::ArrayTooLong {
                pointer: "/a~1b".into(),
                len: MAX_ARRAY_LEN + 1
            }
        );
        assert_eq!(
            check(&Value::Array(vec![json!(0); MAX_ARRAY_LEN + 1]))
                .unwrap_err()
                .check_id()
                .name(),
            "payload-array-too-long"
        );
    }
}
