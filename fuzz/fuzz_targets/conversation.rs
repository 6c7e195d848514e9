//! Fuzz target: a saved conversation file (`--conversation`) read, checked, and made ready for
//! each provider, then encoded into each provider's request; and encoded as saved, with a
//! reasoning effort.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchboard_core::Dialect;
use switchboard_host::history::History;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(Some(history)) = History::parse(text) else {
        return;
    };
    for dialect in Dialect::ALL {
        let messages = history.messages_for(dialect, "another-model");
        let parts = switchboard_providers::RequestParts {
            model: "m".into(),
            system: None,
            messages,
            tools: Vec::new(),
            max_tokens: None,
            compatible_server: false,
            temperature: None,
            reasoning_effort: None,
            cache_key: None,
            gemini_openapi: false,
            stream: false,
        };
        let _ = switchboard_providers::render_request(dialect, &parts);
    }
    // As saved, for the provider that wrote it (its reasoning goes back), with the file's model
    // name as both the model and a reasoning effort: any text reaches the effort planning.
    let parts = switchboard_providers::RequestParts {
        model: history.model.clone(),
        system: None,
        messages: history.messages.clone(),
        tools: Vec::new(),
        max_tokens: history
            .messages
            .len()
            .checked_sub(1)
            .map(|n| (n as u32).saturating_mul(700)),
        compatible_server: false,
        temperature: Some(0.5),
        reasoning_effort: Some(history.model.clone()),
        cache_key: None,
        gemini_openapi: false,
        stream: false,
    };
    for dialect in Dialect::ALL {
        let _ = switchboard_providers::render_request(dialect, &parts);
        let _ = switchboard_providers::reasoning_effort_fields(
            dialect,
            &history.model,
            &history.model,
            parts.max_tokens,
        );
    }
});
