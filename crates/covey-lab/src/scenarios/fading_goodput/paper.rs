//! The fading-goodput paper's published numbers (Ludovici, Moreno, Calveras: TinyCoAP,
//! JSAN 2013; seed 002), for the report to put beside ours.

/// The SNRs of the paper's Table 4 and Fig 10, in dB, in the table's column order.
pub const SNRS_DB: [f64; 4] = [2.5, 2.0, 1.5, 1.0];

/// Table 4: application-layer packet error rate in percent; rows f = 1..=12 fragments,
/// columns 2.5 / 2 / 1.5 / 1 dB ([`SNRS_DB`]).
pub const TABLE_4: [[f64; 4]; 12] = [
    [1.23, 5.20, 16.78, 39.64],
    [2.05, 7.91, 22.82, 47.82],
    [2.59, 9.33, 24.99, 49.51],
    [2.96, 10.08, 25.77, 49.86],
    [3.20, 10.46, 26.06, 49.94],
    [3.37, 10.67, 26.16, 49.95],
    [3.47, 10.77, 26.19, 49.95],
    [3.55, 10.83, 26.21, 49.95],
    [3.59, 10.86, 26.21, 49.95],
    [3.63, 10.87, 26.21, 49.95],
    [3.65, 10.88, 26.21, 49.95],
    [3.66, 10.88, 26.21, 49.95],
];

/// The paper's Table 4 entry for `fragments` at `snr_db`, in percent.
pub fn table_4(fragments: usize, snr_db: f64) -> Option<f64> {
    let row = TABLE_4.get(fragments.checked_sub(1)?)?;
    let column = SNRS_DB.iter().position(|s| (s - snr_db).abs() < 1e-9)?;
    row.get(column).copied()
}

/// The payload sizes of the paper's transfers: 10 to 1200 bytes in steps of 50 (its §6.2),
/// and the largest, 1200.
pub fn payloads() -> Vec<usize> {
    let mut v: Vec<usize> = (10..=1200).step_by(50).collect();
    if v.last() != Some(&1200) {
        v.push(1200);
    }
    v
}

/// What the paper says of Fig 10 (it gives the goodput only as plots).
pub const FIG_10_CLAIM: &str = "TinyCoAP's goodput (bytes/s over 100 consecutive CON \
     transactions, initial timeout 1 s without randomisation, 4 retransmissions) is highest of \
     the tested stacks at every SNR; the goodput grows with the SNR (1, 1.5, 2, 2.5 dB) and with \
     the payload; CoAP's reliability mechanism \"shows very good behavior\".";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lookup_finds_rows_and_columns() {
        assert_eq!(table_4(1, 2.5), Some(1.23));
        assert_eq!(table_4(12, 1.0), Some(49.95));
        assert_eq!(table_4(4, 2.0), Some(10.08));
        assert_eq!(table_4(0, 1.0), None);
        assert_eq!(table_4(13, 1.0), None);
        assert_eq!(table_4(1, 3.0), None);
    }

    #[test]
    fn payload_grid_runs_from_10_to_1200() {
        let p = payloads();
        assert_eq!(p.first(), Some(&10));
        assert_eq!(p.last(), Some(&1200));
        assert_eq!(p.len(), 25);
    }
}
