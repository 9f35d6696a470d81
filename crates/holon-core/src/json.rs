//! JSON values as the gateway and the harness compare and measure them: deep equality with
//! numbers by value, and the size of a value as compact JSON.

use serde_json::{Number, Value};

/// Deep equality: same shape, same keys (in any order), same strings and booleans, numbers
/// equal by value (`1` equals `1.0`, `"1"` does not). Iterative, so no payload overflows it.
pub fn equal(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if number_equal(x, y) => {}
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y))
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                // Both sides usually list their keys in the same order (the manifest's, the
                // output type's): pair them without hashing, looking up only where orders part.
                for ((kx, xv), (ky, yv)) in x.iter().zip(y) {
                    if kx == ky {
                        stack.push((xv, yv));
                    } else {
                        match y.get(kx) {
                            Some(yv) => stack.push((xv, yv)),
                            None => return false,
                        }
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// Two JSON numbers by value: integers exactly (at any size `serde_json` holds), a float and an
/// integer by the float's value.
pub fn number_equal(x: &Number, y: &Number) -> bool {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b;
    }
    match (x.as_f64(), y.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The first pointer where two JSON values differ, with both sides there.
pub fn first_difference<'a>(
    a: &'a Value,
    b: &'a Value,
) -> Option<(String, Option<&'a Value>, Option<&'a Value>)> {
    let mut stack = vec![(String::new(), Some(a), Some(b))];
    while let Some((at, x, y)) = stack.pop() {
        match (x, y) {
            (Some(Value::Object(p)), Some(Value::Object(q))) => {
                let mut keys: Vec<&String> = p
                    .keys()
                    .chain(q.keys().filter(|k| !p.contains_key(*k)))
                    .collect();
                keys.reverse();
                for k in keys {
                    let here = crate::pointer::child(&at, k);
                    stack.push((here, p.get(k), q.get(k)));
                }
            }
            (Some(Value::Array(p)), Some(Value::Array(q))) => {
                for i in (0..p.len().max(q.len())).rev() {
                    stack.push((format!("{at}/{i}"), p.get(i), q.get(i)));
                }
            }
            (Some(x), Some(y)) if equal(x, y) => {}
            _ => return Some((at, x, y)),
        }
    }
    None
}

/// Size of a value as compact JSON, without building the text.
pub fn size(value: &Value) -> u64 {
    struct Counter(u64);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counter(0);
    // Writing into a counter cannot fail, and a Value always serializes.
    let _ = serde_json::to_writer(&mut c, value);
    c.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_nothing_else_is_loose() {
        assert!(equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!equal(&json!({"a": 1}), &json!({"a": "1"})));
        assert!(!equal(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(!equal(&json!({"a": 0.33}), &json!({"a": 0.3})));
        assert!(!equal(&json!([1, 2]), &json!([2, 1])));
        assert!(equal(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
        assert!(equal(
            &json!({"a": 1, "b": 2, "c": 3}),
            &json!({"a": 1, "c": 3, "b": 2})
        ));
        assert!(!equal(
            &json!({"a": 1, "b": 2, "c": 3}),
            &json!({"a": 1, "c": 2, "b": 3})
        ));
        assert!(!equal(&json!({"a": 1, "b": 2}), &json!({"a": 1, "c": 2})));
    }

    #[test]
    fn the_first_difference_is_found_in_document_order() {
        let a = json!({"a": 1, "b": {"c": [1, 2]}, "d": 4});
        let b = json!({"a": 1.0, "b": {"c": [1, 3]}, "d": 5});
        let (at, x, y) = first_difference(&a, &b).expect("they differ");
        assert_eq!(
            (at.as_str(), x, y),
            ("/b/c/1", Some(&json!(2)), Some(&json!(3)))
        );
        assert!(first_difference(&a, &a).is_none());
        let (one, none) = (json!({"a": 1}), json!({}));
        let (at, x, y) = first_difference(&one, &none).expect("they differ");
        assert_eq!((at.as_str(), x, y), ("/a", Some(&json!(1)), None));
    }

    #[test]
    fn the_size_is_that_of_compact_json() {
        let v = json!({"text": "héllo", "n": [1, 2.5, null]});
        assert_eq!(size(&v), serde_json::to_string(&v).unwrap().len() as u64);
    }
}
