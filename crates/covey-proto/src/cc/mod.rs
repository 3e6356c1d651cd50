//! Congestion control: RTO estimators (see `spec/coap-algorithms.md` §1, §3–6).
