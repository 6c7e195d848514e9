//! When to retry a provider request and how long to wait: 429 and 5xx (and connection
//! failures) are retried with exponential backoff; a `retry-after` (seconds or an HTTP date is
//! not parsed: seconds only) or `retry-after-ms` header from the provider wins, capped.

use std::time::Duration;

/// Retry settings.
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; doubled each time.
    pub base: Duration,
    /// No single wait is longer than this (also caps `retry-after`).
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base: Duration::from_millis(1000),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// Whether an HTTP status is worth retrying: rate limits and server errors.
pub fn retryable(status: u16) -> bool {
    status == 429 || status == 408 || (500..=599).contains(&status)
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based), from the headers when the provider says.
    pub fn wait(&self, retry: u32, headers: Option<&reqwest::header::HeaderMap>) -> Duration {
        if let Some(h) = headers
            && let Some(d) = retry_after(h)
        {
            return d.min(self.max_wait);
        }
        let factor = 2u32.saturating_pow(retry.min(16));
        self.base.saturating_mul(factor).min(self.max_wait)
    }
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds.
fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_millis(ms as u64));
    }
    let secs = get("retry-after")?.parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_millis((secs * 1000.0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn backoff_doubles_and_retry_after_wins() {
        let p = RetryPolicy::default();
        assert_eq!(p.wait(0, None), Duration::from_secs(1));
        assert_eq!(p.wait(2, None), Duration::from_secs(4));
        assert_eq!(p.wait(10, None), Duration::from_secs(60));
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(p.wait(0, Some(&h)), Duration::from_secs(3));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(p.wait(0, Some(&h)), Duration::from_millis(250));
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("86400"));
        assert_eq!(p.wait(0, Some(&h)), Duration::from_secs(60));
        assert!(retryable(429) && retryable(529) && !retryable(400) && !retryable(401));
    }
}
