use super::*;
use serde_json::json;

fn bless(text: &str, changes: &[(usize, Expect)]) -> String {
    match rewrite(text, changes) {
        Ok(r) => r.text,
        Err(e) => panic!("refused: {e}\n{text}"),
    }
}

fn out(v: Value) -> Expect {
    Expect::Output(v)
}

const HEAD: &str = "name: x\n";

#[test]
fn a_flow_output_stays_flow_and_nothing_else_moves() {
    let text = format!(
        "{HEAD}examples:\n  # the first\n  - name: a sentence   # keep me\n    input: {{ text: \"a b\" }}\n    output: {{ words: 8, longest: examples }}  # trailing\n\n  - name: b\n    input: {{text: x}}\n    error: empty_text\n"
    );
    let new = bless(
        &text,
        &[
            (0, out(json!({"longest": "EXAMPLES", "words": 8}))),
            (1, Expect::Error("no_words".into())),
        ],
    );
    assert_eq!(
        new,
        text.replace("longest: examples", "longest: EXAMPLES")
            .replace("error: empty_text", "error: no_words")
    );
}

#[test]
fn json_style_is_kept() {
    let text = format!(
        "{HEAD}examples:\n  - name: a\n    input: {{\"text\": \"a\"}}\n    output: {{\"words\": 1, \"w\": [\"a\"]}}\n"
    );
    let new = bless(&text, &[(0, out(json!({"words": 2, "w": ["a", "yes"]})))]);
    assert!(
        new.contains("output: {\"words\": 2, \"w\": [\"a\", \"yes\"]}\n"),
        "{new}"
    );
}

#[test]
fn a_block_output_is_rewritten_at_its_own_indentation() {
    let text = format!(
        "{HEAD}examples:\n- name: a\n  input: {{text: a}}\n  output:\n      words: 1   # old\n      top:\n        - a\n  # after the output\n- name: b\n  input: {{text: b}}\n  output: {{words: 3}}\n"
    );
    let new = bless(&text, &[(0, out(json!({"words": 2, "top": ["a", "b"]})))]);
    // Field by field: the comment beside `words` stays, `top` keeps its block style.
    assert_eq!(
        new,
        text.replace(
            "      words: 1   # old\n      top:\n        - a\n",
            "      words: 2   # old\n      top:\n        - a\n        - b\n"
        )
    );
}

#[test]
fn a_long_output_goes_to_block_style_under_its_key() {
    let long = "x".repeat(120);
    let text = format!(
        "{HEAD}examples:\n  - name: a\n    input: {{text: a}}\n    output: {{ words: 1 }}\n"
    );
    let new = bless(&text, &[(0, out(json!({"words": 1, "text": long})))]);
    assert_eq!(
        new,
        text.replace(
            "    output: { words: 1 }\n",
            &format!("    output:\n      words: 1\n      text: {long}\n")
        )
    );
}

#[test]
fn output_and_error_trade_places() {
    let text = format!(
        "{HEAD}examples:\n  - name: a\n    input: {{text: a}}\n    \"output\": {{ words: 1 }}\n  - {{ name: b, input: {{text: b}}, error: empty_text }}\n"
    );
    let new = bless(
        &text,
        &[
            (0, Expect::Error("empty_text".into())),
            (1, out(json!({"words": 0, "why": "null"}))),
        ],
    );
    assert_eq!(
        new,
        text.replace("\"output\": { words: 1 }", "\"error\": empty_text")
            .replace(
                "error: empty_text }",
                "output: { words: 0, why: \"null\" } }"
            )
    );
}

#[test]
fn crlf_and_a_bom_are_kept() {
    let text = format!(
        "\u{feff}{HEAD}examples:\r\n  - name: a\r\n    input: {{text: a}}\r\n    output:\r\n      words: 1\r\n"
    )
    .replace("name: x\n", "name: x\r\n");
    let new = bless(&text, &[(0, out(json!({"words": 2, "t": "a"})))]);
    assert_eq!(
        new,
        text.replace("      words: 1\r\n", "      words: 2\r\n      t: a\r\n")
    );
}

#[test]
fn anchors_used_elsewhere_are_refused_and_aliases_replaced() {
    let text = format!(
        "{HEAD}examples:\n  - name: a\n    input: {{text: a}}\n    output: &shared {{ words: 1 }}\n  - name: b\n    input: {{text: a}}\n    output: *shared\n"
    );
    let err = rewrite(&text, &[(0, out(json!({"words": 2})))]).unwrap_err();
    assert!(err.to_string().contains("defines an anchor"), "{err}");
    // The alias itself is only a reference: it is replaced by the value.
    let new = bless(&text, &[(1, out(json!({"words": 2})))]);
    assert_eq!(new, text.replace("output: *shared", "output: { words: 2 }"));
}

#[test]
fn a_block_scalar_is_refused_with_its_reason() {
    let text = format!(
        "{HEAD}examples:\n  - name: a\n    input: {{text: a}}\n    error: |\n      empty_text\n"
    );
    let err = rewrite(&text, &[(0, Expect::Error("no_words".into()))]).unwrap_err();
    assert!(err.to_string().contains("block scalar"), "{err}");
}

#[test]
fn strings_that_would_change_type_are_quoted() {
    let text =
        format!("{HEAD}examples:\n  - name: a\n    input: {{text: a}}\n    output: {{ a: 1 }}\n");
    let new = bless(
        &text,
        &[(
            0,
            out(json!({"a": "yes", "b": "1.0", "c": "*x", "d": "a, b", "e": 1.0, "f": null})),
        )],
    );
    assert!(
        new.contains("output: { a: \"yes\", b: \"1.0\", c: \"*x\", d: \"a, b\", e: 1.0, f: null }"),
        "{new}"
    );
}

mod properties {
    //! Generated layouts of the same kind of document, blessed with generated new values:
    //! the result reads back as exactly the intended document, and differs from the original
    //! only inside the rewritten node.

    use super::super::*;
    use holon_yaml::{self as emit, Flow};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    const WORDS: &[&str] = &[
        "a",
        "yes",
        "No",
        "null",
        "~",
        "1.0",
        "12",
        "0x1F",
        "*star",
        "&amp",
        "#hash",
        "a: b",
        "a #b",
        "",
        " lead",
        "trail ",
        "two\nlines",
        "tab\there",
        "ünï",
        "<<",
        "'q'",
        "\"dq\"",
        "a,b",
        "[x]",
        "{y}",
        "- dash",
        "key:",
        "@at",
        "%p",
        "e.g.",
        "back\\slash",
        ".inf",
    ];

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
            prop::sample::select(WORDS).prop_map(|s| json!(s)),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(WORDS), inner), 0..4).prop_map(
                    |entries| {
                        Value::Object(
                            entries
                                .into_iter()
                                .map(|(k, v)| (k.to_string(), v))
                                .collect(),
                        )
                    }
                ),
            ]
        })
    }

    fn object() -> impl Strategy<Value = Value> {
        prop::collection::vec((prop::sample::select(WORDS), value()), 1..5).prop_map(|entries| {
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
            )
        })
    }

    fn answer() -> impl Strategy<Value = Expect> {
        prop_oneof![
            object().prop_map(Expect::Output),
            prop::sample::select(&["empty_text", "no_words"][..])
                .prop_map(|c| Expect::Error(c.to_string())),
        ]
    }

    /// How one example is written.
    #[derive(Debug, Clone)]
    struct Layout {
        /// The whole example as one flow mapping.
        flow_item: bool,
        /// The output in block style (else flow).
        block: bool,
        padded: bool,
        json: bool,
        quoted_key: bool,
        indent: usize,
        comments: bool,
    }

    fn layout() -> impl Strategy<Value = Layout> {
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(&[2usize, 3, 4][..]),
            any::<bool>(),
        )
            .prop_map(
                |(flow_item, block, padded, json, quoted_key, indent, comments)| Layout {
                    flow_item,
                    block,
                    padded,
                    json,
                    quoted_key,
                    indent,
                    comments,
                },
            )
    }

    fn write_example(out: &mut Vec<String>, name: &str, answer: &Expect, l: &Layout) {
        let style = Flow {
            padded: l.padded,
            json: l.json,
        };
        let (key, value) = match answer {
            Expect::Output(v) => ("output", v),
            Expect::Error(_) => ("error", &Value::Null),
        };
        let key = if l.quoted_key {
            format!("\"{key}\"")
        } else {
            key.to_string()
        };
        let shown = match answer {
            Expect::Output(_) => emit::flow(value, style),
            Expect::Error(code) => code.clone(),
        };
        if l.flow_item {
            out.push(format!(
                "  - {{ name: {}, input: {{text: a}}, {key}: {shown} }}",
                emit::quoted(name)
            ));
            return;
        }
        let pad = " ".repeat(l.indent);
        out.push(format!("  - name: {}", emit::quoted(name)));
        if l.comments {
            out.push("    # a comment inside the example".to_string());
        }
        out.push("    input: { text: \"a\" }".to_string());
        let is_block = l.block && matches!(answer, Expect::Output(_));
        if is_block {
            out.push(format!(
                "    {key}:{}",
                if l.comments { "  # why" } else { "" }
            ));
            out.push(emit::block(value, 4 + l.indent, "\n", 60, style));
        } else {
            out.push(format!(
                "    {key}: {shown}{}",
                if l.comments { "  # why" } else { "" }
            ));
        }
        if l.comments {
            out.push(String::new());
            out.push(format!("{pad}# after the example"));
        }
    }

    fn document(examples: &[(Expect, Layout)], crlf: bool, bom: bool) -> String {
        let mut lines = vec![
            "# a manifest".to_string(),
            "name: x".to_string(),
            "examples:".to_string(),
        ];
        for (i, (answer, l)) in examples.iter().enumerate() {
            write_example(&mut lines, &format!("example {i}"), answer, l);
        }
        lines.push("# the end".to_string());
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = lines.join(nl);
        text.push_str(nl);
        if bom {
            text.insert(0, '\u{feff}');
        }
        text
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn a_blessed_layout_reads_back_as_intended_and_moves_nothing_else(
            examples in prop::collection::vec((answer(), layout()), 1..4),
            which in any::<prop::sample::Index>(),
            new in answer(),
            tweak in prop::option::of((any::<prop::sample::Index>(), value())),
            crlf in any::<bool>(),
            bom in any::<bool>(),
        ) {
            let text = document(&examples, crlf, bom);
            let index = which.index(examples.len());
            // Half the time, the old output with one field changed: the rewrite goes down to it.
            let new = match (&examples[index].0, tweak) {
                (Expect::Output(Value::Object(old)), Some((field, v))) => {
                    let mut changed = old.clone();
                    let k = old.keys().nth(field.index(old.len())).cloned().unwrap_or_default();
                    changed.insert(k, v);
                    Expect::Output(Value::Object(changed))
                }
                _ => new,
            };
            let old_doc = holon_core::manifest::yaml::parse(&text)
                .map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?
                .to_json();
            let done = rewrite(&text, &[(index, new.clone())])
                .map_err(|e| TestCaseError::fail(format!("refused: {e}\n{text}")))?;
            // Exactly the intended document.
            let mut intended = old_doc.clone();
            let old_key = if examples[index].0.key() == "output" { "output" } else { "error" };
            set_answer(&mut intended, index, old_key, new.key(), new.value()).unwrap();
            let got = holon_core::manifest::yaml::parse(&done.text).unwrap().to_json();
            prop_assert_eq!(&got, &intended, "\n{}\n---\n{}", text, done.text);
            // Every byte before the first edit and after the last is kept, and the edits lie
            // inside this example: after its name, before the next one.
            if let (Some(first), Some(last)) = (done.edits.first(), done.edits.last()) {
                prop_assert!(done.text.starts_with(&text[..first.range.start]));
                prop_assert!(done.text.ends_with(&text[last.range.end..]));
                let name_at = text.find(&format!("\"example {index}\"")).unwrap();
                let next_at = text
                    .find(&format!("\"example {}\"", index + 1))
                    .unwrap_or(text.len());
                prop_assert!(name_at < first.range.start && last.range.end < next_at);
            } else {
                prop_assert_eq!(&done.text, &text);
            }
            // A second bless with the same answer changes nothing.
            let again = rewrite(&done.text, &[(index, new.clone())]).unwrap();
            let reread = holon_core::manifest::yaml::parse(&again.text).unwrap().to_json();
            prop_assert_eq!(reread, intended);
        }
    }
}

/// Each awkward layout is either blessed to exactly the expected text or refused with a
/// reason; `rewrite` itself proves a blessed text reads back as intended.
#[test]
fn awkward_layouts_are_blessed_exactly_or_refused() {
    let new = || out(json!({"words": 2}));
    let cases: &[(&str, &str, Result<&str, &str>)] = &[
        (
            "tabs as separators",
            "examples:\n  - name: a\n    input:\t{text: a}\n    output:\t{words:\t1}\n",
            Ok("examples:\n  - name: a\n    input:\t{text: a}\n    output:\t{words:\t2}\n"),
        ),
        (
            "a flow sequence of mappings",
            "examples: [ {name: a, input: {text: a}, output: {words: 1}},\n  {name: b, input: {text: b}, error: empty_text} ]\n",
            Ok(
                "examples: [ {name: a, input: {text: a}, output: {words: 2}},\n  {name: b, input: {text: b}, error: empty_text} ]\n",
            ),
        ),
        (
            "a flow mapping over several lines",
            "examples:\n  - name: a\n    input: {text: a}\n    output: {\n      words: 1\n    }  # note\n",
            Ok(
                "examples:\n  - name: a\n    input: {text: a}\n    output: {\n      words: 2\n    }  # note\n",
            ),
        ),
        (
            "anchors and aliases elsewhere in the examples",
            "examples:\n  - name: a\n    input: &in {text: a}\n    output: {words: 1}\n  - name: b\n    input: *in\n    output: {words: 1}\n",
            Ok(
                "examples:\n  - name: a\n    input: &in {text: a}\n    output: {words: 2}\n  - name: b\n    input: *in\n    output: {words: 1}\n",
            ),
        ),
        (
            "a merge key in the output",
            "base: &base {words: 1}\nexamples:\n  - name: a\n    input: {text: a}\n    output:\n      <<: *base\n",
            Ok(
                "base: &base {words: 1}\nexamples:\n  - name: a\n    input: {text: a}\n    output:\n      words: 2\n",
            ),
        ),
        (
            "a tag before the value",
            "examples:\n  - name: a\n    input: {text: a}\n    output: !!map {words: 1}\n",
            Ok("examples:\n  - name: a\n    input: {text: a}\n    output: !!map {words: 2}\n"),
        ),
        (
            "a comment between the key and a block value",
            "examples:\n  - name: a\n    input: {text: a}\n    output:   # why\n        words: 1\n",
            Ok(
                "examples:\n  - name: a\n    input: {text: a}\n    output:   # why\n        words: 2\n",
            ),
        ),
        (
            "single-quoted keys",
            "examples:\n  - 'name': a\n    'input': {text: a}\n    'output': {words: 1}\n",
            Ok("examples:\n  - 'name': a\n    'input': {text: a}\n    'output': {words: 2}\n"),
        ),
        (
            "an output that is a block scalar",
            "examples:\n  - name: a\n    input: {text: a}\n    output: >\n      x\n",
            Err("block scalar"),
        ),
        (
            "an anchor in the output used by another example",
            "examples:\n  - name: a\n    input: {text: a}\n    output: {words: &n 1}\n  - name: b\n    input: {text: b}\n    output: {words: *n}\n",
            Err("defines an anchor"),
        ),
    ];
    for (what, text, want) in cases {
        let got = rewrite(text, &[(0, new())]).map(|r| r.text);
        match (want, &got) {
            (Ok(expected), Ok(text)) => assert_eq!(text, expected, "{what}"),
            (Err(reason), Err(why)) => assert!(why.to_string().contains(reason), "{what}: {why}"),
            _ => panic!("{what}: expected {want:?}, got {got:?}"),
        }
    }
}
