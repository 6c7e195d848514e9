//! Stable content hashes of definitions: SHA-256 over canonical JSON (keys sorted, no spaces).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A SHA-256 digest of a definition's canonical JSON, shown as lowercase hex.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct ContentHash([u8; 32]);

impl ContentHash {
    /// Hash a JSON value after canonicalizing it, so key order and whitespace never matter.
    pub fn of_json(value: &serde_json::Value) -> Self {
        let mut canonical = String::new();
        write_canonical(value, &mut canonical);
        Self::of_bytes(canonical.as_bytes())
    }

    /// Hash raw bytes.
    pub fn of_bytes(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// The digest as bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The first `n` hex characters (n <= 64), for short display and name suffixes.
    pub fn short(&self, n: usize) -> String {
        let mut s = hex::encode(self.0);
        s.truncate(n.min(64));
        s
    }
}

impl std::fmt::Display for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl std::fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ContentHash({})", self.short(16))
    }
}

impl From<ContentHash> for String {
    fn from(h: ContentHash) -> String {
        h.to_string()
    }
}

impl TryFrom<String> for ContentHash {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let bytes = hex::decode(&s).map_err(|e| format!("bad hash {s:?}: {e}"))?;
        let arr: [u8; 32] = bytes
            .try_into()
            .map_err(|_| format!("bad hash {s:?}: expected 64 hex characters"))?;
        Ok(Self(arr))
    }
}

/// Canonical JSON as a string (see [`write_canonical`]).
pub fn canonical(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

/// Canonical JSON: object keys sorted by their UTF-8 bytes, no insignificant whitespace,
/// strings and numbers as serde_json writes them. Independent of serde_json's `preserve_order`.
pub fn write_canonical(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_the_hash() {
        let a = json!({"b": 1, "a": {"y": [1, 2], "x": null}});
        let b: serde_json::Value =
            serde_json::from_str(r#"{ "a": {"x": null, "y": [1,2]}, "b": 1 }"#).unwrap();
        assert_eq!(ContentHash::of_json(&a), ContentHash::of_json(&b));
    }

    #[test]
    fn any_change_changes_the_hash() {
        let a = json!({"description": "Search tickets"});
        let b = json!({"description": "Search tickets."});
        assert_ne!(ContentHash::of_json(&a), ContentHash::of_json(&b));
    }

    #[test]
    fn round_trips_through_a_string() {
        let h = ContentHash::of_bytes(b"x");
        let s: String = h.into();
        assert_eq!(ContentHash::try_from(s).unwrap(), h);
    }
}
