//! `${VAR}`, `${VAR:-default}` and VS Code's `${env:VAR}` expansion in config strings. The value
//! of a variable never appears in an error; only its name does.

/// Why a string could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpandError {
    /// `${NAME}` with NAME unset and no default.
    Unset(String),
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

fn resolve(body: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let (name, default) = match body.split_once(":-") {
        Some((n, d)) => (n, Some(d)),
        None => (body, None),
    };
    let name = match name.split_once(':') {
        Some(("env", n)) => n,
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
            (
                "${input:token}",
                Err(ExpandError::Unsupported("input:token".into())),
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
