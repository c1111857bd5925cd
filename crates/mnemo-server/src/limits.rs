//! Rate limiting: a token bucket per API key (the server's rate, or the key's own), and one
//! per client address for failed authentications; an empty bucket answers 429 with
//! `Retry-After`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A token bucket's size and refill rate.
#[derive(Debug, Clone, Copy, PartialEq)]
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

    /// `per_minute` events a minute, in bursts of that many (at least 20).
    pub fn per_minute(per_minute: f64) -> Self {
        Self { burst: per_minute.max(20.0), per_second: per_minute / 60.0 }
    }
}

impl Default for RateLimit {
    /// 50 requests a second, in bursts of 100.
    fn default() -> Self {
        Self::per_second(50.0)
    }
}

/// Failed authentications allowed from one client address by default: 20 at once, then one
/// every 5 s (12 a minute, `RateLimit::per_minute(12.0)`).
pub const FAILED_AUTH_LIMIT: RateLimit = RateLimit { burst: 20.0, per_second: 0.2 };

/// Buckets kept before full ones are swept out.
const SWEEP_ABOVE: usize = 4096;

/// One key's bucket: its tokens, when they were counted, and when it will be full again.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    counted: Instant,
    full_at: Instant,
}

/// The buckets of the keys seen. A bucket that has refilled is the same as none (a new one
/// starts full), so once there are many, full ones are dropped: keys or addresses that come
/// and go do not grow the map without bound.
#[derive(Debug)]
pub(crate) struct Limiter {
    limit: RateLimit,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl Limiter {
    pub(crate) fn new(limit: RateLimit) -> Self {
        Self { limit, buckets: Mutex::new(HashMap::new()) }
    }

    /// Takes one token for `key`; `Err(wait)` when the bucket is empty.
    pub(crate) fn take(&self, key: &str) -> Result<(), Duration> {
        self.take_at(key, None, 1.0)
    }

    /// Takes one token for `key`, whose bucket refills at `rate` requests per second when
    /// given (its own limit) instead of the limiter's.
    pub(crate) fn take_with_rate(&self, key: &str, rate: Option<f64>) -> Result<(), Duration> {
        self.take_at(key, rate.map(RateLimit::per_second), 1.0)
    }

    /// `Err(wait)` when `key`'s bucket is empty, without taking a token.
    pub(crate) fn check(&self, key: &str) -> Result<(), Duration> {
        self.take_at(key, None, 0.0)
    }

    fn take_at(&self, key: &str, own: Option<RateLimit>, cost: f64) -> Result<(), Duration> {
        let limit = own.unwrap_or(self.limit);
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() > SWEEP_ABOVE {
            buckets.retain(|_, bucket| bucket.full_at > now);
        }
        let bucket = buckets.entry(key.to_owned()).or_insert(Bucket {
            tokens: limit.burst,
            counted: now,
            full_at: now,
        });
        let rate = limit.per_second.max(1e-9);
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.counted).as_secs_f64() * rate)
            .min(limit.burst);
        bucket.counted = now;
        let outcome = if bucket.tokens >= 1.0 {
            bucket.tokens -= cost;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
        };
        let refill = ((limit.burst - bucket.tokens) / rate).min(1e9);
        bucket.full_at = now + Duration::from_secs_f64(refill.max(0.0));
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_failed_authentication_allowance_is_twelve_a_minute() {
        assert_eq!(RateLimit::per_minute(12.0), FAILED_AUTH_LIMIT);
        // Behind a proxy the allowance is raised; the burst grows with it.
        let raised = RateLimit::per_minute(600.0);
        assert_eq!((raised.burst, raised.per_second), (600.0, 10.0));
    }

    #[test]
    fn bucket_empties_and_refills() {
        // A token every 50 ms, so a test thread paused for a millisecond or two still finds
        // the bucket empty at the third take.
        let limiter = Limiter::new(RateLimit { burst: 2.0, per_second: 20.0 });
        assert!(limiter.take("k").is_ok());
        assert!(limiter.take("k").is_ok());
        let wait = limiter.take("k").unwrap_err();
        assert!(wait <= Duration::from_millis(50));
        assert!(limiter.take("other").is_ok(), "buckets are per key");
        std::thread::sleep(Duration::from_millis(60));
        assert!(limiter.take("k").is_ok());
    }

    #[test]
    fn a_key_with_its_own_rate_gets_its_own_bucket_size() {
        let limiter = Limiter::new(RateLimit { burst: 1.0, per_second: 0.001 });
        assert!(limiter.take("slow").is_ok());
        assert!(limiter.take("slow").is_err());
        // 500 requests a second come in bursts of 1,000.
        assert!((0..1000).all(|_| limiter.take_with_rate("fast", Some(500.0)).is_ok()));
        assert!(limiter.take_with_rate("fast", Some(500.0)).is_err());
    }

    #[test]
    fn full_buckets_are_swept_once_there_are_many() {
        let limiter = Limiter::new(RateLimit { burst: 2.0, per_second: 1e6 });
        for n in 0..3 * SWEEP_ABOVE {
            assert!(limiter.take(&format!("address-{n}")).is_ok());
        }
        let kept = limiter.buckets.lock().unwrap().len();
        assert!(kept <= SWEEP_ABOVE + 1, "{kept} buckets kept");
        // A bucket still refilling is kept, and still limits.
        let slow = Limiter::new(RateLimit { burst: 1.0, per_second: 0.001 });
        assert!(slow.take("busy").is_ok());
        for n in 0..2 * SWEEP_ABOVE {
            let _ = slow.take(&format!("other-{n}"));
        }
        assert!(slow.take("busy").is_err(), "a swept bucket would have forgotten the wait");
    }

    #[test]
    fn checking_takes_nothing() {
        let limiter = Limiter::new(RateLimit { burst: 1.0, per_second: 0.001 });
        assert!(limiter.check("a").is_ok());
        assert!(limiter.check("a").is_ok());
        assert!(limiter.take("a").is_ok());
        assert!(limiter.check("a").is_err());
    }
}
