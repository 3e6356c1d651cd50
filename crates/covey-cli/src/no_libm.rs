//! The one function `covey` would take from the system's libm: `pow`, which tokio's
//! multi-thread scheduler calls for its statistics (`f64::powf`). Defined here from the
//! `libm` crate, the linker resolves it in the program and drops libm.so.6 (with
//! `--as-needed`, rustc's default), which the dynamic loader would otherwise map and
//! relocate at every start: about 300 KiB of `covey serve`'s idle RSS. (Not in the other
//! programs: SQLite and the lab's models need libm anyway, and the lab's results must not
//! move by an ulp.)

/// `pow(3)`: `x` raised to the power `y`.
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

#[cfg(test)]
mod tests {
    // Against values from another implementation (CPython's `**` on glibc): `f64::powf`
    // would call this very function in this program.
    #[test]
    fn pow_gives_correctly_rounded_values() {
        for (x, y, expected) in [
            (2.0, 10.0, 1024.0),
            (10.0, -2.0, 0.01),
            (2.0, 0.5, std::f64::consts::SQRT_2),
            (0.5, 0.3, 0.8122523963562356),
            (1.1, 7.5, 2.0438317370604793),
        ] {
            assert_eq!(super::pow(x, y), expected, "{x}^{y}");
        }
    }
}
