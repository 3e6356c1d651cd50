//! A range of multicast groups a rule's `/mc` permissions are limited to.

use ipnet::IpNet;
use std::net::IpAddr;
use std::str::FromStr;

/// A multicast prefix such as `ff05::/16` or `239.1.0.0/16`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupPrefix(IpNet);

impl GroupPrefix {
    /// Whether `group` lies in the prefix (an IPv4-mapped IPv6 group counts as IPv4).
    pub fn contains(&self, group: IpAddr) -> bool {
        self.0.contains(&group.to_canonical())
    }
}

impl FromStr for GroupPrefix {
    type Err = String;

    fn from_str(text: &str) -> Result<GroupPrefix, String> {
        let net: IpNet = text
            .parse()
            .map_err(|_| format!("\"{text}\" is not a prefix such as ff05::/16 or 239.1.0.0/16"))?;
        let net = net.trunc();
        // The whole prefix must be multicast, so a typo cannot grant unicast-wide ranges.
        let (min_len, all) = match net {
            IpNet::V6(_) => (8, "ff00::/8"),
            IpNet::V4(_) => (4, "224.0.0.0/4"),
        };
        if !net.network().is_multicast() || net.prefix_len() < min_len {
            return Err(format!(
                "\"{text}\" is not a multicast prefix (every group: {all})"
            ));
        }
        Ok(GroupPrefix(net))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_inside_and_outside() {
        let p: GroupPrefix = "ff05::/16".parse().unwrap();
        assert!(p.contains("ff05::1:3".parse().unwrap()));
        assert!(!p.contains("ff02::1".parse().unwrap()));
        let v4: GroupPrefix = "239.1.0.0/16".parse().unwrap();
        assert!(v4.contains("239.1.2.3".parse().unwrap()));
        assert!(v4.contains("::ffff:239.1.2.3".parse().unwrap()));
        assert!(!v4.contains("239.2.0.1".parse().unwrap()));
        assert!(!p.contains("239.1.2.3".parse().unwrap()));
    }

    #[test]
    fn only_multicast_prefixes_are_accepted() {
        for bad in [
            "::/0",
            "fe80::/10",
            "0.0.0.0/0",
            "10.0.0.0/8",
            "ff05::",
            "f000::/4",
        ] {
            let e = bad.parse::<GroupPrefix>().unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        assert!("ff00::/8".parse::<GroupPrefix>().is_ok());
        assert!("224.0.0.0/4".parse::<GroupPrefix>().is_ok());
    }
}
