//! A request over the client's block-wise body limit fails before anything is sent, and the
//! error names the limit instead of blaming the datagram size; a configuration that breaks a
//! rule is refused up front.

use covey::{ClientBuilder, Code, Config, Error};

#[tokio::test]
async fn a_body_over_max_body_size_names_the_limit() {
    let config = Config {
        max_body_size: 4096,
        ..Config::default()
    };
    let client = ClientBuilder::new().config(config).build().unwrap();
    let err = client
        .request(Code::PUT, "coap://127.0.0.1:9/x")
        .payload(vec![b'x'; 4097])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::TooLarge), "{err:?}");
    assert!(err.to_string().contains("max_body_size"), "{err}");
    client.shutdown().await;
}

#[tokio::test]
async fn a_configuration_that_breaks_a_rule_is_refused_before_binding() {
    let config = Config {
        block_szx: 7,
        ..Config::default()
    };
    let err = ClientBuilder::new().config(config).build().unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "bad configuration: block_szx is 7, but must be 0 to 6"
    );
}
