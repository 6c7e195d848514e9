//! Fuzz target: a saved conversation file (`--conversation`) read, checked, and made ready for
//! each provider, then encoded into each provider's request.
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
            gemini_openapi: false,
            stream: false,
        };
        let _ = switchboard_providers::render_request(dialect, &parts);
    }
});
