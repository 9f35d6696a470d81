//! The platform's payload bounds, checked without recursion before anything recursive runs.

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
    pub fn check_id(&self) -> &'static str {
        match self {
            BoundError::TooDeep { .. } => "payload-too-deep",
            BoundError::TooManyValues { .. } => "payload-too-many-values",
            BoundError::ArrayTooLong { .. } => "payload-array-too-long",
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
/// overflow ours.
pub fn check(value: &Value) -> Result<(), BoundError> {
    // Each frame is a container being walked: its children and its depth.
    enum Children<'a> {
        Array(std::iter::Enumerate<std::slice::Iter<'a, Value>>),
        Object(serde_json::map::Iter<'a>),
    }
    let mut count = 1usize;
    let mut stack: Vec<(Children, String)> = Vec::new();
    match value {
        Value::Array(a) if a.len() > MAX_ARRAY_LEN => {
            return Err(BoundError::ArrayTooLong {
                pointer: String::new(),
                len: a.len(),
            });
        }
        Value::Array(a) => stack.push((Children::Array(a.iter().enumerate()), String::new())),
        Value::Object(o) => stack.push((Children::Object(o.iter()), String::new())),
        _ => return Ok(()),
    }
    loop {
        let depth = stack.len();
        let Some((children, base)) = stack.last_mut() else {
            break;
        };
        // The segment is written out only for a pointer that is needed: a container's, or the
        // one in an error. Building it for every scalar was most of this walk's time.
        let next = match children {
            Children::Array(it) => it.next().map(|(i, v)| (Segment::Index(i), v)),
            Children::Object(it) => it.next().map(|(k, v)| (Segment::Key(k), v)),
        };
        let Some((segment, child)) = next else {
            stack.pop();
            continue;
        };
        count += 1;
        let pointer = || format!("{base}/{segment}");
        if count > MAX_VALUES {
            return Err(BoundError::TooManyValues { pointer: pointer() });
        }
        match child {
            Value::Array(a) => {
                if depth + 1 > MAX_DEPTH {
                    return Err(BoundError::TooDeep { pointer: pointer() });
                }
                if a.len() > MAX_ARRAY_LEN {
                    return Err(BoundError::ArrayTooLong {
                        pointer: pointer(),
                        len: a.len(),
                    });
                }
                let p = pointer();
                stack.push((Children::Array(a.iter().enumerate()), p));
            }
            Value::Object(o) => {
                if depth + 1 > MAX_DEPTH {
                    return Err(BoundError::TooDeep { pointer: pointer() });
                }
                let p = pointer();
                stack.push((Children::Object(o.iter()), p));
            }
            _ => {}
        }
    }
    Ok(())
}

/// One step of a pointer, written out on demand.
enum Segment<'a> {
    Index(usize),
    Key(&'a str),
}

impl std::fmt::Display for Segment<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Segment::Index(i) => write!(f, "{i}"),
            Segment::Key(k) => f.write_str(&escape(k)),
        }
    }
}

/// Escapes one RFC 6901 reference token.
pub fn escape(segment: &str) -> String {
    if segment.contains(['~', '/']) {
        segment.replace('~', "~0").replace('/', "~1")
    } else {
        segment.to_owned()
    }
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
        assert_eq!(err.check_id(), "payload-too-deep");
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
        assert_eq!(err.check_id(), "payload-too-many-values");
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
            err.to_string(),
            "holds an array of 10001 items, more than 10000"
        );
        assert_eq!(
            check(&Value::Array(vec![json!(0); MAX_ARRAY_LEN + 1]))
                .unwrap_err()
                .check_id(),
            "payload-array-too-long"
        );
    }
}
