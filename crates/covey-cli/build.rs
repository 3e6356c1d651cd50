//! Links the programs with RELR relocations (`-z pack-relative-relocs`) where the linker
//! and C library support them: the relative relocations of a position-independent binary
//! shrink from 24 bytes each to a bitmap, so fewer pages are written at start. With
//! `COVEY_SYMBOL_ORDER=FILE` (set by `scripts/dist.sh`), the functions FILE names (one
//! symbol a line: those a server runs to start and to idle) are laid out first and together,
//! so a server pages in that code instead of every page the kernel's fault-around maps beside
//! scattered functions. This needs LLD, Rust's default linker on x86_64 Linux.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=COVEY_SYMBOL_ORDER");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if linux_gnu && linker_packs_relative_relocs() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    if let Some(order) = std::env::var_os("COVEY_SYMBOL_ORDER").filter(|v| !v.is_empty()) {
        let order = std::path::Path::new(&order);
        println!("cargo:rerun-if-changed={}", order.display());
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        // Symbols of other programs, or of code this build no longer has, are expected.
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
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
