//! The paper's metrics of a run: entity response time, member reliability (member replies over member requests) and group reliability
//! (queries every member answered), with the MAC and CoAP counters that explain them.
//!
//! The entity response time is the paper's "time until the last reply the EM waits for":
//! when every member answered, from the client's query to the combined reply; when some did
//! not, the EM still waits out its window (the member timeout, or the multicast leisure plus
//! a margin), so the time is taken to the last member reply the EM got (its fan-out to that
//! reply, as the reply's `t` says). Queries nobody answered have no response time.

use covey_proto::Duration;
use serde::{Deserialize, Serialize};

use super::testbed::Testbed;
use crate::stats;

/// What one or more runs of one sweep point measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunOutcome {
    /// Members of the queried entity.
    pub members: usize,
    /// Runs merged into this outcome.
    pub runs: usize,
    /// Runs whose entities could not all be created (their queries are not counted).
    pub creation_failures: usize,
    /// Queries made.
    pub queries: u64,
    /// Queries without a response time: no reply, or no member answered.
    pub unanswered_queries: u64,
    /// Response time of every answered query, seconds (written to 0.1 ms in the JSON; shard
    /// files keep every bit, so that merged shards aggregate exactly what one run does).
    #[serde(serialize_with = "tenths_of_ms")]
    pub response_times_s: Vec<f64>,
    /// Member replies the combined replies reported.
    pub member_replies: u64,
    /// Member requests: members × queries.
    pub member_requests: u64,
    /// Queries every member answered.
    pub complete_queries: u64,
    /// Frames lost to collisions at their receivers.
    pub collisions: u64,
    /// Datagrams refused by a full MAC queue.
    pub queue_drops: u64,
    /// Frames dropped after 5 busy CCAs.
    pub channel_access_failures: u64,
    /// Frames dropped after 3 MAC retries.
    pub retries_exhausted: u64,
    /// Frames lost to Wi-Fi interference at their receivers.
    pub channel_errors: u64,
    /// MAC retransmissions.
    pub mac_retries: u64,
    /// CoAP retransmissions by the EMs.
    pub coap_retransmissions: u64,
    /// Virtual seconds simulated.
    pub virtual_s: f64,
}

impl RunOutcome {
    /// Reads the outcome of a finished run of `testbed` whose queried entity has `members`.
    pub fn of(testbed: &Testbed, members: usize) -> RunOutcome {
        let log = testbed.log.borrow();
        let mac = testbed.mac_totals();
        let mut o = RunOutcome {
            members,
            runs: 1,
            creation_failures: usize::from(!log.created),
            collisions: mac.rx_collisions,
            queue_drops: mac.queue_drops,
            channel_access_failures: mac.channel_access_failures,
            retries_exhausted: mac.retries_exhausted,
            channel_errors: mac.rx_channel_errors,
            mac_retries: mac.retries,
            coap_retransmissions: testbed.em_retransmissions(),
            virtual_s: testbed.sim.now().as_nanos() as f64 / 1e9,
            ..RunOutcome::default()
        };
        for q in &log.outcomes {
            o.queries += 1;
            o.member_requests += members as u64;
            o.member_replies += q.answered.min(members) as u64;
            o.complete_queries += u64::from(q.answered >= members);
            let time = if q.answered >= members {
                q.response_time
            } else {
                q.last_reply
            };
            match time {
                Some(t) => o.response_times_s.push(secs(t)),
                None => o.unanswered_queries += 1,
            }
        }
        o
    }

    /// Adds `other`'s runs to these.
    pub fn merge(&mut self, other: &RunOutcome) {
        self.members = self.members.max(other.members);
        self.runs += other.runs;
        self.creation_failures += other.creation_failures;
        self.queries += other.queries;
        self.unanswered_queries += other.unanswered_queries;
        self.response_times_s
            .extend_from_slice(&other.response_times_s);
        self.member_replies += other.member_replies;
        self.member_requests += other.member_requests;
        self.complete_queries += other.complete_queries;
        self.collisions += other.collisions;
        self.queue_drops += other.queue_drops;
        self.channel_access_failures += other.channel_access_failures;
        self.retries_exhausted += other.retries_exhausted;
        self.channel_errors += other.channel_errors;
        self.mac_retries += other.mac_retries;
        self.coap_retransmissions += other.coap_retransmissions;
        self.virtual_s += other.virtual_s;
    }

    /// Mean entity response time, seconds (NaN without an answered query).
    pub fn mean_response_s(&self) -> f64 {
        stats::mean(&self.response_times_s).unwrap_or(f64::NAN)
    }

    /// Median entity response time, seconds (NaN without an answered query), as
    /// [`crate::stats`] defines quantiles.
    pub fn median_response_s(&self) -> f64 {
        stats::median(&self.response_times_s).unwrap_or(f64::NAN)
    }

    /// Shortest entity response time, seconds.
    pub fn min_response_s(&self) -> f64 {
        self.response_times_s
            .iter()
            .copied()
            .fold(f64::NAN, f64::min)
    }

    /// Longest entity response time, seconds.
    pub fn max_response_s(&self) -> f64 {
        self.response_times_s
            .iter()
            .copied()
            .fold(f64::NAN, f64::max)
    }

    /// Member replies over member requests (NaN without a query).
    pub fn member_reliability(&self) -> f64 {
        ratio(self.member_replies, self.member_requests)
    }

    /// Queries every member answered over queries (NaN without a query).
    pub fn group_reliability(&self) -> f64 {
        ratio(self.complete_queries, self.queries)
    }

    /// A counter per query.
    pub fn per_query(&self, count: u64) -> f64 {
        ratio(count, self.queries)
    }
}

/// A labelled outcome, for tables and JSON.
#[derive(Debug, Clone, Serialize)]
pub struct GroupPoint {
    /// Members.
    pub members: usize,
    /// The swept value (a delay in ms, a Wi-Fi load in Mbit/s, ...).
    pub x: f64,
    /// The variant ("unicast", "multicast", "ACK_TIMEOUT 1 s", ...).
    pub variant: String,
    /// What was measured.
    pub outcome: RunOutcome,
}

/// Seconds rounded to 0.1 ms in human-readable formats (the JSON report), which keeps the
/// JSON of a sweep small; binary formats (shard files, CBOR) get every bit.
fn tenths_of_ms<S: serde::Serializer>(times: &[f64], s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        s.collect_seq(times.iter().map(|t| (t * 1e4).round() / 1e4))
    } else {
        s.collect_seq(times)
    }
}

/// Deserialises a duration written by [`crate::report::json::serialize_secs`], to the
/// nanosecond it was.
pub fn deserialize_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = f64::deserialize(d)?;
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(serde::de::Error::custom(format!(
            "{secs} is not a duration"
        )));
    }
    Ok(Duration::from_nanos((secs * 1e9).round() as u64))
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        f64::NAN
    } else {
        a as f64 / b as f64
    }
}

fn secs(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_rounds_response_times_and_shard_files_keep_every_bit() {
        let o = RunOutcome {
            response_times_s: vec![0.123_456_789, 2.5],
            ..RunOutcome::default()
        };
        let json = serde_json::to_value(&o).unwrap();
        assert_eq!(json["response_times_s"], serde_json::json!([0.1235, 2.5]));
        let mut cbor = Vec::new();
        ciborium::into_writer(&o, &mut cbor).unwrap();
        let back: RunOutcome = ciborium::from_reader(cbor.as_slice()).unwrap();
        assert_eq!(back.response_times_s, o.response_times_s);
    }

    #[test]
    fn durations_read_back_to_the_nanosecond() {
        #[derive(Serialize, Deserialize)]
        struct T {
            #[serde(
                serialize_with = "crate::report::json::serialize_secs",
                deserialize_with = "deserialize_secs"
            )]
            d: Duration,
        }
        for d in [0, 500_000_000, 1_234_000_000, 60_000_000_001] {
            let t = T {
                d: Duration::from_nanos(d),
            };
            let back: T = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
            assert_eq!(back.d, t.d);
        }
        assert!(serde_json::from_str::<T>(r#"{"d":-1.0}"#).is_err());
    }

    #[test]
    fn the_median_interpolates_as_the_lab_defines_it() {
        let o = RunOutcome {
            response_times_s: vec![4.0, 1.0, 3.0, 2.0],
            ..RunOutcome::default()
        };
        assert_eq!(o.median_response_s(), 2.5);
        assert!(RunOutcome::default().median_response_s().is_nan());
    }
}
