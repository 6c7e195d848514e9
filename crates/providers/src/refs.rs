//! Local `$ref` resolution (§2.5 step 3), bounded against recursion and exponential expansion.
//!
//! Gemini rejects `$ref` in `parameters` (and restricts its siblings in `parametersJsonSchema`),
//! and OpenAI mishandles `$ref` with sibling keywords, so those dialects inline references
//! here. A cycle, a reference deeper than [`MAX_DEPTH`] or an expansion past the node budget is
//! cut: the reference becomes a permissive `{"type": "object"}` with a note in its description,
//! and the cut is reported. An unresolvable reference becomes `{}` and is reported.

use serde_json::{Map, Value, json};

use crate::schema::{Log, MAX_DEPTH, MAX_NODES, children_mut, join};

/// How many times a recursive reference is expanded along one path before it is cut.
const UNROLL: usize = 2;

/// Which references to inline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RefMode {
    /// Every reference; `$defs` and `definitions` are removed afterwards.
    All,
    /// Only references that have sibling keywords.
    WithSiblings,
}

struct Expander<'a> {
    root: &'a Value,
    mode: RefMode,
    budget: usize,
    stack: Vec<String>,
}

/// Inline references in `schema` according to `mode`.
pub(crate) fn inline(schema: &mut Value, mode: RefMode, log: &mut Log) {
    let root = schema.clone();
    if mode == RefMode::All
        && let Value::Object(m) = schema
    {
        for key in ["$defs", "definitions"] {
            if let Some(defs) = m.remove(key) {
                let names: Vec<Value> = defs
                    .as_object()
                    .map(|d| d.keys().cloned().map(Value::String).collect())
                    .unwrap_or_default();
                log.record(
                    &join("", key),
                    "defs-inlined",
                    Some(Value::Array(names)),
                    None,
                );
            }
        }
    }
    let mut ex = Expander {
        root: &root,
        mode,
        budget: MAX_NODES,
        stack: Vec::new(),
    };
    ex.walk(schema, "", 0, log);
}

/// Remove the definitions under the root's `$defs` / `definitions` that nothing outside them
/// reaches through a local `$ref` (directly or through other definitions). They validate
/// nothing, yet strict mode must convert them all, so one unusable but unused definition (a
/// shared `$defs` block that a server copies into every tool, as the Notion server does) made
/// a tool fall back. Keeps everything when any reference is not a local pointer it can follow.
pub(crate) fn drop_unused_defs(schema: &mut Value, log: &mut Log) {
    const KEYS: [&str; 2] = ["$defs", "definitions"];
    let Value::Object(root) = schema else { return };
    if !KEYS
        .iter()
        .any(|k| root.get(*k).is_some_and(Value::is_object))
    {
        return;
    }
    /// Every `$ref` string in `v`; `None` when one is not a plain local pointer.
    fn refs<'v>(v: &'v Value, out: &mut Vec<&'v str>) -> Option<()> {
        match v {
            Value::Object(m) => {
                if m.contains_key("$dynamicRef") || m.contains_key("$recursiveRef") {
                    return None;
                }
                if let Some(r) = m.get("$ref") {
                    let r = r.as_str()?;
                    let whole = KEYS.iter().any(|k| r.strip_prefix("#/") == Some(k));
                    if !(r == "#" || r.starts_with("#/")) || r.contains('%') || whole {
                        return None;
                    }
                    out.push(r);
                }
                m.values().try_for_each(|c| refs(c, out))
            }
            Value::Array(a) => a.iter().try_for_each(|c| refs(c, out)),
            _ => Some(()),
        }
    }
    /// The definition a reference leads into: (`$defs` or `definitions`, name).
    fn target(r: &str) -> Option<(String, String)> {
        let mut parts = r.strip_prefix("#/")?.split('/');
        let key = parts.next()?.replace("~1", "/").replace("~0", "~");
        let name = parts.next()?.replace("~1", "/").replace("~0", "~");
        KEYS.contains(&key.as_str()).then_some((key, name))
    }
    let mut pending = Vec::new();
    for (k, v) in root.iter() {
        if !KEYS.contains(&k.as_str()) && refs(v, &mut pending).is_none() {
            return;
        }
    }
    let mut used: std::collections::HashSet<(String, String)> = Default::default();
    let mut queue: Vec<(String, String)> = pending.into_iter().filter_map(target).collect();
    while let Some(t) = queue.pop() {
        if !used.insert(t.clone()) {
            continue;
        }
        let Some(def) = root.get(&t.0).and_then(|d| d.get(&t.1)) else {
            continue;
        };
        let mut inner = Vec::new();
        if refs(def, &mut inner).is_none() {
            return;
        }
        queue.extend(inner.into_iter().filter_map(target));
    }
    for key in KEYS {
        let Some(Value::Object(defs)) = root.get_mut(key) else {
            continue;
        };
        let unused: Vec<String> = defs
            .keys()
            .filter(|name| !used.contains(&(key.to_string(), (*name).clone())))
            .cloned()
            .collect();
        if unused.is_empty() {
            continue;
        }
        for name in &unused {
            defs.remove(name);
        }
        if defs.is_empty() {
            root.remove(key);
        }
        log.record(
            &join("", key),
            "defs-unused-dropped",
            Some(Value::Array(
                unused.into_iter().map(Value::String).collect(),
            )),
            None,
        );
    }
}

fn node_count(v: &Value) -> usize {
    match v {
        Value::Object(m) => 1 + m.values().map(node_count).sum::<usize>(),
        Value::Array(a) => 1 + a.iter().map(node_count).sum::<usize>(),
        _ => 1,
    }
}

/// Look a local reference up: `#` or `#/json/pointer`.
fn lookup<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    // `pointer` uses `~0`/`~1` escapes, which serde_json's `pointer` decodes; `%25`-style
    // URI escapes are rare in MCP schemas and left alone.
    root.pointer(pointer)
}

impl Expander<'_> {
    fn walk(&mut self, node: &mut Value, path: &str, depth: usize, log: &mut Log) {
        let Value::Object(m) = node else { return };
        if let Some(Value::String(reference)) = m.get("$ref").cloned() {
            let siblings = m.keys().any(|k| !k.starts_with('$'));
            if self.mode == RefMode::All || siblings {
                self.expand(node, &reference, path, depth, log);
                return;
            }
        }
        children_mut(m, path, &mut |c, p| self.walk(c, p, depth + 1, log));
    }

    fn expand(
        &mut self,
        node: &mut Value,
        reference: &str,
        path: &str,
        depth: usize,
        log: &mut Log,
    ) {
        let Value::Object(m) = node else { return };
        let mut siblings: Map<String, Value> = m.clone();
        siblings.remove("$ref");
        let before = Some(json!(reference));
        let cut = |rule: &'static str, note: &str, log: &mut Log| {
            let mut out = Map::new();
            out.insert("type".into(), json!("object"));
            out.insert("description".into(), json!(note));
            for (k, v) in &siblings {
                if !k.starts_with('$') {
                    out.insert(k.clone(), v.clone());
                }
            }
            log.record(
                &join(path, "$ref"),
                rule,
                before.clone(),
                Some(json!("object")),
            );
            Value::Object(out)
        };
        // Unroll a recursive definition once (Gemini itself "unrolls cyclic refs a limited
        // number of times"), then cut.
        if self.stack.iter().filter(|r| *r == reference).count() >= UNROLL {
            *node = cut("ref-cycle-cut", "(recursive structure, see parent)", log);
            self.walk(node, path, depth + 1, log);
            return;
        }
        if depth >= MAX_DEPTH {
            *node = cut("ref-depth-cut", "(nested too deep to describe)", log);
            self.walk(node, path, depth + 1, log);
            return;
        }
        let Some(target) = lookup(self.root, reference) else {
            let mut out = siblings.clone();
            out.retain(|k, _| !k.starts_with('$'));
            log.record(&join(path, "$ref"), "ref-unresolved", before, None);
            *node = Value::Object(out);
            self.walk(node, path, depth + 1, log);
            return;
        };
        let cost = node_count(target);
        if cost > self.budget {
            *node = cut("ref-budget-cut", "(too large to describe)", log);
            self.walk(node, path, depth + 1, log);
            return;
        }
        self.budget -= cost;
        let mut out = match target {
            Value::Object(t) => t.clone(),
            Value::Bool(true) => Map::new(),
            _ => Map::new(),
        };
        // The target's own definitions are reachable through the root copy; do not repeat them.
        out.remove("$defs");
        out.remove("definitions");
        out.remove("$id");
        out.remove("$schema");
        // Sibling keywords win over the target's (openai-agents does the same).
        for (k, v) in siblings {
            out.insert(k, v);
        }
        log.record(&join(path, "$ref"), "ref-inlined", before, None);
        *node = Value::Object(out);
        self.stack.push(reference.to_string());
        // The inlined node may itself be a `$ref`; walking it expands that too.
        self.walk(node, path, depth + 1, log);
        self.stack.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(schema: Value, mode: RefMode) -> (Value, Vec<&'static str>) {
        let mut s = schema;
        let mut log = Log::default();
        inline(&mut s, mode, &mut log);
        (s, log.changes.iter().map(|c| c.rule).collect())
    }

    #[test]
    fn definitions_are_inlined_and_removed() {
        let (s, rules) = run(
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
                   "$defs": {"A": {"type": "string"}}}),
            RefMode::All,
        );
        assert_eq!(
            s,
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        );
        assert_eq!(rules, ["defs-inlined", "ref-inlined"]);
    }

    #[test]
    fn a_cycle_is_cut_not_followed() {
        let (s, rules) = run(
            json!({"type": "object", "properties": {"node": {"$ref": "#/definitions/N"}},
                   "definitions": {"N": {"type": "object",
                       "properties": {"child": {"$ref": "#/definitions/N"}}}}}),
            RefMode::All,
        );
        let child = &s["properties"]["node"]["properties"]["child"];
        assert_eq!(child["type"], "object");
        assert!(rules.contains(&"ref-cycle-cut"));
    }

    #[test]
    fn exponential_expansion_stops_at_the_budget() {
        // Each level references the previous one twice: 2^40 nodes if fully expanded.
        let mut defs = Map::new();
        defs.insert("L0".into(), json!({"type": "string"}));
        for i in 1..40 {
            let prev = format!("#/$defs/L{}", i - 1);
            defs.insert(
                format!("L{i}"),
                json!({"type": "object", "properties": {"a": {"$ref": prev}, "b": {"$ref": prev}}}),
            );
        }
        let schema =
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/L39"}}, "$defs": defs});
        let (s, rules) = run(schema, RefMode::All);
        assert!(node_count(&s) <= 2 * MAX_NODES);
        assert!(rules.contains(&"ref-budget-cut"));
    }

    #[test]
    fn unused_definitions_are_dropped_and_used_ones_kept() {
        let mut s = json!({"type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "p": {"$ref": "#/definitions/P~1Q"}},
            "$defs": {"A": {"type": "array", "items": {"$ref": "#/$defs/B"}},
                      "B": {"type": "string"}, "Unused": {"additionalProperties": true}},
            "definitions": {"P/Q": {"type": "number"}, "Z": {"type": "null"}}});
        let mut log = Log::default();
        drop_unused_defs(&mut s, &mut log);
        let keys = |k: &str| {
            s[k].as_object()
                .map(|d| d.keys().cloned().collect::<Vec<_>>())
        };
        assert_eq!(keys("$defs"), Some(vec!["A".to_string(), "B".to_string()]));
        assert_eq!(keys("definitions"), Some(vec!["P/Q".to_string()]));
        let dropped: Vec<_> = log
            .changes
            .iter()
            .map(|c| (c.rule, c.before.clone()))
            .collect();
        assert_eq!(
            dropped,
            [
                ("defs-unused-dropped", Some(json!(["Unused"]))),
                ("defs-unused-dropped", Some(json!(["Z"])))
            ]
        );
        // Nothing referenced at all: the keyword goes.
        let mut s = json!({"type": "object", "$defs": {"A": {"type": "string"}}});
        drop_unused_defs(&mut s, &mut Log::default());
        assert_eq!(s, json!({"type": "object"}));
        // A reference it cannot follow keeps every definition.
        for r in ["#anchor", "other.json#/$defs/A", "#/$defs", "#/$defs/%41"] {
            let before = json!({"type": "object", "properties": {"a": {"$ref": r}},
                                "$defs": {"A": {"type": "string"}}});
            let mut s = before.clone();
            let mut log = Log::default();
            drop_unused_defs(&mut s, &mut log);
            assert_eq!(s, before, "{r}");
            assert!(log.changes.is_empty(), "{r}");
        }
    }

    #[test]
    fn only_refs_with_siblings_are_inlined_in_that_mode() {
        let (s, _) = run(
            json!({"properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/A", "description": "B"}},
                   "$defs": {"A": {"type": "string"}}}),
            RefMode::WithSiblings,
        );
        assert_eq!(s["properties"]["a"], json!({"$ref": "#/$defs/A"}));
        assert_eq!(
            s["properties"]["b"],
            json!({"type": "string", "description": "B"})
        );
        assert!(s.get("$defs").is_some());
    }
}
