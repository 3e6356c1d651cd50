//! Which CoAP options OSCORE encrypts and which it leaves for proxies (RFC 8613 §4.1).

use covey_core::OptionNumber;

/// How OSCORE treats an option (RFC 8613 Figure 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionClass {
    /// Class E only: encrypted and integrity protected, carried inside the ciphertext.
    Encrypted,
    /// Class U only: left in the outer message for proxies, unprotected.
    Unprotected,
    /// Class E with an outer Class U counterpart (Observe, Max-Age, the Block and Size
    /// options, No-Response): the end-to-end value is inner; an outer one is for proxies.
    EncryptedAndUnprotected,
}

impl OptionClass {
    /// The class of option `number`; options OSCORE does not name are Class E (§4.1).
    pub fn of(number: OptionNumber) -> OptionClass {
        match number {
            OptionNumber::URI_HOST
            | OptionNumber::URI_PORT
            | OptionNumber::OSCORE
            | OptionNumber::PROXY_URI
            | OptionNumber::PROXY_SCHEME
            // RFC 8768 §3: proxies count Hop-Limit down.
            | OptionNumber::HOP_LIMIT
            // RFC 9668 §3.1: the EDHOC option is read by the server before OSCORE.
            | OptionNumber::EDHOC => OptionClass::Unprotected,
            OptionNumber::OBSERVE
            | OptionNumber::MAX_AGE
            | OptionNumber::BLOCK1
            | OptionNumber::BLOCK2
            | OptionNumber::SIZE1
            | OptionNumber::SIZE2
            | OptionNumber::NO_RESPONSE
            // RFC 9177 §4: Q-Block options are processed like Block options.
            | OptionNumber::Q_BLOCK1
            | OptionNumber::Q_BLOCK2 => OptionClass::EncryptedAndUnprotected,
            _ => OptionClass::Encrypted,
        }
    }

    /// True when the end-to-end value of the option travels inside the ciphertext.
    pub fn is_inner(self) -> bool {
        self != OptionClass::Unprotected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 8613 Figure 5, row by row.
    #[test]
    fn classes_follow_rfc_8613_figure_5() {
        let e = OptionClass::Encrypted;
        let u = OptionClass::Unprotected;
        let both = OptionClass::EncryptedAndUnprotected;
        let figure_5 = [
            (1, e),
            (3, u),
            (4, e),
            (5, e),
            (6, both),
            (7, u),
            (8, e),
            (9, u),
            (11, e),
            (12, e),
            (14, both),
            (15, e),
            (17, e),
            (20, e),
            (23, both),
            (27, both),
            (28, both),
            (35, u),
            (39, u),
            (60, both),
            (258, both),
        ];
        for (number, class) in figure_5 {
            assert_eq!(
                OptionClass::of(OptionNumber(number)),
                class,
                "option {number}"
            );
        }
    }

    #[test]
    fn unknown_options_are_class_e() {
        assert_eq!(OptionClass::of(OptionNumber(65000)), OptionClass::Encrypted);
        assert_eq!(OptionClass::of(OptionNumber(2049)), OptionClass::Encrypted);
        assert!(OptionClass::Encrypted.is_inner());
        assert!(!OptionClass::Unprotected.is_inner());
    }
}
