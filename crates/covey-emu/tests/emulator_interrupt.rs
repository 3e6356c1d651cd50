//! Ctrl-C during an emulator run removes every namespace, device and process the run
//! created. The test runs itself a second time as the interrupted program: that copy builds
//! a testbed, starts a process in it, says so, and waits; the first copy sends it SIGINT
//! and then looks for anything left. Needs root: `#[ignore]`d, run with `--include-ignored`.

mod emu_support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use covey_emu as emu;
use emu_support::{alive, require_emulator, testbed_with_a_sleeper};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Set in the copy that plays the interrupted program.
const ROLE: &str = "COVEY_EMU_TEST_INTERRUPTED";
const TEST_NAME: &str = "ctrl_c_removes_every_namespace_device_and_process";

#[test]
#[ignore = "needs root"]
fn ctrl_c_removes_every_namespace_device_and_process() {
    require_emulator();
    if std::env::var_os(ROLE).is_some() {
        hold_a_testbed();
    }
    let exe = std::env::current_exe().expect("test executable");
    let mut program = Command::new(exe)
        .args([TEST_NAME, "--exact", "--include-ignored", "--nocapture"])
        .arg("--test-threads=1")
        .env(ROLE, "1")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the program to interrupt");
    let stdout = program.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest may have written the test's name on the same line first.
            if let Some((_, rest)) = line.split_once("READY ") {
                let _ = tx.send(rest.to_owned());
            }
        }
    });
    let ready = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the program reports its testbed");
    let mut words = ready.split_whitespace();
    let sleeper: u32 = words.next().and_then(|p| p.parse().ok()).expect("pid");
    let namespaces: Vec<String> = words.map(str::to_owned).collect();
    assert_eq!(namespaces.len(), 2);
    for ns in &namespaces {
        assert!(
            emu::namespace::namespaces_with_prefix(ns).contains(ns),
            "{ns} exists"
        );
    }
    assert!(alive(sleeper), "the started process runs");

    let pid = Pid::from_raw(i32::try_from(program.id()).expect("pid"));
    kill(pid, Signal::SIGINT).expect("send SIGINT");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = program.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "the program exits after Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        status.code(),
        Some(130),
        "exit status of an interrupted run"
    );
    for ns in &namespaces {
        assert!(
            !emu::namespace::namespaces_with_prefix(ns).contains(ns),
            "{ns} is removed"
        );
    }
    assert!(!alive(sleeper), "the started process is gone");
    assert!(
        !std::path::Path::new(&format!("/sys/class/net/{}", emu::DEVICE)).exists(),
        "no emulator device left in the host namespace"
    );
}

/// The interrupted program: a testbed with a process in it, waiting for Ctrl-C.
fn hold_a_testbed() -> ! {
    let (testbed, sleeper) = testbed_with_a_sleeper();
    println!(
        "READY {sleeper} {} {}",
        testbed.netns("a").expect("a"),
        testbed.netns("b").expect("b")
    );
    // Bounded: if no signal comes, end the run (and fail the parent's checks) by itself.
    std::thread::sleep(Duration::from_secs(60));
    std::process::exit(3);
}
