//! Each program links only what it runs: `covey` (clients, serve, decode, entity) carries
//! neither the lab, the web stack, SQLite nor the benchmarks, and `covey-gateway` not the
//! lab nor the benchmarks. Read from the code the programs define (`nm`'s function
//! symbols, whose mangled names carry their crate); debug information is not a guide, since
//! it describes code the linker then dropped.

use std::process::Command;

/// The names of the functions `program` defines, mangled, one per line.
fn contents(program: &str) -> String {
    let out = Command::new("nm")
        .args(["--defined-only", program])
        .output()
        .unwrap_or_else(|e| panic!("cannot run nm (binutils) on {program}: {e}"));
    assert!(out.status.success(), "nm {program}: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| matches!(l.split_whitespace().nth(1), Some("t" | "T")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether any function of the program comes from `crate_name`.
fn links(symbols: &str, crate_name: &str) -> bool {
    // Legacy and v0 mangling both spell a crate as its length and name.
    symbols.contains(&format!("{}{crate_name}", crate_name.len()))
}

#[test]
fn covey_carries_neither_the_lab_nor_the_web_stack_nor_sqlite_nor_the_benchmarks() {
    let covey = contents(env!("CARGO_BIN_EXE_covey"));
    // The search finds what is there: the engine and the driver.
    assert!(links(&covey, "covey_proto"));
    assert!(links(&covey, "covey_demo"));
    for absent in [
        "covey_lab",
        "covey_sim",
        "covey_web",
        "covey_bench",
        "axum",
        "rusqlite",
        "plotters",
    ] {
        assert!(!links(&covey, absent), "covey links {absent}");
    }
}

#[test]
fn covey_gateway_carries_neither_the_lab_nor_the_benchmarks() {
    let gateway = contents(env!("CARGO_BIN_EXE_covey-gateway"));
    assert!(links(&gateway, "covey_web"));
    assert!(links(&gateway, "rusqlite"));
    for absent in ["covey_lab", "covey_sim", "covey_bench", "plotters"] {
        assert!(!links(&gateway, absent), "covey-gateway links {absent}");
    }
}

#[test]
fn covey_lab_carries_the_lab() {
    // The other half of the check: a crate that is linked is found.
    let lab = contents(env!("CARGO_BIN_EXE_covey-lab"));
    assert!(links(&lab, "covey_lab") && links(&lab, "covey_sim"));
}
