//! Human durations for time-to-live options: `45s`, `30m`, `36h`, `10d`, `2w`, or sums of them
//! such as `1d12h`.

use std::fmt;

use crate::error::InvalidInput;

/// A positive length of time, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ttl(i64);

impl Ttl {
    /// A TTL of `millis` milliseconds.
    pub const fn from_millis(millis: i64) -> Self {
        Self(millis)
    }

    /// The length in milliseconds.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// Parses `10d`, `36h`, `1d12h`, ... Units: `s`, `m`, `h`, `d`, `w`. Must be positive.
    pub fn parse(text: &str, field: &str) -> Result<Self, InvalidInput> {
        let bad = || {
            InvalidInput::new(
                field,
                format!("`{text}` is not a duration (use e.g. 45s, 30m, 36h, 10d, 2w or 1d12h)"),
            )
        };
        let text_trimmed = text.trim();
        if text_trimmed.is_empty() {
            return Err(bad());
        }
        let mut total: i64 = 0;
        let mut digits = String::new();
        for ch in text_trimmed.chars() {
            if ch.is_ascii_digit() {
                digits.push(ch);
                continue;
            }
            let unit_ms: i64 = match ch {
                's' => 1_000,
                'm' => 60_000,
                'h' => 3_600_000,
                'd' => 86_400_000,
                'w' => 7 * 86_400_000,
                _ => return Err(bad()),
            };
            let amount: i64 = digits.parse().map_err(|_| bad())?;
            digits.clear();
            total = amount
                .checked_mul(unit_ms)
                .and_then(|ms| total.checked_add(ms))
                .ok_or_else(|| InvalidInput::new(field, format!("`{text}` is too long")))?;
        }
        if !digits.is_empty() || total <= 0 {
            return Err(bad());
        }
        Ok(Self(total))
    }
}

impl fmt::Display for Ttl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", self.0 / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected_ms: Option<i64>) {
        let got = Ttl::parse(input, "--ttl").ok().map(Ttl::as_millis);
        assert_eq!(got, expected_ms, "input {input:?}");
    }

    #[test]
    fn parses_units_and_sums() {
        check("45s", Some(45_000));
        check("30m", Some(1_800_000));
        check("36h", Some(129_600_000));
        check("10d", Some(864_000_000));
        check("2w", Some(1_209_600_000));
        check("1d12h", Some(129_600_000));
        check(" 7d ", Some(604_800_000));
    }

    #[test]
    fn rejects_malformed() {
        for bad in ["", "10", "d", "10x", "-3d", "0d", "1.5h", "10 d", "99999999999999999w"] {
            check(bad, None);
        }
    }
}
