//! Parses arbitrary UTF-8 as a CoAP URI; anything that parses must decompose into options that
//! compose back into a URI giving the same options, and into its own normalised form.
#![no_main]

use core::fmt;
use core::net::{IpAddr, Ipv4Addr, SocketAddr};

use covey_core::uri::{compose, ComposeError, OptionValue, Uri};
use covey_core::{CoapOption, OptionNumber};
use libfuzzer_sys::fuzz_target;

/// A fixed-size `fmt::Write` target, as a constrained node would use.
struct FixedBuf {
    bytes: [u8; 8192],
    len: usize,
}

impl fmt::Write for FixedBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        self.bytes
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl FixedBuf {
    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).expect("compose writes UTF-8")
    }
}

fn options(uri: &Uri<'_>, destination: SocketAddr) -> Vec<(OptionNumber, OptionValue)> {
    uri.options(Some(destination)).collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    let Ok(uri) = Uri::parse(text) else {
        return;
    };
    let _ = (
        uri.path_segments().count(),
        uri.query_args().count(),
        uri.zone(),
    );
    let destination = uri.socket_addr().unwrap_or(SocketAddr::new(
        IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
        5683,
    ));
    let first = options(&uri, destination);
    for (number, value) in &first {
        assert!(
            number.length_is_valid(value.len()),
            "{number} of {} bytes",
            value.len()
        );
    }

    let mut out = FixedBuf {
        bytes: [0; 8192],
        len: 0,
    };
    let as_options = first.iter().map(|(number, value)| CoapOption {
        number: *number,
        value,
    });
    match compose(as_options, destination, uri.scheme(), &mut out) {
        Ok(()) => {}
        Err(ComposeError::Write) => return, // larger than the buffer
        Err(e) => panic!("options of a parsed URI do not compose: {e}"),
    }
    let composed = out.as_str();
    let again = Uri::parse(composed).unwrap_or_else(|e| panic!("{composed:?}: {e}"));
    assert_eq!(
        options(&again, destination),
        first,
        "{text:?} -> {composed:?}"
    );
    if uri.zone().is_none() {
        assert_eq!(uri.normalized().to_string(), composed, "{text:?}");
    }
});
