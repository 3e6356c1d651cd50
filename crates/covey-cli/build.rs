//! Links the programs with RELR relocations (`-z pack-relative-relocs`) where the linker
//! and C library support them: the relative relocations of a position-independent binary
//! shrink from 24 bytes each to a bitmap, so fewer pages are written at start.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if linux_gnu && linker_packs_relative_relocs() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the system linker knows the option (GNU ld 2.38+, lld 15+); glibc 2.36+ loads
/// such binaries, and the linker adds the version requirement that refuses older ones.
fn linker_packs_relative_relocs() -> bool {
    Command::new("cc")
        .args(["-Wl,--help"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("pack-relative-relocs"))
        .unwrap_or(false)
}
