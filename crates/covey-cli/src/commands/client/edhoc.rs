//! `--edhoc DIR`: an EDHOC handshake (RFC 9528 Appendix A.2) with the server first, whose
//! OSCORE context (Appendix A.1) then protects the request.

use crate::exit::{ExitKind, Failure};
use covey::{Client, ClientBuilder};
use covey_core::Code;
use covey_edhoc::{credential_dir, Initiator};
use covey_proto::covey_oscore::SecurityContext;
use covey_proto::Config;
use std::path::Path;
use std::time::Duration;

/// `/.well-known/edhoc` at the authority of `uri`.
pub fn edhoc_uri(uri: &str) -> Result<String, Failure> {
    let bad = || Failure::new(ExitKind::Usage, format!("{uri}: no scheme and authority"));
    let start = uri.find("://").map(|i| i + 3).ok_or_else(bad)?;
    let end = uri[start..]
        .find(['/', '?', '#'])
        .map_or(uri.len(), |i| start + i);
    Ok(format!("{}{}", &uri[..end], covey_edhoc::WELL_KNOWN_EDHOC))
}

/// The OSCORE context an EDHOC handshake set up, and the message_3 the first request
/// protected with it carries when it is an EDHOC + OSCORE request (RFC 9668 §3.2).
pub struct Handshake {
    pub context: SecurityContext,
    pub message_3: Option<Vec<u8>>,
}

/// Runs EDHOC with the server of `uri` under the credentials in `dir`: message_1 and 2, then
/// with `combined` message_3 left for the first OSCORE request to carry (RFC 9668), else
/// message_3 on its own and message_4 verified (RFC 9528 Appendix A.2).
pub async fn handshake(
    uri: &str,
    dir: &Path,
    (config, timeout): (Config, Duration),
    combined: bool,
) -> Result<Handshake, Failure> {
    let (own, trusted) =
        credential_dir::load(dir).map_err(|e| Failure::new(ExitKind::Usage, e.to_string()))?;
    let target = edhoc_uri(uri)?;
    let client = ClientBuilder::new().config(config).build()?;
    let (initiator, payload_1) =
        Initiator::start(&own).map_err(|e| Failure::new(ExitKind::Other, e.to_string()))?;
    let message_2 = post(&client, &target, payload_1, timeout).await?;
    let (payload_3, awaiting) = initiator
        .receive_message_2(&message_2, &trusted)
        .map_err(|e| Failure::new(ExitKind::Other, e.to_string()))?;
    let failed = |e: covey_edhoc::EdhocError| Failure::new(ExitKind::Other, e.to_string());
    let (established, message_3) = if combined {
        // The server's protected answer to the first request confirms the key.
        let message_3 = awaiting.message_3().to_vec();
        let established = awaiting.complete_without_message_4().map_err(failed)?;
        (established, Some(message_3))
    } else {
        let message_4 = post(&client, &target, payload_3, timeout).await?;
        // message_4 confirms the key (RFC 9528 §5.5); a server may answer an empty 2.04.
        let established = match message_4.is_empty() {
            true => awaiting.complete_without_message_4(),
            false => awaiting.receive_message_4(&message_4),
        }
        .map_err(failed)?;
        (established, None)
    };
    client.shutdown().await;
    tracing::info!(
        "EDHOC: server authenticated as edhoc:{}",
        established.peer_kid
    );
    let context = established
        .security_context()
        .map_err(|e| Failure::new(ExitKind::Other, format!("EDHOC: {e:?}")))?;
    Ok(Handshake { context, message_3 })
}

/// POSTs one EDHOC message and returns the 2.04's payload.
async fn post(
    client: &Client,
    target: &str,
    payload: Vec<u8>,
    timeout: Duration,
) -> Result<Vec<u8>, Failure> {
    let response = client
        .request(Code::POST, target)
        .payload(payload)
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| Failure::of_request(target, e))?;
    if response.code != Code::CHANGED {
        let kind = if response.code.class() == 5 {
            ExitKind::ServerError
        } else {
            ExitKind::ClientError
        };
        return Err(Failure::new(
            kind,
            format!(
                "EDHOC refused by {target}: {} {}",
                response.code,
                String::from_utf8_lossy(&response.payload)
            ),
        ));
    }
    Ok(response.payload)
}

#[cfg(test)]
mod tests {
    use super::edhoc_uri;

    #[test]
    fn the_edhoc_resource_is_at_the_uris_authority() {
        assert_eq!(
            edhoc_uri("coap://[::1]:5683/a/b?x=1").unwrap(),
            "coap://[::1]:5683/.well-known/edhoc"
        );
        assert_eq!(edhoc_uri("coap://h").unwrap(), "coap://h/.well-known/edhoc");
        assert!(edhoc_uri("h/a").is_err());
    }
}
