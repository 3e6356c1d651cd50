//! The Responder against RFC 9529 §3's trace (method 3, cipher suite 2): with the trace's
//! ephemeral key, C_R and CRED_R, message_2, message_4 and the OSCORE Master Secret and Salt
//! come out byte for byte.

use covey_edhoc::{OwnIdentity, Responder, TrustedPeers};
use rand_core::{CryptoRng, RngCore};

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

const MESSAGE_1: &str =
    "0382060258208af6f430ebe18d34184017a9a11bf511c8dff8f834730b96c1b7c8dbca2fc3b637";
const MESSAGE_2: &str =
    "582b419701d7f00a26c2dc587a36dd752549f33763c893422c8ea0f955a13a4ff5d59862a1eef9e0e7e1886fcd";
const MESSAGE_3: &str = "52e562097bc417dd5919485ac7891ffd90a9fc";
const MESSAGE_4: &str = "4828c966b7ca304f83";
const CRED_I: &str = "a2027734322d35302d33312d46462d45462d33372d33322d333908a101a5010202412b2001215820ac75e9ece3e50bfc8ed60399889522405c47bf16df96660a41298cb4307f7eb62258206e5de611388a4b8a8211334ac7d37ecb52a387d257e6db3c2a93df21ff3affc8";
const CRED_R: &str = "a2026b6578616d706c652e65647508a101a501020241322001215820bbc34960526ea4d32e940cad2a234148ddc21791a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c224c51eabf6072";
const R: &str = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac";
/// The Responder's ephemeral private key Y.
const Y: &str = "e2f4126777205e853b437d6eaca1e1f753cdcc3e2c69fa884b0a1a640977e418";

/// Hands out Y, as the trace's Responder drew it.
struct TraceRng(Vec<u8>);

impl RngCore for TraceRng {
    fn next_u32(&mut self) -> u32 {
        unreachable!("the key pair draws bytes")
    }
    fn next_u64(&mut self) -> u64 {
        unreachable!("the key pair draws bytes")
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        let n = dest.len();
        dest.copy_from_slice(&self.0[..n]);
        self.0.drain(..n);
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for TraceRng {}

#[test]
fn the_responder_reproduces_rfc_9529_chapter_3() {
    let own = OwnIdentity::new(&unhex(CRED_R), &unhex(R)).unwrap();
    // The trace's C_R is -8, CBOR 0x27.
    let (responder, message_2) =
        Responder::respond_with_rng(TraceRng(unhex(Y)), &own, &unhex(MESSAGE_1), |id| {
            (id == [0x27]).then_some(0)
        })
        .unwrap();
    assert_eq!(message_2, unhex(MESSAGE_2));
    let trusted = TrustedPeers::new([unhex(CRED_I).as_slice()]).unwrap();
    let (established, message_4) = responder
        .receive_message_3(&unhex(MESSAGE_3), &trusted)
        .unwrap();
    assert_eq!(message_4, unhex(MESSAGE_4));
    assert_eq!(
        established.master_secret.to_vec(),
        unhex("f9868f6a3aca78a05d1485b35030b162")
    );
    assert_eq!(established.master_salt.to_vec(), unhex("ada24c7dbfc85eeb"));
    assert_eq!(established.peer_kid, "2b");
    // Appendix A.1: the Responder sends as C_I (-24, 0x37) and hears C_R (0x27).
    assert_eq!(
        (established.sender_id, established.recipient_id),
        (vec![0x37], vec![0x27])
    );
}
