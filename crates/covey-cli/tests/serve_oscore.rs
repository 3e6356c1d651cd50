//! `covey serve --oscore DIR` refuses a directory it cannot use, with one line and exit
//! code 2, before it binds anything.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use support::{covey, run_limited, stderr};

const LIMIT: Duration = Duration::from_secs(20);

fn serve_with(dir: &str) -> (Option<i32>, String) {
    let mut cmd = covey();
    cmd.args(["serve", "--bind", "127.0.0.1:0", "--oscore", dir]);
    let out = run_limited(cmd, LIMIT);
    (out.status.code(), stderr(&out))
}

#[test]
fn a_bad_oscore_directory_is_refused_with_one_line() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("serve-oscore-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.to_str().unwrap();
    let cases = [
        (None, "neither settings.json nor secret.json"),
        (
            Some(r#"{"secret_hex": "zz"}"#),
            "settings.json: secret_hex is not hex",
        ),
        (
            Some(r#"{"secret_hex": "01", "sender-id_hex": ""}"#),
            "no recipient-id_hex",
        ),
        (Some("not json"), "settings.json is no JSON object"),
    ];
    for (settings, why) in cases {
        if let Some(text) = settings {
            std::fs::write(dir.join("settings.json"), text).unwrap();
        }
        let (code, err) = serve_with(path);
        assert_eq!(code, Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("--oscore {path}: {why}")), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
