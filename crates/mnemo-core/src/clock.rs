//! Time: the [`Timestamp`] every record carries and the [`Clock`] port that supplies "now".
//!
//! Every time-dependent rule (expiry, decay, TTLs) reads the time from a `Clock`, so a fixed
//! clock (the CLI's `--now`) reaches all of them.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

use crate::duration::Ttl;
use crate::error::InvalidInput;

/// A point in time, UTC, with millisecond precision (milliseconds since the Unix epoch).
///
/// Serialized as RFC 3339 with exactly three fractional digits and a `Z` offset, so a value
/// round-trips byte for byte through export and import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The earliest instant a record may carry: 1970-01-01T00:00:00.000Z.
    pub const MIN: Timestamp = Timestamp(0);
    /// The latest instant a record may carry: 9999-12-31T23:59:59.999Z.
    pub const MAX: Timestamp = Timestamp(253_402_300_799_999);

    /// An RFC 3339 time as a JSON Schema pattern, with the years a record may hold: after
    /// the Unix epoch (a year from 1971 keeps every offset clear of it), up to 9999.
    pub const SCHEMA_PATTERN: &'static str = "^(197[1-9]|19[89][0-9]|[2-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$";

    /// The timestamp `millis` milliseconds after the Unix epoch.
    pub const fn from_millis(millis: i64) -> Self {
        Self(millis)
    }

    /// Milliseconds since the Unix epoch.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// Parses an RFC 3339 date-time (any offset); sub-millisecond digits are truncated.
    pub fn parse(text: &str, field: &str) -> Result<Self, InvalidInput> {
        let parsed = OffsetDateTime::parse(text.trim(), &Rfc3339).map_err(|_| {
            InvalidInput::new(
                field,
                format!("`{text}` is not an RFC 3339 time (e.g. 2026-01-31T09:00:00Z)"),
            )
        })?;
        Self::from_offset_date_time(parsed).in_range(field)
    }

    /// This instant, if it lies within [`Timestamp::MIN`]..=[`Timestamp::MAX`]; otherwise an
    /// input error naming `field`.
    pub fn in_range(self, field: &str) -> Result<Self, InvalidInput> {
        if self > Self::MAX {
            return Err(InvalidInput::new(
                field,
                format!("is after {}, the latest time a record can hold", Self::MAX),
            ));
        }
        if self < Self::MIN {
            return Err(InvalidInput::new(
                field,
                format!("is before {}, the earliest time a record can hold", Self::MIN),
            ));
        }
        Ok(self)
    }

    /// Converts from a `time` value, truncating to milliseconds.
    pub fn from_offset_date_time(value: OffsetDateTime) -> Self {
        let nanos = value.unix_timestamp_nanos();
        Self(i64::try_from(nanos.div_euclid(1_000_000)).unwrap_or(i64::MAX))
    }

    /// This timestamp plus `ttl`, saturating at the end of representable time.
    pub fn plus(self, ttl: Ttl) -> Self {
        Self(self.0.saturating_add(ttl.as_millis()))
    }

    /// Days elapsed from `earlier` to `self` (negative if `earlier` is later).
    pub fn days_since(self, earlier: Timestamp) -> f64 {
        (self.0 - earlier.0) as f64 / 86_400_000.0
    }

    fn to_offset_date_time(self) -> Option<OffsetDateTime> {
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(self.0) * 1_000_000).ok()
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 with three fractional digits and `Z`; an instant outside 0000..9999 (which no
    /// validated record holds) is written as `@<ms>ms`, never as another date.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let format = format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        );
        let text = self
            .to_offset_date_time()
            .filter(|t| (0..=9999).contains(&t.year()))
            .and_then(|t| t.format(&format).ok());
        match text {
            Some(text) => f.write_str(&text),
            None => write!(f, "@{}ms", self.0),
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse(&text, "time").map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "date-time",
            "pattern": Timestamp::SCHEMA_PATTERN,
            "description": "RFC 3339, UTC, millisecond precision"
        })
    }
}

/// The source of "now" for every time-dependent rule.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// A clock stopped at one instant: the CLI's `--now`, and tests.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub Timestamp);

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.0
    }
}

/// A clock that reads what it was last set to: evaluations and tests that replay a
/// conversation at the times things were said.
#[derive(Debug, Default)]
pub struct ManualClock(std::sync::atomic::AtomicI64);

impl ManualClock {
    /// A clock reading `at`.
    pub fn new(at: Timestamp) -> Self {
        Self(std::sync::atomic::AtomicI64::new(at.as_millis()))
    }

    /// Moves the clock to `at` (forward or back).
    pub fn set(&self, at: Timestamp) {
        self.0.store(at.as_millis(), std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.0.load(std::sync::atomic::Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_at_millisecond_precision() {
        let t = Timestamp::parse("2026-03-01T10:20:30.123456+02:00", "now").unwrap();
        assert_eq!(t.to_string(), "2026-03-01T08:20:30.123Z");
        let again = Timestamp::parse(&t.to_string(), "now").unwrap();
        assert_eq!(t, again);
    }

    #[test]
    fn malformed_time_names_the_field() {
        let err = Timestamp::parse("yesterday", "--now").unwrap_err();
        assert_eq!(err.field, "--now");
        assert!(err.problem.contains("yesterday"));
    }

    #[test]
    fn days_since_is_fractional() {
        let a = Timestamp::from_millis(0);
        let b = Timestamp::from_millis(36 * 3_600_000);
        assert!((b.days_since(a) - 1.5).abs() < 1e-12);
    }

    proptest::proptest! {
        /// Every instant a record may hold, 1970 to 9999, is written and read back exactly.
        #[test]
        fn every_instant_in_range_round_trips(ms in Timestamp::MIN.as_millis()..=Timestamp::MAX.as_millis()) {
            let t = Timestamp::from_millis(ms);
            let text = t.to_string();
            proptest::prop_assert_eq!(Timestamp::parse(&text, "t").unwrap(), t, "{}", text);
            let json = serde_json::to_string(&t).unwrap();
            proptest::prop_assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), t);
        }

        /// An instant outside that range is an input error naming the field, never a date.
        #[test]
        fn instants_out_of_range_are_refused(ms in proptest::prop_oneof![
            i64::MIN..Timestamp::MIN.as_millis(),
            Timestamp::MAX.as_millis() + 1..=i64::MAX,
        ]) {
            let t = Timestamp::from_millis(ms);
            let error = t.in_range("expires_at").unwrap_err();
            proptest::prop_assert_eq!(error.field.as_str(), "expires_at");
            proptest::prop_assert!(t.to_string().starts_with('@'));
        }
    }

    #[test]
    fn the_range_ends_are_1970_and_9999() {
        assert_eq!(Timestamp::MIN.to_string(), "1970-01-01T00:00:00.000Z");
        assert_eq!(Timestamp::MAX.to_string(), "9999-12-31T23:59:59.999Z");
        let before = Timestamp::parse("1969-12-31T23:59:59Z", "ts").unwrap_err();
        assert!(before.problem.contains("before 1970"), "{}", before.problem);
        // A TTL that ends after 9999 saturates past MAX, which validation refuses.
        let far = Timestamp::MAX.plus(Ttl::from_millis(1));
        assert!(far.in_range("expires_at").is_err());
    }
}
