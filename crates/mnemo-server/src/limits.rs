//! Per-key rate limiting: a token bucket per API key; an empty bucket answers 429 with
//! `Retry-After`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A token bucket's size and refill rate.
#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    /// Requests allowed in a burst.
    pub burst: f64,
    /// Requests per second refilled.
    pub per_second: f64,
}

impl RateLimit {
    /// `per_second` requests a second, in bursts of twice that (at least 100).
    pub fn per_second(per_second: f64) -> Self {
        Self { burst: (2.0 * per_second).max(100.0), per_second }
    }
}

impl Default for RateLimit {
    /// 50 requests a second, in bursts of 100.
    fn default() -> Self {
        Self::per_second(50.0)
    }
}

/// The buckets of every key seen.
#[derive(Debug)]
pub(crate) struct Limiter {
    limit: RateLimit,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl Limiter {
    pub(crate) fn new(limit: RateLimit) -> Self {
        Self { limit, buckets: Mutex::new(HashMap::new()) }
    }

    /// Takes one token for `key`; `Err(wait)` when the bucket is empty.
    pub(crate) fn take(&self, key: &str) -> Result<(), Duration> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (tokens, last) = buckets.entry(key.to_owned()).or_insert((self.limit.burst, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * self.limit.per_second)
            .min(self.limit.burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / self.limit.per_second.max(1e-9)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_empties_and_refills() {
        let limiter = Limiter::new(RateLimit { burst: 2.0, per_second: 1000.0 });
        assert!(limiter.take("k").is_ok());
        assert!(limiter.take("k").is_ok());
        let wait = limiter.take("k").unwrap_err();
        assert!(wait <= Duration::from_millis(2));
        assert!(limiter.take("other").is_ok(), "buckets are per key");
        std::thread::sleep(Duration::from_millis(5));
        assert!(limiter.take("k").is_ok());
    }
}
