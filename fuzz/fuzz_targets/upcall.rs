//! Fuzz target: a server's requests to the host while its tool runs, as `chat` and `run` read
//! them: an elicitation form (its fields, and each line of the rest of the input as an answer
//! to the next field) and a sampling request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchboard_core::elicitation::{Form, Request};
use switchboard_host::sampling::SamplingRequest;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (params, answers) = text.split_once('\n').unwrap_or((&text, ""));
    let Ok(params) = serde_json::from_str::<serde_json::Value>(params) else {
        return;
    };
    let _ = SamplingRequest::parse("s", "t", &params);
    if let Ok(Request::Form(form)) = Request::parse(&params) {
        let mut answered = serde_json::Map::new();
        for (field, line) in form.fields.iter().zip(answers.lines().cycle().take(64)) {
            let _ = field.hint();
            if let Ok(Some(v)) = field.read(line) {
                let _ = field.show(&v);
                assert!(field.check(&v).is_ok(), "an answer read is one the field takes");
                answered.insert(field.name.clone(), v);
            }
        }
        let _ = Form::accept(answered);
    }
});
