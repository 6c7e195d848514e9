//! switchboard-test-support: fakes, validators and fixtures for tests. Dev-dependency only.

pub mod changing_tools;
pub mod everything;
pub mod hostile;
pub mod line_client;
pub mod lint_fixture;
pub mod listening;
pub mod output;
pub mod peers;
pub mod provider_double;
pub mod raw_http;
pub mod validator;
