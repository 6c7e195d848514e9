//! Elicitation: a server's request, while one of its tools runs, for the user to fill in a form
//! (MCP `elicitation/create`, form mode). [`Form::parse`] reads the request's `requestedSchema`
//! into fields, [`Field::read`] checks one typed answer against its field, and [`Form::accept`]
//! (or [`Form::accept_url`] for URL mode's page), [`decline`] and [`cancel`] are the results the
//! server gets back. Pure: whoever asks the
//! person (the CLI's `chat`) does the I/O.

use serde_json::{Map, Value, json};

/// What a server asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// A form of flat fields.
    Form(Form),
    /// URL mode (2025-11-25): the user is sent to a web page (to sign in to a third party,
    /// say), and the answer only says whether they went.
    Url {
        /// What the server says about it.
        message: String,
        /// Where it sends the user.
        url: String,
    },
}

/// A form: the server's message and the fields to fill in, the required ones first.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    /// What the server says the form is for.
    pub message: String,
    /// The fields.
    pub fields: Vec<Field>,
}

/// One field of a form.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The property's name (the key of its answer).
    pub name: String,
    /// The schema's `title`, else the name.
    pub label: String,
    /// The schema's `description`.
    pub description: Option<String>,
    /// Listed in the schema's `required`.
    pub required: bool,
    /// What answers it takes.
    pub kind: Kind,
    /// The schema's `default`, when it is an answer the field takes.
    pub default: Option<Value>,
}

/// The answers a field takes (the primitive schemas elicitation allows).
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A string, with its length limits and `format` (email, uri, date, date-time).
    Text {
        /// `minLength`.
        min: Option<u64>,
        /// `maxLength`.
        max: Option<u64>,
        /// `format`, when it is one of the four elicitation allows.
        format: Option<String>,
    },
    /// A number (`integer` takes whole numbers only) within its limits.
    Number {
        /// `type: "integer"`.
        integer: bool,
        /// `minimum`.
        min: Option<f64>,
        /// `maximum`.
        max: Option<f64>,
    },
    /// Yes or no.
    Bool,
    /// One of a list (`enum`, or `oneOf` of `const` and `title`).
    Choice(Vec<Choice>),
    /// Some of a list (`type: "array"` of an `enum` or an `anyOf` of `const` and `title`).
    Choices {
        /// The options.
        options: Vec<Choice>,
        /// `minItems`.
        min: Option<u64>,
        /// `maxItems`.
        max: Option<u64>,
    },
}

/// One option of a choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// What the server gets.
    pub value: String,
    /// What the user reads (its title, else the value).
    pub label: String,
}

impl Request {
    /// Read an `elicitation/create` request's `params`; an error says why switchboard cannot
    /// show it (a field that is not one of the flat kinds elicitation allows, say).
    pub fn parse(params: &Value) -> Result<Request, String> {
        let message = params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if params.get("mode").and_then(Value::as_str) == Some("url") {
            let url = params
                .get("url")
                .and_then(Value::as_str)
                .ok_or("a URL-mode request without a `url`")?;
            return Ok(Request::Url {
                message,
                url: url.to_string(),
            });
        }
        Form::parse(
            message,
            params.get("requestedSchema").unwrap_or(&Value::Null),
        )
        .map(Request::Form)
    }
}

impl Form {
    /// A form from its message and `requestedSchema`.
    pub fn parse(message: String, schema: &Value) -> Result<Form, String> {
        let Some(schema) = schema.as_object() else {
            return Err("its requestedSchema is not a JSON object".into());
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(props) = schema.get("properties") {
            let Some(props) = props.as_object() else {
                return Err("its requestedSchema's properties are not a JSON object".into());
            };
            for (name, prop) in props {
                let kind = kind(prop).map_err(|why| format!("field {name:?}: {why}"))?;
                let label = prop
                    .get("title")
                    .and_then(Value::as_str)
                    .filter(|t| !t.trim().is_empty())
                    .unwrap_or(name)
                    .to_string();
                let mut field = Field {
                    name: name.clone(),
                    label,
                    description: prop
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    required: required.contains(&name.as_str()),
                    kind,
                    default: None,
                };
                // A default the field would refuse is no default.
                field.default = prop
                    .get("default")
                    .filter(|d| field.check(d).is_ok())
                    .cloned();
                fields.push(field);
            }
        }
        // JSON objects keep no order (nor does the map they are read into), so the required
        // fields come first, then the others, each by name.
        fields.sort_by_key(|f| !f.required);
        Ok(Form { message, fields })
    }

    /// The result that sends `answers` (field name to value) back.
    pub fn accept(answers: Map<String, Value>) -> Value {
        json!({"action": "accept", "content": answers})
    }

    /// The result that says the user went to a URL-mode request's page (it carries no
    /// content: what the user did there, the server learns from that page).
    pub fn accept_url() -> Value {
        json!({"action": "accept"})
    }
}

/// The result that says the user chose not to answer.
pub fn decline() -> Value {
    json!({"action": "decline"})
}

/// The result that says the user dismissed the request without choosing.
pub fn cancel() -> Value {
    json!({"action": "cancel"})
}

fn kind(prop: &Value) -> Result<Kind, String> {
    let num = |k: &str| prop.get(k).and_then(Value::as_f64);
    let count = |k: &str| prop.get(k).and_then(Value::as_u64);
    match prop.get("type").and_then(Value::as_str) {
        Some("string") => {
            if let Some(options) = options(prop, "enum", "oneOf", prop.get("enumNames")) {
                return Ok(Kind::Choice(options?));
            }
            let format = prop
                .get("format")
                .and_then(Value::as_str)
                .filter(|f| matches!(*f, "email" | "uri" | "date" | "date-time"))
                .map(str::to_string);
            Ok(Kind::Text {
                min: count("minLength"),
                max: count("maxLength"),
                format,
            })
        }
        Some(t @ ("number" | "integer")) => Ok(Kind::Number {
            integer: t == "integer",
            min: num("minimum"),
            max: num("maximum"),
        }),
        Some("boolean") => Ok(Kind::Bool),
        Some("array") => {
            let items = prop.get("items").unwrap_or(&Value::Null);
            match options(items, "enum", "anyOf", None) {
                Some(options) => Ok(Kind::Choices {
                    options: options?,
                    min: count("minItems"),
                    max: count("maxItems"),
                }),
                None => Err("a list of anything but fixed options".into()),
            }
        }
        Some(other) => Err(format!("type {other:?} is not one a form can ask for")),
        None => Err("no type".into()),
    }
}

/// The options of an `enum` (titled by `enumNames`, the older form) or of a `oneOf`/`anyOf` of
/// `{const, title}`; `None` when the schema has neither.
fn options(
    schema: &Value,
    plain: &str,
    titled: &str,
    names: Option<&Value>,
) -> Option<Result<Vec<Choice>, String>> {
    if let Some(values) = schema.get(plain) {
        let names: Vec<Option<&str>> = names
            .and_then(Value::as_array)
            .map(|n| n.iter().map(Value::as_str).collect())
            .unwrap_or_default();
        return Some(
            values
                .as_array()
                .ok_or(format!("`{plain}` is not a list"))
                .and_then(|values| {
                    values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            let value = v.as_str().ok_or("an option that is not a string")?;
                            let label = names.get(i).copied().flatten().unwrap_or(value);
                            Ok(Choice {
                                value: value.to_string(),
                                label: label.to_string(),
                            })
                        })
                        .collect()
                })
                .and_then(non_empty),
        );
    }
    let items = schema.get(titled)?;
    Some(
        items
            .as_array()
            .ok_or(format!("`{titled}` is not a list"))
            .and_then(|items| {
                items
                    .iter()
                    .map(|o| {
                        let value = o
                            .get("const")
                            .and_then(Value::as_str)
                            .ok_or("an option without a string `const`")?;
                        let label = o.get("title").and_then(Value::as_str).unwrap_or(value);
                        Ok(Choice {
                            value: value.to_string(),
                            label: label.to_string(),
                        })
                    })
                    .collect()
            })
            .and_then(non_empty),
    )
}

fn non_empty(options: Vec<Choice>) -> Result<Vec<Choice>, String> {
    if options.is_empty() {
        Err("a choice with no options".into())
    } else {
        Ok(options)
    }
}

impl Field {
    /// What to type, for the prompt: the kind of answer, its limits, the options numbered, the
    /// default.
    pub fn hint(&self) -> String {
        let mut out = match &self.kind {
            Kind::Text { min, max, format } => {
                let mut s = format.clone().unwrap_or_else(|| "text".into());
                if let Some(r) = range(min.map(|n| n as f64), max.map(|n| n as f64)) {
                    s.push_str(&format!(", {r} characters"));
                }
                s
            }
            Kind::Number { integer, min, max } => {
                let what = if *integer { "whole number" } else { "number" };
                match range(*min, *max) {
                    Some(r) => format!("{what} {r}"),
                    None => what.to_string(),
                }
            }
            Kind::Bool => "y/n".into(),
            Kind::Choice(options) => format!("one of {}", numbered(options)),
            Kind::Choices { options, min, max } => format!(
                "{} of {}, by number or name, separated by commas",
                range(min.map(|n| n as f64), max.map(|n| n as f64)).unwrap_or("any".into()),
                numbered(options)
            ),
        };
        match &self.default {
            Some(d) => out.push_str(&format!("; Enter for {}", self.show(d))),
            None if !self.required => out.push_str("; Enter to leave it out"),
            None => {}
        }
        out
    }

    /// A value as the user reads it (an option's label rather than its value).
    pub fn show(&self, value: &Value) -> String {
        let label = |v: &str, options: &[Choice]| {
            options
                .iter()
                .find(|o| o.value == v)
                .map_or(v.to_string(), |o| o.label.clone())
        };
        match (&self.kind, value) {
            (Kind::Choice(options), Value::String(v)) => label(v, options),
            (Kind::Choices { options, .. }, Value::Array(vs)) => vs
                .iter()
                .filter_map(Value::as_str)
                .map(|v| label(v, options))
                .collect::<Vec<_>>()
                .join(", "),
            (Kind::Bool, Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
            (_, Value::String(s)) => s.clone(),
            (_, v) => v.to_string(),
        }
    }

    /// The answer typed on one line: `Ok(None)` leaves an optional field out, an error says
    /// what the field takes. An empty line takes the default.
    pub fn read(&self, line: &str) -> Result<Option<Value>, String> {
        let line = line.trim();
        if line.is_empty() {
            return match (&self.default, self.required) {
                (Some(d), _) => Ok(Some(d.clone())),
                (None, false) => Ok(None),
                (None, true) => Err("this field is required".into()),
            };
        }
        let value = match &self.kind {
            Kind::Text { .. } => Value::String(line.to_string()),
            Kind::Number { integer: true, .. } => json!(
                line.parse::<i64>()
                    .map_err(|_| format!("{line:?} is not a whole number"))?
            ),
            Kind::Number { .. } => {
                let n = line
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .ok_or(format!("{line:?} is not a number"))?;
                json!(n)
            }
            Kind::Bool => match line.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Value::Bool(true),
                "n" | "no" | "false" | "0" => Value::Bool(false),
                _ => return Err(format!("{line:?} is not yes or no")),
            },
            Kind::Choice(options) => Value::String(pick(line, options)?),
            Kind::Choices { options, .. } => {
                let mut picked: Vec<String> = Vec::new();
                for word in line.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                    let v = pick(word, options)?;
                    if !picked.contains(&v) {
                        picked.push(v);
                    }
                }
                json!(picked)
            }
        };
        self.check(&value)?;
        Ok(Some(value))
    }

    /// Whether `value` is an answer this field takes, and if not, why.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        match (&self.kind, value) {
            (Kind::Text { min, max, format }, Value::String(s)) => {
                let n = s.chars().count() as u64;
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    let r = range(min.map(|n| n as f64), max.map(|n| n as f64));
                    let plural = if n == 1 { "" } else { "s" };
                    return Err(format!(
                        "{n} character{plural}; it takes {} characters",
                        r.unwrap_or_default()
                    ));
                }
                match format.as_deref() {
                    Some("email") if !email(s) => Err(format!("{s:?} is not an email address")),
                    Some("uri") if !uri(s) => Err(format!("{s:?} is not a URI (scheme:rest)")),
                    Some("date") if !date(s) => Err(format!("{s:?} is not a date (YYYY-MM-DD)")),
                    Some("date-time") if !date_time(s) => Err(format!(
                        "{s:?} is not a date and time (YYYY-MM-DDTHH:MM:SSZ)"
                    )),
                    _ => Ok(()),
                }
            }
            (Kind::Number { integer, min, max }, Value::Number(n)) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                if *integer && !(n.is_i64() || n.is_u64()) {
                    return Err(format!("{n} is not a whole number"));
                }
                if min.is_some_and(|m| x < m) || max.is_some_and(|m| x > m) {
                    return Err(format!(
                        "{n} is outside {}",
                        range(*min, *max).unwrap_or_default()
                    ));
                }
                Ok(())
            }
            (Kind::Bool, Value::Bool(_)) => Ok(()),
            (Kind::Choice(options), Value::String(s)) if options.iter().any(|o| &o.value == s) => {
                Ok(())
            }
            (Kind::Choices { options, min, max }, Value::Array(items)) => {
                if !items
                    .iter()
                    .all(|i| options.iter().any(|o| Some(o.value.as_str()) == i.as_str()))
                {
                    return Err("an answer that is not one of the options".into());
                }
                let n = items.len() as u64;
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    let r = range(min.map(|n| n as f64), max.map(|n| n as f64));
                    return Err(format!("{n} chosen; choose {}", r.unwrap_or_default()));
                }
                Ok(())
            }
            _ => Err(format!("{value} is not an answer this field takes")),
        }
    }
}

/// Limits in words: "1 to 10", "at least 2", "at most 5", "3"; `None` without any.
fn range(min: Option<f64>, max: Option<f64>) -> Option<String> {
    let text = |x: f64| {
        if x.fract() == 0.0 && x.abs() < 1e15 {
            format!("{}", x as i64)
        } else {
            x.to_string()
        }
    };
    match (min, max) {
        (Some(a), Some(b)) if a == b => Some(text(a)),
        (Some(a), Some(b)) => Some(format!("{} to {}", text(a), text(b))),
        (Some(a), None) => Some(format!("at least {}", text(a))),
        (None, Some(b)) => Some(format!("at most {}", text(b))),
        (None, None) => None,
    }
}

fn numbered(options: &[Choice]) -> String {
    options
        .iter()
        .enumerate()
        .map(|(i, o)| format!("{}) {}", i + 1, o.label))
        .collect::<Vec<_>>()
        .join("  ")
}

/// An option by its number (from 1), its value, or its label (case ignored).
fn pick(word: &str, options: &[Choice]) -> Result<String, String> {
    if let Ok(n) = word.parse::<usize>()
        && let Some(o) = n.checked_sub(1).and_then(|i| options.get(i))
    {
        return Ok(o.value.clone());
    }
    options
        .iter()
        .find(|o| o.value == word || o.label.eq_ignore_ascii_case(word))
        .map(|o| o.value.clone())
        .ok_or_else(|| format!("{word:?} is not one of the options"))
}

fn email(s: &str) -> bool {
    match s.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !s.chars().any(char::is_whitespace)
                && !domain.contains('@')
        }
        None => false,
    }
}

fn uri(s: &str) -> bool {
    s.split_once(':').is_some_and(|(scheme, rest)| {
        !rest.is_empty()
            && scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    }) && !s.chars().any(char::is_whitespace)
}

fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| {
        s.get(r)
            .filter(|p| p.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|p| p.parse::<u32>().ok())
    };
    match (digits(0..4), digits(5..7), digits(8..10)) {
        (Some(y), Some(m), Some(d)) => {
            let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
            let days = match m {
                1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
                4 | 6 | 9 | 11 => 30,
                2 if leap => 29,
                2 => 28,
                _ => return false,
            };
            (1..=days).contains(&d)
        }
        _ => false,
    }
}

fn date_time(s: &str) -> bool {
    let Some((d, t)) = s.split_once(['T', 't']) else {
        return false;
    };
    if !date(d) {
        return false;
    }
    // HH:MM:SS, optional fraction, then Z or ±HH:MM.
    let (clock, zone) = match t.find(['Z', 'z', '+', '-']) {
        Some(i) => t.split_at(i),
        None => return false,
    };
    let hms: Vec<&str> = clock.split('.').next().unwrap_or("").split(':').collect();
    let two = |p: &str, max: u32| {
        p.len() == 2
            && p.bytes().all(|c| c.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|n| n <= max)
    };
    let clock_ok = hms.len() == 3 && two(hms[0], 23) && two(hms[1], 59) && two(hms[2], 60);
    let zone_ok = matches!(zone, "Z" | "z")
        || (zone.len() == 6
            // `get`, not indexing: a byte offset inside a character would panic.
            && zone.get(3..4) == Some(":")
            && zone.get(1..3).is_some_and(|h| two(h, 23))
            && zone.get(4..6).is_some_and(|m| two(m, 59)));
    clock_ok && zone_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(schema: Value) -> Form {
        Form::parse("m".into(), &schema).unwrap()
    }

    #[test]
    fn every_kind_elicitation_allows_is_read_with_its_limits() {
        let f = form(
            json!({"type": "object", "required": ["name", "n"], "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
                "mail": {"type": "string", "format": "email"},
                "n": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
                "x": {"type": "number", "default": "not a number"},
                "ok": {"type": "boolean"},
                "one": {"type": "string", "oneOf": [{"const": "a", "title": "Apple"}, {"const": "b", "title": "Banana"}]},
                "old": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
                "some": {"type": "array", "minItems": 1, "maxItems": 2,
                         "items": {"anyOf": [{"const": "p", "title": "Piano"}, {"const": "d", "title": "Drums"}, {"const": "v"}]}}
            }}),
        );
        let by = |n: &str| f.fields.iter().find(|x| x.name == n).unwrap();
        let name = by("name");
        assert_eq!((name.label.as_str(), name.required), ("Name", true));
        assert_eq!(name.read(""), Err("this field is required".into()));
        assert_eq!(
            name.read("A"),
            Err("1 character; it takes 2 to 5 characters".into())
        );
        assert_eq!(name.read(" Ada "), Ok(Some(json!("Ada"))));
        assert!(by("mail").read("ada@").is_err());
        assert_eq!(by("mail").read(""), Ok(None));
        assert_eq!(
            by("mail").read("ada@example.org"),
            Ok(Some(json!("ada@example.org")))
        );
        let n = by("n");
        assert_eq!(n.read(""), Ok(Some(json!(3))));
        assert_eq!(n.read("7"), Ok(Some(json!(7))));
        assert!(
            n.read("11").unwrap_err().contains("outside 1 to 10"),
            "{:?}",
            n.read("11")
        );
        assert!(n.read("2.5").is_err());
        // A default the field refuses is dropped.
        assert_eq!(by("x").default, None);
        assert_eq!(by("x").read("2.5"), Ok(Some(json!(2.5))));
        assert_eq!(by("ok").read("Yes"), Ok(Some(json!(true))));
        assert!(by("ok").read("maybe").is_err());
        assert_eq!(by("one").read("2"), Ok(Some(json!("b"))));
        assert_eq!(by("one").read("apple"), Ok(Some(json!("a"))));
        assert_eq!(by("one").read("b"), Ok(Some(json!("b"))));
        assert!(by("one").read("3").is_err());
        assert_eq!(by("old").read("green"), Ok(Some(json!("g"))));
        let some = by("some");
        assert_eq!(some.read("1, drums, 1"), Ok(Some(json!(["p", "d"]))));
        assert!(some.read("1,2,3").unwrap_err().contains("choose 1 to 2"));
        assert_eq!(some.show(&json!(["p", "v"])), "Piano, v");
        assert!(
            some.hint()
                .starts_with("1 to 2 of 1) Piano  2) Drums  3) v"),
            "{}",
            some.hint()
        );
        assert_eq!(n.hint(), "whole number 1 to 10; Enter for 3");
    }

    #[test]
    fn what_a_form_cannot_ask_for_is_said() {
        for (schema, why) in [
            (
                json!({"properties": {"o": {"type": "object"}}}),
                "field \"o\": type \"object\"",
            ),
            (
                json!({"properties": {"l": {"type": "array", "items": {"type": "string"}}}}),
                "a list of anything",
            ),
            (
                json!({"properties": {"e": {"type": "string", "enum": []}}}),
                "no options",
            ),
            (json!([1]), "not a JSON object"),
        ] {
            let err = Form::parse("m".into(), &schema).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        assert_eq!(
            Request::parse(
                &json!({"mode": "url", "message": "Log in", "url": "https://x/a", "elicitationId": "1"})
            ),
            Ok(Request::Url {
                message: "Log in".into(),
                url: "https://x/a".into()
            })
        );
        assert_eq!(
            Form::accept(Map::new()),
            json!({"action": "accept", "content": {}})
        );
        assert_eq!(decline()["action"], "decline");
        assert_eq!(cancel()["action"], "cancel");
    }

    #[test]
    fn formats_are_checked() {
        for (s, ok) in [
            ("2024-02-29", true),
            ("2023-02-29", false),
            ("2024-13-01", false),
            ("24-01-01", false),
        ] {
            assert_eq!(date(s), ok, "{s}");
        }
        // Multi-byte characters where offsets are taken do not panic.
        for s in [
            "2024-01-01T10:20:30+0é00",
            "2024-01-01T10:2é:30Z",
            "2024-é1-01",
            "é",
        ] {
            assert!(!date_time(s) && !date(s), "{s}");
        }
        for (s, ok) in [
            ("2024-01-01T10:20:30Z", true),
            ("2024-01-01T10:20:30.5+02:00", true),
            ("2024-01-01 10:20:30Z", false),
            ("2024-01-01T25:00:00Z", false),
        ] {
            assert_eq!(date_time(s), ok, "{s}");
        }
        for (s, ok) in [
            ("https://x.org/a", true),
            ("mailto:a@b.c", true),
            ("x.org", false),
            ("1http://x", false),
        ] {
            assert_eq!(uri(s), ok, "{s}");
        }
        for (s, ok) in [
            ("a@b.co", true),
            ("a@b", false),
            ("@b.co", false),
            ("a b@c.d", false),
        ] {
            assert_eq!(email(s), ok, "{s}");
        }
    }
}
