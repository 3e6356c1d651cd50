//! The current UTC time as RFC 3339 text, without a date library; made once per second.

/// The text of the last second asked for, so requests within one second format nothing.
#[derive(Debug, Default)]
pub struct UtcText {
    secs: Option<u64>,
    text: String,
}

impl UtcText {
    /// `2024-05-01T12:34:56Z` for `secs` since the Unix epoch.
    pub fn at(&mut self, secs: u64) -> &str {
        if self.secs != Some(secs) {
            self.text = format_utc(secs);
            self.secs = Some(secs);
        }
        &self.text
    }
}

/// RFC 3339 text for `secs` since the Unix epoch (days to civil date per H. Hinnant).
fn format_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_utc(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn the_text_follows_the_second() {
        let mut t = UtcText::default();
        assert_eq!(t.at(0), "1970-01-01T00:00:00Z");
        assert_eq!(t.at(1), "1970-01-01T00:00:01Z");
    }
}
