//! Content-Format numbers and media types (RFC 7252 §12.3 and the IANA registry).

/// A Content-Format number (the value of Content-Format and Accept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentFormat(pub u16);

macro_rules! formats {
    ($( $konst:ident = $num:literal, $media:literal; )*) => {
        impl ContentFormat {
            $(
                #[doc = concat!("`", $media, "` (", stringify!($num), ").")]
                pub const $konst: ContentFormat = ContentFormat($num);
            )*
        }
        /// Every registered Content-Format this crate names, ascending.
        pub static CONTENT_FORMATS: &[(ContentFormat, &str)] = &[
            $( (ContentFormat($num), $media), )*
        ];
    };
}

/// The short names [`ContentFormat::from_name`] takes besides numbers and media types.
const ALIASES: &[(&str, ContentFormat)] = &[
    ("text", ContentFormat::TEXT_PLAIN),
    ("text/plain", ContentFormat::TEXT_PLAIN),
    ("plain", ContentFormat::TEXT_PLAIN),
    ("link", ContentFormat::LINK_FORMAT),
    ("link-format", ContentFormat::LINK_FORMAT),
    ("xml", ContentFormat::XML),
    ("octet", ContentFormat::OCTET_STREAM),
    ("octet-stream", ContentFormat::OCTET_STREAM),
    ("binary", ContentFormat::OCTET_STREAM),
    ("exi", ContentFormat::EXI),
    ("json", ContentFormat::JSON),
    ("cbor", ContentFormat::CBOR),
    ("senml+json", ContentFormat::SENML_JSON),
    ("senml+cbor", ContentFormat::SENML_CBOR),
    ("sensml+json", ContentFormat::SENSML_JSON),
    ("sensml+cbor", ContentFormat::SENSML_CBOR),
];

formats! {
    TEXT_PLAIN = 0, "text/plain;charset=utf-8";
    COSE_ENCRYPT0 = 16, "application/cose;cose-type=\"cose-encrypt0\"";
    COSE_MAC0 = 17, "application/cose;cose-type=\"cose-mac0\"";
    COSE_SIGN1 = 18, "application/cose;cose-type=\"cose-sign1\"";
    LINK_FORMAT = 40, "application/link-format";
    XML = 41, "application/xml";
    OCTET_STREAM = 42, "application/octet-stream";
    EXI = 47, "application/exi";
    JSON = 50, "application/json";
    JSON_PATCH = 51, "application/json-patch+json";
    MERGE_PATCH = 52, "application/merge-patch+json";
    CBOR = 60, "application/cbor";
    CWT = 61, "application/cwt";
    MULTIPART_CORE = 62, "application/multipart-core";
    CBOR_SEQ = 63, "application/cbor-seq";
    COSE_KEY = 101, "application/cose-key";
    COSE_KEY_SET = 102, "application/cose-key-set";
    SENML_JSON = 110, "application/senml+json";
    SENSML_JSON = 111, "application/sensml+json";
    SENML_CBOR = 112, "application/senml+cbor";
    SENSML_CBOR = 113, "application/sensml+cbor";
    SENML_EXI = 114, "application/senml-exi";
    SENSML_EXI = 115, "application/sensml-exi";
    COAP_GROUP_JSON = 256, "application/coap-group+json";
    SENML_XML = 310, "application/senml+xml";
    SENSML_XML = 311, "application/sensml+xml";
    OSCORE = 10001, "application/oscore";
    JSON_DEFLATE = 11050, "application/json;deflate";
    CBOR_DEFLATE = 11060, "application/cbor;deflate";
}

impl ContentFormat {
    /// The Content-Format option carrying this format, its value encoded into `buf`.
    pub fn option(self, buf: &mut [u8; 4]) -> crate::CoapOption<'_> {
        crate::CoapOption {
            number: crate::OptionNumber::CONTENT_FORMAT,
            value: crate::uint::encode(u32::from(self.0), buf),
        }
    }

    /// The registered media type, if known.
    pub fn media_type(self) -> Option<&'static str> {
        CONTENT_FORMATS
            .binary_search_by_key(&self, |(cf, _)| *cf)
            .ok()
            .map(|i| CONTENT_FORMATS[i].1)
    }

    /// Looks up a name or number: `"50"`, `"application/json"`, or a short alias such as
    /// `"json"`, `"cbor"`, `"text"`, `"link"`, `"senml+json"`, `"octet"`.
    pub fn from_name(name: &str) -> Option<ContentFormat> {
        if let Ok(n) = name.parse::<u16>() {
            return Some(ContentFormat(n));
        }
        if let Some((_, cf)) = ALIASES.iter().find(|(a, _)| a.eq_ignore_ascii_case(name)) {
            return Some(*cf);
        }
        CONTENT_FORMATS
            .iter()
            .find(|(_, m)| m.eq_ignore_ascii_case(name))
            .map(|(cf, _)| *cf)
    }

    /// The short names [`from_name`](Self::from_name) takes, one per format (`text`, `link`,
    /// `json`, ...), for telling a user what is valid.
    pub fn short_names() -> impl Iterator<Item = &'static str> {
        ALIASES
            .iter()
            .enumerate()
            .filter(|(i, (_, cf))| !ALIASES[..*i].iter().any(|(_, c)| c == cf))
            .map(|(_, (name, _))| *name)
    }

    /// True for formats whose payload is UTF-8 text meant for people.
    pub fn is_text(self) -> bool {
        matches!(
            self,
            ContentFormat::TEXT_PLAIN
                | ContentFormat::LINK_FORMAT
                | ContentFormat::XML
                | ContentFormat::JSON
                | ContentFormat::JSON_PATCH
                | ContentFormat::MERGE_PATCH
                | ContentFormat::SENML_JSON
                | ContentFormat::SENSML_JSON
                | ContentFormat::SENML_XML
                | ContentFormat::SENSML_XML
                | ContentFormat::COAP_GROUP_JSON
        )
    }

    /// True for JSON-based formats.
    pub fn is_json(self) -> bool {
        matches!(
            self,
            ContentFormat::JSON
                | ContentFormat::JSON_PATCH
                | ContentFormat::MERGE_PATCH
                | ContentFormat::SENML_JSON
                | ContentFormat::SENSML_JSON
                | ContentFormat::COAP_GROUP_JSON
        )
    }

    /// True for CBOR-based formats.
    pub fn is_cbor(self) -> bool {
        matches!(
            self,
            ContentFormat::CBOR
                | ContentFormat::SENML_CBOR
                | ContentFormat::SENSML_CBOR
                | ContentFormat::CWT
        )
    }
}

impl core::fmt::Display for ContentFormat {
    /// The media type, or the bare number when unregistered.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.media_type() {
            Some(m) => f.write_str(m),
            None => write!(f, "{}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_one_per_format_and_all_taken() {
        let names: std::vec::Vec<&str> = ContentFormat::short_names().collect();
        assert_eq!(&names[..3], ["text", "link", "xml"]);
        assert!(names.contains(&"senml+cbor") && !names.contains(&"plain"));
        for name in names {
            assert!(ContentFormat::from_name(name).is_some(), "{name}");
        }
    }

    #[test]
    fn required_formats_are_named() {
        for (n, m) in [
            (0, "text/plain;charset=utf-8"),
            (40, "application/link-format"),
            (41, "application/xml"),
            (42, "application/octet-stream"),
            (47, "application/exi"),
            (50, "application/json"),
            (60, "application/cbor"),
            (110, "application/senml+json"),
            (112, "application/senml+cbor"),
        ] {
            assert_eq!(ContentFormat(n).media_type(), Some(m));
            assert_eq!(ContentFormat::from_name(m), Some(ContentFormat(n)));
        }
        assert!(CONTENT_FORMATS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn aliases_and_numbers() {
        assert_eq!(ContentFormat::from_name("json"), Some(ContentFormat::JSON));
        assert_eq!(
            ContentFormat::from_name("112"),
            Some(ContentFormat::SENML_CBOR)
        );
        assert_eq!(ContentFormat::from_name("nonsense"), None);
        assert_eq!(ContentFormat(9999).media_type(), None);
    }
}
