//! Wall-clock times as text: an instant as RFC 3339 in UTC, and the calendar date of a day
//! count, with no time-zone database and no dependency (pure arithmetic on the Unix time; the
//! caller reads the clock).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A duration as people read it in a message: whole seconds as `30 s`, anything else in
/// milliseconds (`500 ms`, `1500 ms`).
pub fn human(d: Duration) -> String {
    if d.as_millis() < 1000 || d.subsec_millis() != 0 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", d.as_secs())
    }
}

/// The proleptic Gregorian (year, month, day) of `days` since 1970-01-01, after Howard
/// Hinnant's public-domain civil-from-days algorithm.
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    // Both are in range by construction (1..=12, 1..=31).
    (y, m as u32, d as u32)
}

/// `t` as RFC 3339 in UTC with milliseconds: `2026-12-03T07:20:01.123Z`. A time before 1970
/// is written as 1970-01-01T00:00:00.000Z.
pub fn rfc3339(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (y, m, d) = civil_date(i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2));
    let of_day = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        since.subsec_millis()
    )
}

/// The calendar date (UTC) of `t` as `YYYY-MM-DD`.
pub fn date(t: SystemTime) -> String {
    let mut text = rfc3339(t);
    text.truncate(10);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn instants_are_written_as_rfc_3339_in_utc() {
        let at = |secs: u64, ms: u64| {
            rfc3339(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(ms))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day of a century year divisible by 400), 23:59:59.999.
        assert_eq!(at(951_868_799, 999), "2000-02-29T23:59:59.999Z");
        assert_eq!(at(951_868_800, 0), "2000-03-01T00:00:00.000Z");
        // 2100 is not a leap year.
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
        assert_eq!(at(1_796_282_401, 123), "2026-12-03T07:20:01.123Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(civil_date(-1), (1969, 12, 31));
        assert_eq!(
            date(UNIX_EPOCH + Duration::from_secs(1_796_282_401)),
            "2026-12-03"
        );
    }
}
