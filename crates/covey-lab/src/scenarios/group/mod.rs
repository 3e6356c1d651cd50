//! What the group-communication scenarios (`group-delay`, `group-interference`,
//! `group-nested`) share: the testbed of the paper (000/001: Ishaq, Hoebeke, Moerman,
//! Demeester, "Experimental Evaluation of Unicast and Multicast CoAP Group Communication",
//! Sensors 2016), built from the lab's 802.15.4 medium, with covey-group's Entity Manager on
//! the gateways and Covey's engine on every member.
//!
//! How the testbed is modelled:
//!
//! - [`hop_profile`]: the multi-hop RPL trees of Table 7 and where the nodes stand;
//! - [`testbed`]: client and gateways on a wired LAN, one 802.15.4 network per gateway
//!   (unslotted CSMA/CA, 3 MAC retries, an 8-frame MAC queue per node, no duty cycling, as
//!   the paper's Table 6), the EM as an App on each gateway, members with `/s/t` and `/mc`;
//! - multicast: the EM's NON request to the group leaves the gateway as a link-layer
//!   broadcast, and every router re-broadcasts once what it got from its RPL parent, the
//!   flooding SMRF (Contiki's Stateless Multicast RPL Forwarding, which the paper enabled)
//!   does down the DODAG; members deliver it only if they joined the group through `/mc`;
//! - [`wifi`]: iperf traffic on Wi-Fi channel 13, from the geometry and the standards;
//! - [`querier`]: the client creating entities through `POST /e` and querying them;
//! - [`outcome`]: the paper's metrics (entity response time, member and group reliability).

pub mod hop_profile;
pub mod outcome;
pub mod params;
pub mod points_table;
pub mod querier;
pub mod sweep_outcome;
pub mod testbed;
pub mod thermometer;
pub mod wifi;

pub use hop_profile::HopProfile;
pub use outcome::{GroupPoint, RunOutcome};
pub use params::{GroupParams, DEFAULT_SEEDS, PARAMS};
pub use querier::{Creation, QueryOutcome, QueryPlan};
pub use testbed::{Testbed, TestbedSpec};
pub use wifi::WifiSetup;
