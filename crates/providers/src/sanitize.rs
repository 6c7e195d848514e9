//! The sanitizer entry point: rewrite one tool's input schema for one dialect (§2.5, in order).
//!
//! The caller keeps the original schema for argument validation; this returns a new one.

use serde::Serialize;
use serde_json::Value;
use switchboard_core::Dialect;

use crate::error::ProviderError;
use crate::schema::{Log, Sanitized};
use crate::{anthropic, gemini, openai_chat, openai_responses, schema};

/// Choices that change how schemas are rewritten.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SanitizeOptions {
    /// OpenAI: convert schemas to strict mode where possible (per tool; falls back with a reason).
    pub strict: bool,
    /// Gemini: send the OpenAPI-subset `parameters` instead of `parametersJsonSchema`.
    pub gemini_openapi: bool,
}

/// Rewrite `schema` (a tool's `inputSchema`) into what `dialect` accepts, or say why it cannot be.
pub fn sanitize(
    dialect: Dialect,
    schema: &Value,
    opts: &SanitizeOptions,
) -> Result<Sanitized, ProviderError> {
    let mut log = Log::default();
    let mut out = schema::root_value(schema, &mut log)?;
    schema::limits(&mut out, &mut log)?;
    let (wrapped_root, strict, strict_fallback) = match dialect {
        Dialect::Anthropic => (anthropic::sanitize(&mut out, &mut log)?, false, None),
        Dialect::OpenAiChat => openai_chat::sanitize(&mut out, opts.strict, &mut log)?,
        Dialect::OpenAiResponses => openai_responses::sanitize(&mut out, opts.strict, &mut log)?,
        Dialect::Gemini => (
            gemini::sanitize(&mut out, opts.gemini_openapi, &mut log)?,
            false,
            None,
        ),
    };
    // OpenAI validates schemas too ("Invalid schema for function ...: [] is not of type
    // 'object', 'boolean'"), rejecting the whole request; Anthropic's and Gemini's rules check.
    if matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses) {
        schema::metaschema(&out, "openai-metaschema")?;
    }
    Ok(Sanitized {
        schema: out,
        changes: log.changes,
        strict,
        strict_fallback,
        wrapped_root,
    })
}
