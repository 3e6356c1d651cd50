//! The protocols compared, each with how it carries the telemetry from the gateway through
//! the server to the caregiver.

use covey_emu::stacks::coap::Delivery;
use covey_emu::stacks::dds::{Reliability, Transport};
use serde::Serialize;

/// One protocol configuration of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "protocol", rename_all = "snake_case")]
pub enum Protocol {
    /// CoAP through a relaying server (NON, CON) or an observed resource (Observe).
    Coap {
        /// How telemetry travels.
        delivery: Delivery,
        /// Congestion control by name.
        cc: String,
    },
    /// MQTT through Mosquitto.
    Mqtt {
        /// 0 or 1.
        qos: u8,
    },
    /// DDS through a relaying participant on the server.
    Dds {
        /// Reliability QoS.
        reliability: Reliability,
        /// UDP (Cyclone's default) or TCP (as 004's OpenDDS).
        transport: Transport,
    },
    /// The paper's custom JSON-over-UDP pub/sub through a broker.
    UdpJson,
}

impl Protocol {
    /// The label in tables and plots.
    pub fn label(&self) -> String {
        match self {
            Protocol::Coap { delivery, cc } => {
                let d = match delivery {
                    Delivery::Non => "NON",
                    Delivery::Con => "CON",
                    Delivery::Observe => "Observe",
                };
                if cc == "default" {
                    format!("CoAP {d}")
                } else {
                    format!("CoAP {d} ({cc})")
                }
            }
            Protocol::Mqtt { qos } => format!("MQTT QoS {qos}"),
            Protocol::Dds {
                reliability,
                transport,
            } => {
                let r = match reliability {
                    Reliability::Reliable => "DDS reliable",
                    Reliability::BestEffort => "DDS best-effort",
                };
                match transport {
                    Transport::Udp => r.into(),
                    Transport::Tcp => format!("{r} (TCP)"),
                }
            }
            Protocol::UdpJson => "JSON/UDP".into(),
        }
    }

    /// Whether it recovers lost packets (retransmission at some layer).
    pub fn reliable(&self) -> bool {
        match self {
            Protocol::Coap { delivery, .. } => *delivery != Delivery::Non,
            Protocol::Mqtt { .. } => true,
            Protocol::Dds { reliability, .. } => *reliability == Reliability::Reliable,
            Protocol::UdpJson => false,
        }
    }

    /// The paper's four (CoAP NON, MQTT, DDS reliable, JSON/UDP) and ours beyond them:
    /// CoAP CON and Observe with `cc`, MQTT QoS 1, DDS best effort, DDS reliable over TCP.
    pub fn all(cc: &str) -> Vec<Protocol> {
        NAMES.iter().map(|name| Protocol::named(name, cc)).collect()
    }

    /// The protocol `--set protocols=` calls `name` (one of [`NAMES`]), with `cc` for CoAP
    /// CON and Observe.
    pub fn named(name: &str, cc: &str) -> Protocol {
        let coap = |delivery| Protocol::Coap {
            delivery,
            cc: cc.to_string(),
        };
        let dds = |reliability, transport| Protocol::Dds {
            reliability,
            transport,
        };
        match name {
            "coap-non" => Protocol::Coap {
                delivery: Delivery::Non,
                cc: "default".into(),
            },
            "coap-con" => coap(Delivery::Con),
            "coap-observe" => coap(Delivery::Observe),
            "mqtt-qos0" => Protocol::Mqtt { qos: 0 },
            "mqtt-qos1" => Protocol::Mqtt { qos: 1 },
            "dds-reliable" => dds(Reliability::Reliable, Transport::Udp),
            "dds-best-effort" => dds(Reliability::BestEffort, Transport::Udp),
            "dds-tcp" => dds(Reliability::Reliable, Transport::Tcp),
            "json-udp" => Protocol::UdpJson,
            other => unreachable!("the parameter table accepts no protocol `{other}`"),
        }
    }
}

/// The protocols as `--set protocols=` names them, in the order the pages list them.
pub const NAMES: &[&str] = &[
    "coap-non",
    "coap-con",
    "coap-observe",
    "mqtt-qos0",
    "mqtt-qos1",
    "dds-reliable",
    "dds-best-effort",
    "dds-tcp",
    "json-udp",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_delivery_and_the_congestion_control() {
        let all = Protocol::all("cocoa");
        let labels: Vec<String> = all.iter().map(Protocol::label).collect();
        assert_eq!(
            labels,
            [
                "CoAP NON",
                "CoAP CON (cocoa)",
                "CoAP Observe (cocoa)",
                "MQTT QoS 0",
                "MQTT QoS 1",
                "DDS reliable",
                "DDS best-effort",
                "DDS reliable (TCP)",
                "JSON/UDP"
            ]
        );
        // CoAP CON and Observe (CON notifications), MQTT over TCP at either QoS, DDS reliable
        // over UDP and TCP.
        assert_eq!(all.iter().filter(|p| p.reliable()).count(), 6);
    }
}
