//! `scripts/dist.sh` makes release artifacts: each program stripped of its debug information,
//! which goes to NAME.debug beside it, linked by .gnu_debuglink. Run here on the test build's
//! programs (the release build would take minutes), which have debug information to split.

use std::path::Path;
use std::process::Command;

/// The section names of an ELF file, from `readelf -S`.
fn sections(file: &Path) -> String {
    let out = Command::new("readelf")
        .args(["-SW"])
        .arg(file)
        .output()
        .expect("readelf (binutils)");
    assert!(out.status.success(), "readelf {}: {out:?}", file.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn dist_strips_the_programs_and_keeps_their_debug_information_beside_them() {
    let from = Path::new(env!("CARGO_BIN_EXE_covey")).parent().unwrap();
    let out = std::env::temp_dir().join(format!("covey-dist-{}", std::process::id()));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/dist.sh");
    let run = Command::new("bash")
        .arg(&script)
        .arg(from)
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    for program in ["covey", "covey-gateway", "covey-lab", "covey-bench"] {
        let stripped = out.join(program);
        let debug = out.join(format!("{program}.debug"));
        let program_sections = sections(&stripped);
        assert!(
            !program_sections.contains(".debug_info"),
            "{program} keeps .debug_info"
        );
        assert!(
            program_sections.contains(".gnu_debuglink"),
            "{program} has no debug link"
        );
        assert!(
            sections(&debug).contains(".debug_info"),
            "{program}.debug has no .debug_info"
        );
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        assert!(
            size(&stripped) < size(&from.join(program)),
            "{program} did not shrink"
        );
    }
    // A stripped program still runs.
    let version = Command::new(out.join("covey"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("covey "));
    std::fs::remove_dir_all(&out).unwrap();
}
