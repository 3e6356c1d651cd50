//! The `covey` commands of README.md's "The `covey` command" block, read from the README
//! itself and run as a user would: servers start and answer, every client command against a
//! default `covey serve` exits 0 with output, and the entity commands work on the gateway
//! started beside it. Only ports are changed (servers bind port 0 and say where they listen,
//! instead of 5683 and 5684; `%lo` instead of `%eth0`), so the test breaks when the README
//! drifts from what works.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{covey, Background};

const LIMIT: Duration = Duration::from_secs(30);

/// The `covey ...` lines of the README's command block, comments removed, split into words.
fn readme_commands() -> Vec<Vec<String>> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("read README.md");
    let section = readme
        .split("## The `covey` command")
        .nth(1)
        .expect("a section \"The `covey` command\"");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block in that section");
    block
        .lines()
        .filter(|l| l.starts_with("covey "))
        .map(|l| words(l).into_iter().skip(1).collect())
        .collect()
}

/// Shell words of `line` up to a comment: spaces separate, single quotes group.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                started = true;
            }
            '#' if !quoted && !started => break,
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The ports the examples run on instead of the README's.
struct Ports {
    server: u16,
    gateway: u16,
}

impl Ports {
    /// `word` with the README's addresses moved to the test's ports.
    fn apply(&self, word: &str) -> String {
        let gateway = format!("[::1]:{}", self.gateway);
        let server = format!("[::1]:{}", self.server);
        let word = word
            .replace("[::1]:5684", &gateway)
            .replace("[::]:5684", &format!("[::]:{}", self.gateway))
            .replace("%eth0", "%lo");
        // `coap://[::1]` without a port is the default server.
        word.replace("coap://[::1]/", &format!("coap://{server}/"))
            .replace("coap://[::1]?", &format!("coap://{server}?"))
            .replace("coap://[::1]", &format!("coap://{server}"))
            .replace(&format!("coap://{server}:"), "coap://[::1]:")
    }
}

/// Starts a server example in `dir` and returns it and the port it says it listens on.
fn start(args: &[String], dir: &Path) -> (Background, u16) {
    let mut cmd = covey();
    cmd.args(args).current_dir(dir);
    let mut server = Background::start_logged(cmd);
    let port = server.listening(1)[0].port();
    (server, port)
}

/// Asks `uri` until it answers a GET (bounded).
fn wait_for(uri: &str, server: &mut Background, what: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(server.running(), "covey {} exited", what.join(" "));
        let out = covey()
            .args(["get", "-B", "0.3", uri])
            .output()
            .expect("run covey get");
        if out.status.success() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "covey {} does not answer {uri}",
            what.join(" ")
        );
    }
}

/// Runs a client example in `dir`; one that runs until interrupted (observe without -s) is
/// stopped after `stop_after`. Returns exit success, standard output and standard error.
fn run(args: &[String], dir: &Path, stop_after: Option<Duration>) -> (bool, String, String) {
    let out_path = dir.join("stdout.txt");
    let err_path = dir.join("stderr.txt");
    let mut child = covey()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("create stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("create stderr file"))
        .spawn()
        .expect("run a client example");
    let started = Instant::now();
    let success = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.success();
        }
        if stop_after.is_some_and(|d| started.elapsed() > d) {
            let _ = child.kill();
            let _ = child.wait();
            break true;
        }
        assert!(
            started.elapsed() < LIMIT,
            "covey {} ran too long",
            args.join(" ")
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &PathBuf| std::fs::read_to_string(p).unwrap_or_default();
    (success, read(&out_path), read(&err_path))
}

#[test]
fn every_readme_example_works_as_written() {
    let commands = readme_commands();
    assert!(commands.len() >= 10, "too few examples found: {commands:?}");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("readme-examples-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a working folder");
    // The file the `put -e @file.json` example sends.
    std::fs::write(dir.join("file.json"), r#"{"greeting":"hello"}"#).expect("write file.json");
    // Port 0 until the server in question has started and said which port it got.
    let mut ports = Ports {
        server: 0,
        gateway: 0,
    };
    let mut kept: Vec<Background> = Vec::new();
    let mut default_server_started = false;
    for example in &commands {
        let mut args: Vec<String> = example.iter().map(|w| ports.apply(w)).collect();
        match args[0].as_str() {
            "serve" => {
                // Each server on a port of its own; the first, `covey serve` as is, stays up.
                let is_default = args.len() == 1;
                let mut probe_host = "[::1]".to_string();
                match args.iter().position(|a| a == "--bind") {
                    Some(i) => {
                        let host = args[i + 1]
                            .rsplit_once(':')
                            .expect("ADDR:PORT")
                            .0
                            .to_string();
                        if host == "127.0.0.1" {
                            probe_host = host.clone();
                        }
                        args[i + 1] = format!("{host}:0");
                    }
                    None => args.extend(["--bind".to_string(), "[::]:0".to_string()]),
                }
                let (mut server, port) = start(&args, &dir);
                wait_for(
                    &format!("coap://{probe_host}:{port}/.well-known/core"),
                    &mut server,
                    &args,
                );
                if is_default {
                    ports.server = port;
                    default_server_started = true;
                    kept.push(server);
                }
            }
            "gateway" => {
                // Its --bind '[::]:5684' became '[::]:0' (ports.gateway is 0 until now).
                let (mut gateway, port) = start(&args, &dir);
                ports.gateway = port;
                wait_for(
                    &format!("coap://[::1]:{}/e", ports.gateway),
                    &mut gateway,
                    &args,
                );
                kept.push(gateway);
            }
            _ => {
                assert!(
                    default_server_started,
                    "a client example before `covey serve`"
                );
                let endless = args[0] == "observe" && !args.iter().any(|a| a == "-s");
                let stop_after = endless.then_some(Duration::from_millis(2500));
                let (success, out, err) = run(&args, &dir, stop_after);
                assert!(success, "covey {} failed: {err}", args.join(" "));
                // Every example shows something, but a DELETE's 2.02 carries no payload.
                assert!(
                    args[0] == "delete" || !out.trim().is_empty(),
                    "covey {} printed nothing; stderr: {err}",
                    args.join(" ")
                );
                if endless {
                    assert!(out.lines().count() >= 2, "covey {}: {out}", args.join(" "));
                }
            }
        }
    }
    drop(kept);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn readme_words_are_split_like_a_shell() {
    assert_eq!(
        words("covey discover 'coap://[::1]?rt=x'  # note"),
        ["covey", "discover", "coap://[::1]?rt=x"]
    );
    let ports = Ports {
        server: 1000,
        gateway: 2000,
    };
    assert_eq!(ports.apply("coap://[::1]/a"), "coap://[::1]:1000/a");
    assert_eq!(ports.apply("coap://[::1]?rt=x"), "coap://[::1]:1000?rt=x");
    assert_eq!(ports.apply("coap://[::1]:5684"), "coap://[::1]:2000");
    assert_eq!(ports.apply("coap://[::1]"), "coap://[::1]:1000");
}
