//! The three ways the scenario corrupts traffic at a given SNR, and the closed-form
//! datagram loss each one predicts.
//!
//! - `paper`: the paper's own method. The radio carries every frame intact; the receiver's
//!   UDP layer discards a datagram of f fragments when a number of a fixed random sequence
//!   falls at or below C_f = P^(r+1) · (1 − (1 − P)^f) / P (Table 4).
//! - `independent`: every data frame (each fragment, each MAC attempt) is corrupted with the
//!   paper's P, ACKs pass; the MAC retries each fragment r = 3 times, so a datagram is lost
//!   with 1 − (1 − P^(r+1))^f.
//! - `rayleigh`: frames (ACKs included) fade with the block-Rayleigh frame error of the
//!   802.15.4 O-QPSK PHY at the SNR, from each frame's length (`media::fading`).

use covey_sim::media::fading::{
    db_to_linear, rayleigh_block_frame_error_rate, FadingErrorRate, PaperFadingModel,
};
use serde::{Deserialize, Serialize};

use crate::scenarios::one_hop::LinkFormat;

/// How frames or datagrams are corrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorModel {
    /// The paper's application-layer error rate C_f, applied at the receiver's UDP layer.
    Paper,
    /// The paper's P per data frame on the radio, fragments lost independently.
    Independent,
    /// Block Rayleigh fading of every frame from the O-QPSK bit error rate at the SNR.
    Rayleigh,
}

impl ErrorModel {
    /// Every model, the paper's first.
    pub const ALL: [ErrorModel; 3] = [
        ErrorModel::Paper,
        ErrorModel::Independent,
        ErrorModel::Rayleigh,
    ];

    /// Every model's name, in the order of [`ErrorModel::ALL`].
    pub const NAMES: &'static [&'static str] = &["paper", "independent", "rayleigh"];

    /// The model's name in parameters and reports.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorModel::Paper => "paper",
            ErrorModel::Independent => "independent",
            ErrorModel::Rayleigh => "rayleigh",
        }
    }

    /// The model named `name`.
    pub fn from_name(name: &str) -> Option<ErrorModel> {
        ErrorModel::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The frame error rule the 802.15.4 medium applies, if any (the paper model corrupts
    /// nothing on the radio).
    pub fn frame_errors(self, snr_db: f64) -> Option<FadingErrorRate> {
        match self {
            ErrorModel::Paper => None,
            ErrorModel::Independent => PaperFadingModel::at_snr_db(snr_db)
                .map(|m| FadingErrorRate::PaperFrameError(m.frame_error)),
            ErrorModel::Rayleigh => Some(FadingErrorRate::RayleighBlock {
                mean_snr_db: snr_db,
            }),
        }
    }

    /// The closed-form loss of a datagram of `payload_bytes` of UDP payload over one hop.
    pub fn datagram_loss(self, snr_db: f64, payload_bytes: usize, link: &LinkFormat) -> f64 {
        let Some(frames) = link.frames(payload_bytes) else {
            return 1.0;
        };
        let f = u32::try_from(frames.len()).unwrap_or(u32::MAX);
        let attempts = i32::from(link.mac.max_frame_retries) + 1;
        match self {
            ErrorModel::Paper => {
                PaperFadingModel::at_snr_db(snr_db).map_or(f64::NAN, |m| m.datagram_loss(f))
            }
            ErrorModel::Independent => PaperFadingModel::at_snr_db(snr_db)
                .map_or(f64::NAN, |m| m.independent_fragments_loss(f)),
            ErrorModel::Rayleigh => {
                let snr = db_to_linear(snr_db);
                let error = |air_bytes: usize| {
                    rayleigh_block_frame_error_rate(
                        snr,
                        u32::try_from(air_bytes * 8).unwrap_or(u32::MAX),
                    )
                };
                let ack = error(link.phy.ack_air_bytes());
                let last = frames.len().saturating_sub(1);
                let survive: f64 = frames
                    .iter()
                    .enumerate()
                    .map(|(i, &mpdu)| {
                        let data = error(link.phy.phy_header_bytes + mpdu);
                        // The last fragment is through once its data arrives; an earlier one
                        // only once an ACK comes back, or the sender drops the datagram.
                        let attempt_fails = if i == last {
                            data
                        } else {
                            1.0 - (1.0 - data) * (1.0 - ack)
                        };
                        1.0 - attempt_fails.powi(attempts)
                    })
                    .product();
                1.0 - survive
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_agree_on_one_frame_and_part_on_many() {
        let link = LinkFormat::default();
        let one = link.full_payload(1).unwrap_or(0);
        let twelve = link.full_payload(12).unwrap_or(0);
        let paper = ErrorModel::Paper.datagram_loss(2.5, one, &link);
        let independent = ErrorModel::Independent.datagram_loss(2.5, one, &link);
        assert!((paper - 0.0123).abs() < 1e-4, "{paper}");
        assert!((paper - independent).abs() < 1e-12);
        assert!(
            ErrorModel::Independent.datagram_loss(2.5, twelve, &link)
                > ErrorModel::Paper.datagram_loss(2.5, twelve, &link)
        );
        // Rayleigh fading at a higher SNR loses less.
        let r1 = ErrorModel::Rayleigh.datagram_loss(1.0, twelve, &link);
        let r25 = ErrorModel::Rayleigh.datagram_loss(2.5, twelve, &link);
        assert!(r25 < r1 && r1 < 1.0, "{r1} {r25}");
    }

    #[test]
    fn names_round_trip() {
        for (m, &name) in ErrorModel::ALL.into_iter().zip(ErrorModel::NAMES) {
            assert_eq!(m.name(), name);
            assert_eq!(ErrorModel::from_name(m.name()), Some(m));
        }
        assert_eq!(ErrorModel::from_name(" Paper "), Some(ErrorModel::Paper));
        assert_eq!(ErrorModel::from_name("awgn"), None);
    }
}
