//! Which manifest a served agent was built from: its `name`, `version`, the SHA-256 of the
//! document in canonical form, and `source.commit`, as the runtime announces them in the
//! `initialize` result's `_meta` under `holon/manifest` and the harness reads them back.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::yaml;

/// The `_meta` key the runtime announces its manifest under.
pub const META_KEY: &str = "holon/manifest";

/// A manifest's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The manifest's `name`, as `serverInfo` carries it too.
    pub name: String,
    /// The manifest's `version` (semver), as `serverInfo` carries it too.
    pub version: String,
    /// The SHA-256 (lowercase hex) of the document as canonical JSON ([`digest`]).
    pub sha256: String,
    /// `source.commit`, when the manifest has one.
    pub commit: Option<String>,
}

impl Identity {
    /// The identity of a manifest's text, with the document it hashed; `None` when the text
    /// is not a YAML mapping (a checked manifest always is).
    pub fn of_text(text: &str) -> Option<(Identity, Value)> {
        let document = yaml::parse(text).ok()?.to_json();
        Some((Identity::of_document(&document)?, document))
    }

    /// The identity of a manifest already read as a document (the located tree the checks
    /// read, as JSON); `None` without a string `name` and `version`.
    pub fn of_document(document: &Value) -> Option<Identity> {
        let field = |pointer: &str| document.pointer(pointer).and_then(Value::as_str);
        Some(Identity {
            name: field("/name")?.to_string(),
            version: field("/version")?.to_string(),
            sha256: digest(document),
            commit: field("/source/commit").map(str::to_string),
        })
    }

    /// The identity of the located tree the checks read, the same as [`Self::of_document`] of
    /// its JSON, without building that JSON (a manifest of a thousand examples is megabytes).
    pub fn of_tree(root: &yaml::Node) -> Option<Identity> {
        let field = |node: Option<&yaml::Node>| match node.map(|n| &n.kind) {
            Some(yaml::Kind::String(s)) => Some(s.clone()),
            _ => None,
        };
        Some(Identity {
            name: field(root.get("name"))?,
            version: field(root.get("version"))?,
            sha256: digest(root),
            commit: field(root.get("source").and_then(|s| s.get("commit"))),
        })
    }

    /// The value announced under [`META_KEY`]: `{name, version, sha256, commit?}`.
    pub fn to_meta(&self) -> Value {
        let mut meta = json!({"name": self.name, "version": self.version, "sha256": self.sha256});
        if let (Some(commit), Value::Object(o)) = (&self.commit, &mut meta) {
            o.insert("commit".into(), Value::String(commit.clone()));
        }
        meta
    }

    /// The identity a result's `_meta` announces under [`META_KEY`], when it announces one
    /// whole (a name, a version and a 64-digit hex SHA-256).
    pub fn from_meta(meta: &Map<String, Value>) -> Option<Identity> {
        let announced = meta.get(META_KEY)?;
        let field = |key: &str| {
            announced
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let sha256 = field("sha256")
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))?;
        Some(Identity {
            name: field("name")?,
            version: field("version")?,
            sha256: sha256.to_ascii_lowercase(),
            commit: field("commit"),
        })
    }

    /// `word-stats 1.0.0 (sha256 1a2b3c4d5e6f)`: the name, the version and the hash's first
    /// twelve digits.
    pub fn describe(&self) -> String {
        let short: String = self.sha256.chars().take(12).collect();
        format!("`{} {}` (sha256 {short})", self.name, self.version)
    }
}

/// The SHA-256, in lowercase hex, of a manifest document in its canonical form: the YAML
/// document read as the checks read it, as JSON in RFC 8785's canonical form
/// ([`crate::json::canonical`]). Comments, key order, layout and quoting change nothing;
/// any value does.
pub fn digest<D: crate::json::Document>(document: &D) -> String {
    let mut canonical = Vec::new();
    crate::json::write_canonical(document, &mut canonical);
    let hash = Sha256::digest(&canonical);
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        "name: probe\nversion: 1.0.0\nsource: { repository: r, commit: abc }\nlimits: [1.0, 2]\n";

    #[test]
    fn layout_and_comments_do_not_change_the_hash_and_a_value_does() {
        let (identity, _) = Identity::of_text(TEXT).unwrap();
        assert_eq!(identity.name, "probe");
        assert_eq!(identity.version, "1.0.0");
        assert_eq!(identity.commit.as_deref(), Some("abc"));
        let same = "# a comment\nlimits:\n  - 1\n  - 2.0\nsource:\n  commit: 'abc'\n  repository: r\nversion: \"1.0.0\"\nname: probe\n";
        assert_eq!(Identity::of_text(same).unwrap().0, identity);
        let other = TEXT.replace("2]", "3]");
        assert_ne!(Identity::of_text(&other).unwrap().0.sha256, identity.sha256);
        // The hash is that of the canonical JSON text, which any tool can recompute.
        let canonical = r#"{"limits":[1,2],"name":"probe","source":{"commit":"abc","repository":"r"},"version":"1.0.0"}"#;
        let hash = Sha256::digest(canonical.as_bytes());
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(identity.sha256, hex);
    }

    #[test]
    fn the_meta_reads_back_and_a_partial_one_is_no_identity() {
        let (identity, _) = Identity::of_text(TEXT).unwrap();
        let mut meta = Map::new();
        meta.insert(META_KEY.into(), identity.to_meta());
        assert_eq!(Identity::from_meta(&meta), Some(identity.clone()));
        meta.insert(
            META_KEY.into(),
            json!({"name": "probe", "version": "1.0.0", "sha256": "x"}),
        );
        assert_eq!(Identity::from_meta(&meta), None);
        assert_eq!(Identity::from_meta(&Map::new()), None);
        assert!(identity.describe().starts_with("`probe 1.0.0` (sha256 "));
    }

    #[test]
    fn the_tree_hashes_as_its_json_does() {
        // Names that sort differently as bytes and as UTF-16, escapes, numbers of every
        // spelling, a merge key, nesting: the tree's identity is its JSON's.
        let odd = "name: odd\nversion: 0.1.0\n\"\\ufb33\": 1\n\"\\U0001F600\": 2\n\"\\r\": 3\n\
            zz: {b: [1.0, 1e21, -0.0, 0x1f, 2.50, 12345678901234567890], a: \"q\\\"\\\\\\u0001\", c: null}\n\
            base: &b {k: 1, l: [true, ~]}\nmerged: {<<: *b, m: 2}\n\u{e9}t\u{e9}: \u{e9}\n";
        let manifests = ["word-stats", "csv-profile", "ticket-triage"]
            .map(|name| {
                format!(
                    "{}/../../examples/{name}/holon.yaml",
                    env!("CARGO_MANIFEST_DIR")
                )
            })
            .map(|path| std::fs::read_to_string(path).unwrap());
        for text in manifests.iter().map(String::as_str).chain([odd]) {
            let root = yaml::parse(text).unwrap();
            let document = root.to_json();
            assert_eq!(Identity::of_tree(&root), Identity::of_document(&document));
            assert!(Identity::of_tree(&root).is_some());
        }
    }

    #[test]
    fn a_checked_manifest_has_the_identity_of_its_text_without_a_second_parse() {
        let text = "# a comment\nname: probe\nversion: 1.0.0\ndescription: A probe.\ncapability: text.probe\n\
            source: {repository: 'https://example.com/probe', commit: abc}\n\
            interface:\n  input: {type: object, additionalProperties: false, properties: {}}\n\
            \x20 output: {type: object, additionalProperties: false, properties: {}}\n\
            runtime: {tool: probe, limits: {timeout_s: 30, max_input_bytes: 1000}}\n\
            pricing: {price: 0.001, currency: EUR, charge_on: success}\n\
            examples: [{name: one, input: {}, output: {}}]\n";
        let path = std::path::Path::new("holon.yaml");
        let report = crate::check::check_str(text, path);
        let manifest = crate::check::into_manifest(report).unwrap();
        let (from_text, _) = Identity::of_text(text).unwrap();
        assert_eq!(manifest.identity(), Some(from_text.clone()));
        assert_eq!(from_text.commit.as_deref(), Some("abc"));
        // A value changed is another identity, found the same way.
        let other = text.replace("timeout_s: 30", "timeout_s: 31");
        let changed = crate::check::into_manifest(crate::check::check_str(&other, path)).unwrap();
        assert_ne!(changed.identity().unwrap().sha256, from_text.sha256);
    }
}
