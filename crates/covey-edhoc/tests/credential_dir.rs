//! Reading an EDHOC credential directory's edhoc.json.

use covey_edhoc::credential_dir::parse;

const CRED_R: &str = "a2026008a101a5010202410a2001215820bbc34960526ea4d32e940cad2a234148ddc21791a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c224c51eabf6072";
const R: &str = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac";

#[test]
fn reads_own_identity_and_trusted_peers() {
    let text = format!(
        r#"{{"own": {{"ccs": "{CRED_R}", "private_key": "{R}"}}, "trusted": ["{CRED_R}"]}}"#
    );
    let (own, _) = parse(&text).unwrap();
    assert_eq!(own.kid(), "0a");
}

#[test]
fn says_what_is_wrong() {
    let short_key =
        format!(r#"{{"own": {{"ccs": "{CRED_R}", "private_key": "00"}}, "trusted": []}}"#);
    assert_eq!(
        parse(&short_key).unwrap_err().to_string(),
        "EDHOC credential: private key must be 32 bytes"
    );
    let not_hex = format!(r#"{{"own": {{"ccs": "zz", "private_key": "{R}"}}, "trusted": []}}"#);
    assert_eq!(
        parse(&not_hex).unwrap_err().to_string(),
        "EDHOC credential: own.ccs is not hex"
    );
    let not_ccs = format!(r#"{{"own": {{"ccs": "a0", "private_key": "{R}"}}, "trusted": []}}"#);
    assert!(parse(&not_ccs)
        .unwrap_err()
        .to_string()
        .contains("not a CCS"));
    assert!(parse("{}").is_err());
}
