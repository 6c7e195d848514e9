//! Fuzz target: a provider's streamed reply, as a sequence of SSE events fed to the decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchboard_core::Dialect;
use switchboard_providers::StreamDecoder;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let mut decoder = StreamDecoder::new(Dialect::ALL[usize::from(first) % Dialect::ALL.len()]);
    // Events are separated by blank lines; an event's first line may name it (`event: NAME`).
    for block in text.split("\n\n") {
        let (event, data) = match block.strip_prefix("event: ") {
            Some(named) => match named.split_once('\n') {
                Some((name, data)) => (Some(name), data),
                None => (Some(named), ""),
            },
            None => (None, block),
        };
        if decoder.feed(event, data).is_err() {
            break;
        }
    }
    let _ = decoder.finish();
});
