//! Fuzz target: a provider's whole reply body (and an error body) decoded for each dialect.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchboard_core::Dialect;
use switchboard_providers::{decode_error, decode_reply};

fuzz_target!(|data: &[u8]| {
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let dialect = Dialect::ALL[usize::from(first) % Dialect::ALL.len()];
    let _ = decode_reply(dialect, body);
    let _ = decode_error(dialect, 400 + u16::from(first), body);
});
