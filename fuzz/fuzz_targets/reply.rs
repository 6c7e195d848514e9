//! Fuzz target: a provider's whole reply body (and an error body, and whether it says the
//! context overflowed) decoded for each dialect.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchboard_core::Dialect;
use switchboard_providers::{decode_error, decode_reply, is_context_overflow};

fuzz_target!(|data: &[u8]| {
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let dialect = Dialect::ALL[usize::from(first) % Dialect::ALL.len()];
    let _ = decode_reply(dialect, body);
    let _ = decode_error(dialect, 400 + u16::from(first), body);
    let _ = is_context_overflow(400 + u16::from(first % 16), body);
});
