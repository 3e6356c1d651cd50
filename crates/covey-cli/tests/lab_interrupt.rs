//! A `protocols` run interrupted with Ctrl-C (SIGINT) leaves no namespace and no process of
//! its stacks behind. Needs root: `#[ignore]`d, run with `--include-ignored`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use covey_emu::stacks::testbed_network::skip_reason;

fn namespaces_of(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let prefix = format!("covey-emu-{pid}-");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

/// The network namespace of process `pid` (`net:[INODE]`), if it still runs.
fn net_namespace(pid: &str) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/ns/net")).ok()
}

/// The process ids of the `lab agent`s in the namespaces of run `pid`: other runs on the
/// machine (other tests) have agents of their own.
fn agents_of(pid: u32) -> Vec<String> {
    let ours: Vec<std::path::PathBuf> = namespaces_of(pid)
        .iter()
        .filter_map(|ns| {
            use std::os::unix::fs::MetadataExt;
            let inode = std::fs::metadata(format!("/run/netns/{ns}")).ok()?.ino();
            Some(format!("net:[{inode}]").into())
        })
        .collect();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let id = entry.file_name().to_string_lossy().into_owned();
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if line.contains("lab agent") && net_namespace(&id).is_some_and(|n| ours.contains(&n)) {
            found.push(id);
        }
    }
    found
}

/// Command lines of running processes that contain `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(raw) = std::fs::read(entry.path().join("cmdline")) {
            let line = String::from_utf8_lossy(&raw).replace('\0', " ");
            if line.contains(needle) {
                found.push(line);
            }
        }
    }
    found
}

#[test]
#[ignore = "needs root"]
fn ctrl_c_removes_every_namespace_and_process() {
    if let Some(reason) = skip_reason() {
        panic!("the emulator cannot run here: {reason}");
    }
    let out = std::env::temp_dir().join(format!("covey-lab-interrupt-{}", std::process::id()));
    let mut run = Command::new(env!("CARGO_BIN_EXE_covey"))
        .args(["lab", "run", "protocols", "--quick", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = run.id();
    // Wait (bounded) until the first trial's stacks are up: a namespace and an agent.
    let deadline = Instant::now() + Duration::from_secs(60);
    let agents = loop {
        let agents = agents_of(pid);
        if !agents.is_empty() {
            break agents;
        }
        assert!(
            Instant::now() < deadline,
            "the run never started its stacks"
        );
        assert!(run.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(100));
    };
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let exit = loop {
        if let Some(s) = run.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the run did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(exit.code(), Some(130));
    assert_eq!(namespaces_of(pid), Vec::<String>::new());
    // A zombie (ended, not yet reaped) has no command line left: it counts as gone.
    let running = |id: &String| {
        std::fs::read(format!("/proc/{id}/cmdline"))
            .is_ok_and(|raw| String::from_utf8_lossy(&raw).contains("lab\0agent"))
    };
    let left: Vec<&String> = agents.iter().filter(|id| running(id)).collect();
    assert!(left.is_empty(), "agents {left:?} outlived the run");
    assert_eq!(
        processes_with(&out.display().to_string()),
        Vec::<String>::new()
    );
    // Nor any process of a trial's scratch folder (the broker's configuration, the DDS script).
    assert_eq!(
        processes_with(&format!("covey-lab-protocols-{pid}-")),
        Vec::<String>::new()
    );
    std::fs::remove_dir_all(out).ok();
}
