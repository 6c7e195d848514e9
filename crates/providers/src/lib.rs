//! switchboard-providers: one module per provider dialect; sanitize schemas, render requests, decode replies. Pure, no HTTP.

pub mod count;
