//! Observing an entity through a real `covey gateway`: three `covey serve` members whose
//! `/sensors/temp` notifies every other second, and `covey observe` of the entity prints the
//! registration's average and then one per member notification.

mod support;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use support::{covey, covey_server, run_limited, stdout, Background};

const LIMIT: Duration = Duration::from_secs(40);

fn run(args: &[&str]) -> Output {
    let mut cmd = covey();
    cmd.args(args);
    run_limited(cmd, LIMIT)
}

#[test]
fn covey_observe_of_an_entity_prints_the_average_at_each_member_notification() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("entity-observe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let members: Vec<(Background, u16)> = (0..3).map(|_| covey_server(&[])).collect();
    let mut cmd = covey();
    cmd.args(["gateway", "--no-http", "--bind", "127.0.0.1:0", "--db"])
        .arg(dir.join("entities.db"));
    let mut gateway = Background::start_logged(cmd);
    let gw = format!("coap://127.0.0.1:{}", gateway.listening(1)[0].port());

    let mut create = vec!["entity", "create", &gw, "room", "--eo", "avg"];
    let uris: Vec<String> = members
        .iter()
        .map(|(_, port)| format!("coap://127.0.0.1:{port}/sensors/temp"))
        .collect();
    for uri in &uris {
        create.extend(["--member", uri]);
    }
    let out = run(&create);
    assert!(out.status.success(), "{out:?}\n{}", gateway.log());

    let out = run(&["observe", "-s", "7", &format!("{gw}/e/room")]);
    assert!(out.status.success(), "{out:?}\n{}", gateway.log());
    let text = stdout(&out);
    // Each answer is the average, then `answered: 3 of 3`.
    let averages: Vec<f64> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert!(
        averages.len() >= 3,
        "the registration and two notifications:\n{text}"
    );
    assert!(
        averages.iter().all(|a| (15.0..30.0).contains(a)),
        "{averages:?}"
    );
    assert!(
        text.lines()
            .filter(|l| l.contains("answered: 3 of 3"))
            .count()
            >= 3,
        "{text}"
    );
    drop(gateway);
    let _ = std::fs::remove_dir_all(&dir);
}
