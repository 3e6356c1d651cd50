//! What the seed paper (004: CoAP, MQTT, DDS and a custom UDP protocol for medical
//! telemetry) reports; most of its results are published only as plots.

/// Bytes of JSON per message.
pub const MESSAGE_BYTES: usize = 409;

/// Messages per second.
pub const RATE_HZ: f64 = 4.0;

/// The low-quality network: loss.
pub const LOW_QUALITY_LOSS: f64 = 0.10;

/// The low-quality network: one-way delay, seconds (±20 %).
pub const LOW_QUALITY_DELAY_S: f64 = 0.100;

/// The low-quality network: bandwidth cap, bytes/s.
pub const LOW_QUALITY_RATE: f64 = 6250.0;

/// Control bytes per 100 bytes of data in the low-quality network: DDS.
pub const DDS_OVERHEAD_PER_100: f64 = 289.0;

/// Control bytes per 100 bytes of data in the low-quality network: MQTT.
pub const MQTT_OVERHEAD_PER_100: f64 = 76.0;

/// Experienced latency in the low-quality network: DDS, seconds.
pub const DDS_LATENCY_S: f64 = 0.234;

/// Experienced latency in the low-quality network: MQTT, seconds.
pub const MQTT_LATENCY_S: f64 = 0.578;

/// The paper's account of its sweeps (Figs 6–11).
pub const CLAIMS: &[&str] = &[
    "CoAP and the custom UDP protocol use no more bandwidth as loss or latency grow (no \
     retransmission); MQTT and DDS use more as loss grows; DDS uses about twice MQTT's.",
    "With added latency, CoAP's and UDP's experienced latency stays close to the system \
     latency; DDS stays close to it up to 400 ms while MQTT's grows much higher.",
    "With 5–25 % loss, MQTT and DDS lose no telemetry, but MQTT's latency passes 1000 ms while \
     DDS adds little; CoAP and UDP lose about the network's loss rate.",
    "As the bandwidth cap narrows, MQTT's latency grows and DDS's stays flat.",
];
