//! `${VAR}`, `${VAR:-default}` and VS Code's `${env:VAR}` expansion in config strings, and VS
//! Code's `${input:ID}` (a value VS Code asks the user for) from `SWITCHBOARD_INPUT_ID`. The
//! value of a variable never appears in an error; only its name does.

/// Why a string could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpandError {
    /// `${NAME}` with NAME unset and no default.
    Unset(String),
    /// VS Code's `${input:ID}` with no `SWITCHBOARD_INPUT_ID` set (the ID).
    Input(String),
    /// `${input:...}` or another VS Code variable we cannot resolve outside VS Code.
    Unsupported(String),
    /// `${` without a closing `}`.
    Unclosed,
}

impl std::fmt::Display for ExpandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExpandError::Unset(name) => write!(
                f,
                "environment variable {name} is not set (set it, or write ${{{name}:-default}})"
            ),
            ExpandError::Input(id) => write!(
                f,
                "${{input:{id}}} is a value VS Code asks you for; give it to switchboard in the environment variable {} (the file can stay as it is)",
                input_var(id)
            ),
            ExpandError::Unsupported(var) => write!(
                f,
                "${{{var}}} is a VS Code variable switchboard cannot resolve; put the value in an environment variable and write ${{env:NAME}}"
            ),
            ExpandError::Unclosed => f.write_str("`${` without a closing `}`"),
        }
    }
}

/// Expand variables in `input`, looking names up with `lookup`. `$${` stays a literal `${`.
pub fn expand(input: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(pos) = rest.find("${") {
        if pos > 0 && rest[..pos].ends_with('$') {
            // `$${` escapes one literal `${`.
            out.push_str(&rest[..pos - 1]);
            out.push_str("${");
            rest = &rest[pos + 2..];
            continue;
        }
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 2..];
        let end = after.find('}').ok_or(ExpandError::Unclosed)?;
        let body = &after[..end];
        out.push_str(&resolve(body, lookup)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The environment variable that stands in for VS Code's `${input:ID}`: `SWITCHBOARD_INPUT_`
/// and the ID in capitals, each character other than a letter or digit written `_`
/// (`${input:github_token}` is `SWITCHBOARD_INPUT_GITHUB_TOKEN`).
pub fn input_var(id: &str) -> String {
    let id: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("SWITCHBOARD_INPUT_{id}")
}

fn resolve(body: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let (name, default) = match body.split_once(":-") {
        Some((n, d)) => (n, Some(d)),
        None => (body, None),
    };
    let name = match name.split_once(':') {
        Some(("env", n)) => n,
        Some(("input", id)) => {
            return match lookup(&input_var(id)).filter(|v| !v.is_empty()) {
                Some(v) => Ok(v),
                None => default
                    .map(str::to_string)
                    .ok_or_else(|| ExpandError::Input(id.to_string())),
            };
        }
        Some(_) => return Err(ExpandError::Unsupported(body.to_string())),
        None => name,
    };
    match lookup(name).filter(|v| !v.is_empty()) {
        Some(v) => Ok(v),
        None => default
            .map(str::to_string)
            .ok_or_else(|| ExpandError::Unset(name.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "SWITCHBOARD_INPUT_GITHUB_TOKEN" => Some("ghp_from_env".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_every_form() {
        let cases = [
            ("Bearer ${TOKEN}", Ok("Bearer s3cret")),
            ("${env:TOKEN}", Ok("s3cret")),
            ("${MISSING:-fallback}", Ok("fallback")),
            ("${EMPTY:-fallback}", Ok("fallback")),
            ("no vars", Ok("no vars")),
            ("a $${LITERAL} b", Ok("a ${LITERAL} b")),
            ("${MISSING}", Err(ExpandError::Unset("MISSING".into()))),
            ("${input:github_token}", Ok("ghp_from_env")),
            ("${input:github-token}", Ok("ghp_from_env")),
            ("${input:token}", Err(ExpandError::Input("token".into()))),
            ("${input:token:-none}", Ok("none")),
            (
                "${command:pick}",
                Err(ExpandError::Unsupported("command:pick".into())),
            ),
            ("${OOPS", Err(ExpandError::Unclosed)),
        ];
        for (input, want) in cases {
            let got = expand(input, &env);
            assert_eq!(got.as_deref().map_err(Clone::clone), want, "{input}");
        }
    }

    #[test]
    fn errors_name_the_variable_not_the_value() {
        let msg = expand("${MISSING}", &env).unwrap_err().to_string();
        assert!(msg.contains("MISSING"));
    }
}
