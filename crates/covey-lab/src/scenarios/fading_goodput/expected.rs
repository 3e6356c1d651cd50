//! The goodput each error model predicts in closed form, to check the simulated curves
//! against: a CON exchange succeeds on an attempt when neither the request nor the response
//! is lost (each with the model's datagram loss); attempt k starts at ACK_TIMEOUT · (2^k − 1)
//! (fixed timeout, no randomisation) and lasts its air time on the standard's timeline, MAC
//! retries included; after MAX_RETRANSMIT + 1 attempts the client gives up at
//! ACK_TIMEOUT · (2^(MAX_RETRANSMIT+1) − 1). Goodput is payload × P(success) / E[time].
//! Single-message transfers (payload up to 1200 bytes, one 6LoWPAN-fragmented datagram).

use covey_sim::media::fading::{db_to_linear, rayleigh_block_frame_error_rate, PaperFadingModel};

use super::client::RESOURCE;
use super::error_model::ErrorModel;
use super::Params;
use crate::scenarios::one_hop::{frame_time_s, LinkFormat};

/// The largest body sent in one message: the paper's largest payload, sent as one datagram
/// of up to 12 fragments as TinyCoAP did (the engine's `Config::single_message_payload`).
pub const SINGLE_MESSAGE_BODY: usize = 1200;

/// CoAP header bytes before the token.
const COAP_HEADER: usize = 4;

/// Expected goodput (bytes/s) of `model` at `snr_db` for `payload` bytes, or `None` for a
/// block-wise transfer or an SNR the model does not know.
pub fn expected_goodput(
    model: ErrorModel,
    snr_db: f64,
    payload: usize,
    params: &Params,
    token_length: usize,
) -> Option<f64> {
    if payload > SINGLE_MESSAGE_BODY {
        return None;
    }
    let link = LinkFormat::default();
    // Request: header, token, Uri-Path (one option byte for a short value). Response:
    // header, token, payload marker, payload.
    let request = COAP_HEADER + token_length + 1 + RESOURCE.len();
    let response = COAP_HEADER + token_length + 1 + payload;
    let lost = |udp| model.datagram_loss(snr_db, udp, &link);
    let success = (1.0 - lost(request)) * (1.0 - lost(response));
    if !success.is_finite() {
        return None;
    }
    let air =
        air_time_s(model, snr_db, request, &link)? + air_time_s(model, snr_db, response, &link)?;
    let timeout = params.ack_timeout().as_secs_f64();
    let attempts = i32::from(params.max_retransmit) + 1;
    let (mut time, mut reach) = (0.0, 1.0);
    for k in 0..attempts {
        let start = timeout * (2f64.powi(k) - 1.0);
        time += reach * success * (start + air);
        reach *= 1.0 - success;
    }
    time += reach * timeout * (2f64.powi(attempts) - 1.0);
    Some(payload as f64 * (1.0 - reach) / time)
}

/// Channel time of one datagram's frames, each repeated as often as the model's frame errors
/// make the MAC retry it on average.
fn air_time_s(model: ErrorModel, snr_db: f64, udp: usize, link: &LinkFormat) -> Option<f64> {
    let frames = link.frames(udp)?;
    let retries = f64::from(link.mac.max_frame_retries);
    let rayleigh = |air_bytes: usize| {
        rayleigh_block_frame_error_rate(
            db_to_linear(snr_db),
            u32::try_from(air_bytes * 8).unwrap_or(u32::MAX),
        )
    };
    let mut total = 0.0;
    for mpdu in frames {
        let fails = match model {
            ErrorModel::Paper => 0.0,
            ErrorModel::Independent => PaperFadingModel::at_snr_db(snr_db)?.frame_error,
            ErrorModel::Rayleigh => {
                let data = rayleigh(link.phy.phy_header_bytes + mpdu);
                1.0 - (1.0 - data) * (1.0 - rayleigh(link.phy.ack_air_bytes()))
            }
        };
        // Attempts: 1 + q + q² + … up to the retry limit.
        let attempts: f64 = (0..=retries as i32).map(|i| fails.powi(i)).sum();
        total += attempts * frame_time_s(link, mpdu);
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_channel_gives_air_time_goodput_and_losses_cost_timeouts() {
        let params = Params::default();
        let good = expected_goodput(ErrorModel::Paper, 2.5, 100, &params, 8).unwrap_or(0.0);
        let bad = expected_goodput(ErrorModel::Paper, 1.0, 100, &params, 8).unwrap_or(0.0);
        // At 2.5 dB: about 17 ms of air time, plus 1 s for the 3 % of exchanges that lose a
        // message; at 1 dB seconds of timeouts.
        assert!(good > 1500.0 && good < 3000.0, "{good}");
        assert!(bad < 100.0, "{bad}");
        // Up to 1200 bytes is one datagram; beyond that the closed form does not apply.
        assert!(expected_goodput(ErrorModel::Paper, 2.5, 1200, &params, 8).is_some());
        assert_eq!(
            expected_goodput(ErrorModel::Paper, 2.5, 1201, &params, 8),
            None
        );
        assert_eq!(
            expected_goodput(ErrorModel::Paper, 3.0, 100, &params, 8),
            None
        );
    }
}
