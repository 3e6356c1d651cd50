//! `covey lab` end to end: listing scenarios, a quick run and its files, the same seed giving
//! the same data, bad input refused with one line before anything runs, and a report whose
//! index links every scenario page.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::{covey, stderr, stdout};

/// Raw data files a report keeps (larger ones are left for `covey lab run` to regenerate).
const REPORT_DATA_LIMIT: u64 = 200 * 1024;

/// A folder under the test target directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("lab-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a scratch folder");
        Scratch(path)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn lab(args: &[&str]) -> Output {
    covey()
        .arg("lab")
        .args(args)
        .output()
        .expect("run covey lab")
}

fn path_arg(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The files in `dir` whose names end in `.ext`.
fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the output folder")
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// Asserts a refused command: exit code `code`, one line on stderr containing every one of
/// `mentions`, and no run (nothing on stdout).
fn assert_refused(out: &Output, code: i32, mentions: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for m in mentions {
        assert!(err.contains(m), "`{m}` missing from: {err}");
    }
    assert!(stdout(out).is_empty(), "nothing ran: {}", stdout(out));
    assert!(!err.contains("panicked"), "{err}");
}

/// The scenarios `covey lab list` names, in its order.
fn scenario_names() -> Vec<String> {
    let out = lab(&["list"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    stdout(&out)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The relative link targets of a Markdown page (`[text](target)` and `![alt](target)`).
fn relative_links(markdown: &str) -> Vec<String> {
    markdown
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|target| target.split('#').next().unwrap_or("").to_string())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:"))
        .collect()
}

#[test]
fn list_names_every_scenario_with_its_paper() {
    let out = lab(&["list"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("cc-bottleneck "))
        .expect("a line for cc-bottleneck");
    assert!(line.contains("Järvinen"), "names the paper: {line}");
    assert!(
        line.contains("congestion control"),
        "says what it is: {line}"
    );
}

#[test]
fn params_lists_each_parameter_with_its_default() {
    let out = lab(&["params", "cc-bottleneck"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let queue = text
        .lines()
        .find(|l| l.starts_with("queue "))
        .expect("a line for queue");
    assert!(queue.contains("1000"), "default shown: {queue}");
    let help = stdout(&lab(&["run", "--help"]));
    assert!(
        help.contains("queue=1000"),
        "run --help lists defaults: {help}"
    );
}

#[test]
fn quick_run_writes_csv_json_svg_and_markdown() {
    let dir = Scratch::new("quick");
    let out_dir = dir.join("results");
    let out = lab(&[
        "run",
        "cc-bottleneck",
        "--quick",
        "--out",
        path_arg(&out_dir),
    ]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    for ext in ["csv", "json", "svg", "md"] {
        assert!(
            !files_with(&out_dir, ext).is_empty(),
            "no .{ext} file in {}",
            out_dir.display()
        );
    }
    let text = stdout(&out);
    assert!(text.contains(path_arg(&out_dir)), "says where: {text}");
    assert!(
        text.contains("| paper"),
        "prints the headline table: {text}"
    );
    // Not a terminal: no progress bar drawn.
    assert!(stderr(&out).is_empty(), "stderr: {}", stderr(&out));
}

#[test]
fn the_same_seed_gives_identical_csv() {
    let dir = Scratch::new("seed");
    let run = |name: &str| {
        let out_dir = dir.join(name);
        let out = lab(&[
            "run",
            "cc-bottleneck",
            "--quick",
            "--runs",
            "1",
            "--seed",
            "7",
            "--out",
            path_arg(&out_dir),
        ]);
        assert!(out.status.success(), "stderr: {}", stderr(&out));
        files_with(&out_dir, "csv")
            .into_iter()
            .map(|p| std::fs::read(p).expect("read a CSV"))
            .collect::<Vec<_>>()
    };
    let first = run("a");
    assert!(!first.is_empty());
    assert!(first == run("b"), "the same seed wrote different CSV");
}

#[test]
fn a_set_parameter_reaches_the_scenario() {
    let dir = Scratch::new("set");
    let out_dir = dir.join("results");
    let out = lab(&[
        "run",
        "cc-bottleneck",
        "--quick",
        "--runs",
        "1",
        "--set",
        "queue=10",
        "--out",
        path_arg(&out_dir),
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let json = std::fs::read_to_string(out_dir.join("cc-bottleneck.json")).expect("the JSON");
    let compact: String = json.split_whitespace().collect();
    assert!(compact.contains("\"queue\":10,"), "{compact:.300}");
}

#[test]
fn ack_timeout_reaches_a_group_scenario_and_is_refused_elsewhere() {
    let dir = Scratch::new("ack");
    let out_dir = dir.join("results");
    let out = lab(&[
        "run",
        "group-delay",
        "--quick",
        "--set",
        "queries=2",
        "--ack-timeout",
        "0.5",
        "--out",
        path_arg(&out_dir),
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let json = std::fs::read_to_string(out_dir.join("group-delay.json")).expect("the JSON");
    let compact: String = json.split_whitespace().collect();
    assert!(
        compact.contains("\"ack_timeout_ms\":500,") || compact.contains("\"ack_timeout_ms\":500}"),
        "{compact:.300}"
    );
    let out = lab(&["run", "cc-bottleneck", "--quick", "--ack-timeout", "1"]);
    assert_refused(&out, 2, &["ack_timeout_ms"]);
    let out = lab(&["run", "group-delay", "--quick", "--ack-timeout", "0"]);
    assert_refused(&out, 2, &["--ack-timeout"]);
    // Below the table's range: refused with what it accepts, not clamped.
    let out = lab(&["run", "group-delay", "--quick", "--ack-timeout", "0.05"]);
    assert_refused(
        &out,
        2,
        &["ack_timeout_ms=50", "out of range", "100 to 60000"],
    );
}

#[test]
fn an_unknown_scenario_is_refused_naming_the_scenarios() {
    let dir = Scratch::new("unknown");
    let out_dir = dir.join("results");
    let out = lab(&["run", "no-such-scenario", "--out", path_arg(&out_dir)]);
    assert_refused(&out, 2, &["no-such-scenario", "cc-bottleneck"]);
    assert!(!out_dir.exists(), "nothing written");
    assert_refused(&lab(&["params", "no-such-scenario"]), 2, &["cc-bottleneck"]);
}

#[test]
fn an_unknown_parameter_is_refused_naming_the_parameters() {
    let out = lab(&["run", "cc-bottleneck", "--quick", "--set", "colour=red"]);
    assert_refused(&out, 2, &["colour", "queue", "max_retransmit", "header"]);
    let out = lab(&["run", "cc-bottleneck", "--quick", "--set", "queue"]);
    assert_refused(&out, 2, &["name=value", "queue"]);
}

#[test]
fn a_bad_parameter_value_is_refused_saying_what_is_accepted() {
    let dir = Scratch::new("bad-value");
    let out_dir = dir.join("results");
    let out = lab(&[
        "run",
        "cc-bottleneck",
        "--quick",
        "--set",
        "header=ipx",
        "--out",
        path_arg(&out_dir),
    ]);
    assert_refused(&out, 2, &["ipx", "header", "ipv6", "6lowpan"]);
    assert!(!out_dir.exists(), "nothing written");
    let out = lab(&["run", "cc-bottleneck", "--quick", "--set", "queue=many"]);
    assert_refused(&out, 2, &["many", "queue"]);
    let out = lab(&["run", "cc-bottleneck", "--quick", "--runs", "0"]);
    assert_refused(&out, 2, &["runs"]);
}

#[test]
fn an_out_folder_that_cannot_be_written_fails_before_the_run() {
    let dir = Scratch::new("out");
    let file = dir.join("a-file");
    std::fs::write(&file, "in the way").expect("write a file");
    for out_dir in [file.clone(), file.join("below")] {
        let out = lab(&["run", "cc-bottleneck", "--out", path_arg(&out_dir)]);
        assert_refused(&out, 1, &[path_arg(&out_dir)]);
        let out = lab(&["report", "--out", path_arg(&out_dir)]);
        assert_refused(&out, 1, &[path_arg(&out_dir)]);
    }
    // The last scenario's folder in a report taken by a file: no scenario runs.
    let report_dir = dir.join("report");
    std::fs::create_dir(&report_dir).expect("create a folder");
    let last = scenario_names().pop().expect("a scenario");
    std::fs::write(report_dir.join(&last), "in the way").expect("write a file");
    let out = lab(&["report", "--quick", "--out", path_arg(&report_dir)]);
    assert_refused(&out, 1, &[&last]);
    let entries = std::fs::read_dir(&report_dir).expect("read the report folder");
    assert_eq!(entries.count(), 1, "nothing but the file in the way");

    // Read-only for everyone, root included.
    let out = lab(&["run", "cc-bottleneck", "--out", "/proc/self/covey-lab"]);
    assert_refused(&out, 1, &["/proc/self/covey-lab"]);

    let read_only = dir.join("read-only");
    std::fs::create_dir(&read_only).expect("create a folder");
    let writable = std::fs::metadata(&read_only).expect("stat").permissions();
    let mut permissions = writable.clone();
    permissions.set_readonly(true);
    std::fs::set_permissions(&read_only, permissions).expect("make it read-only");
    // Root writes through permission bits; the /proc case above covers it.
    let enforced = std::fs::create_dir(read_only.join("probe")).is_err();
    if enforced {
        let out_dir = read_only.join("results");
        let out = lab(&["run", "cc-bottleneck", "--out", path_arg(&out_dir)]);
        assert_refused(&out, 1, &[path_arg(&out_dir)]);
    }
    std::fs::set_permissions(&read_only, writable).expect("make it writable again");
}

/// The scenarios that run real stacks in emulated networks, in real time (about 90 s of
/// this report): `lab_protocols.rs` and `lab_object_download.rs` test their pages.
const EMULATED: [&str; 2] = ["protocols", "object-download"];

#[test]
fn quick_report_writes_an_index_linking_every_scenario_page() {
    let dir = Scratch::new("report");
    let out_dir = dir.join("lab");
    let mut args = vec!["report", "--quick", "--out", path_arg(&out_dir)];
    for name in EMULATED {
        args.extend(["--skip", name]);
    }
    let out = lab(&args);
    assert!(out.status.success(), "stderr: {}", stderr(&out));

    let index = std::fs::read_to_string(out_dir.join("README.md")).expect("the index page");
    let links = relative_links(&index);
    for name in scenario_names() {
        let linked = links.iter().any(|l| l.starts_with(&format!("{name}/")));
        if EMULATED.contains(&name.as_str()) {
            assert!(!linked, "{name} was left out, yet linked: {index}");
        } else {
            assert!(linked, "index links no page of {name}: {index}");
        }
    }
    for link in &links {
        let page = out_dir.join(link);
        assert!(page.is_file(), "index link {link} does not resolve");
        if page.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&page).expect("a scenario page");
            let table = text.lines().any(|l| l.starts_with('|'));
            assert!(table, "{link} has no table");
            assert!(
                text.to_lowercase().contains("paper"),
                "{link} cites no paper"
            );
            let folder = page.parent().expect("the page's folder");
            for inner in relative_links(&text) {
                assert!(
                    folder.join(&inner).is_file(),
                    "{link}: {inner} does not resolve"
                );
            }
            assert!(text.contains(".svg)"), "{link} shows no plot");
            for data in std::fs::read_dir(folder).expect("the scenario folder") {
                let data = data.expect("an entry").path();
                if data.extension().is_some_and(|e| e != "svg") {
                    let bytes = std::fs::metadata(&data).expect("stat").len();
                    assert!(
                        bytes <= REPORT_DATA_LIMIT,
                        "{} is {bytes} B",
                        data.display()
                    );
                }
            }
        }
    }
}

/// `covey lab report --quick --only server-workload --out OUT` (a small scenario), which
/// succeeds.
fn quick_server_workload_report(out_dir: &Path) -> Output {
    let out = lab(&[
        "report",
        "--quick",
        "--only",
        "server-workload",
        "--out",
        path_arg(out_dir),
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    out
}

#[test]
fn report_only_reruns_the_named_scenario_and_keeps_the_other_rows() {
    let dir = Scratch::new("report-only");
    let out_dir = dir.join("lab");
    std::fs::create_dir_all(&out_dir).expect("create the report folder");
    // An index a full report wrote before rows said their sweep: one footer for all pages.
    let row = |name: &str| format!("| [{name}]({name}/README.md) | kept | kept | 7 | 7 s |");
    let mut earlier = String::from("# The Covey lab\n\n| scenario | x | y | runs | wall time |\n");
    for name in scenario_names() {
        earlier += &row(&name);
        earlier += "\n";
    }
    earlier += "\nThese pages come from `covey lab report` (full runs, seed 1); run it again.\n";
    std::fs::write(out_dir.join("README.md"), &earlier).expect("write the earlier index");

    quick_server_workload_report(&out_dir);
    let index = std::fs::read_to_string(out_dir.join("README.md")).expect("the index page");
    for name in scenario_names() {
        // The kept rows still say the full sweep made their pages; the new one says quick.
        let kept = format!("{} full, seed 1 |", row(&name));
        let row_kept = index.lines().any(|l| l == kept);
        assert_eq!(row_kept, name != "server-workload", "{name}'s row: {index}");
        let ran = out_dir.join(&name).join("README.md").is_file();
        assert_eq!(ran, name == "server-workload", "{name} ran");
    }
    let new_row = index
        .lines()
        .find(|l| l.starts_with("| [server-workload]("))
        .expect("server-workload's row");
    assert!(new_row.ends_with("| quick, seed 1 |"), "{new_row}");
    assert!(
        !index.contains("(full runs"),
        "no footer for all pages: {index}"
    );

    // A name that is no scenario is refused up front.
    let out = lab(&["report", "--only", "nonesuch", "--out", path_arg(&out_dir)]);
    assert_refused(&out, 2, &["nonesuch"]);
    let out = lab(&["report", "--skip", "nonesuch", "--out", path_arg(&out_dir)]);
    assert_refused(&out, 2, &["nonesuch"]);
}

#[test]
fn report_only_into_a_fresh_folder_writes_that_page_and_an_index_of_it_alone() {
    let dir = Scratch::new("report-fresh");
    let fresh = dir.join("fresh");
    quick_server_workload_report(&fresh);
    let index = std::fs::read_to_string(fresh.join("README.md")).expect("the index page");
    let links = relative_links(&index);
    assert_eq!(links, ["server-workload/README.md"], "{index}");
    assert!(fresh.join(&links[0]).is_file());
    let rows = index.lines().filter(|l| l.starts_with("| [")).count();
    assert_eq!(rows, 1, "{index}");
}

#[test]
fn report_says_what_it_runs_and_how_long_before_it_starts() {
    let dir = Scratch::new("report-plan");
    let fresh = dir.join("fresh");
    let out = lab(&["report", "--plan", "--out", path_arg(&fresh)]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let plan = stdout(&out);
    for name in scenario_names() {
        let line = plan
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}: {plan}"));
        assert!(line.contains(" trials") && line.contains("about"), "{line}");
    }
    let protocols = plan
        .lines()
        .find(|l| l.starts_with("protocols takes"))
        .expect("a line on leaving protocols out");
    assert!(
        protocols.contains(" h ") && protocols.contains("needs root"),
        "{protocols}"
    );
    assert!(protocols.contains("--skip protocols"), "{protocols}");
    assert!(!fresh.exists(), "--plan writes nothing");

    let out = lab(&[
        "report",
        "--plan",
        "--skip",
        "protocols",
        "--out",
        path_arg(&fresh),
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(!stdout(&out).contains("protocols"), "{}", stdout(&out));

    // Times an earlier report recorded beat the declared cost per trial.
    std::fs::create_dir_all(&fresh).expect("create the report folder");
    let index =
        "| [server-workload](server-workload/README.md) | t | p | 4 | 4000 s | full, seed 1 |\n";
    std::fs::write(fresh.join("README.md"), index).expect("write an index");
    let out = quick_server_workload_report(&fresh);
    let text = stdout(&out);
    let planned = text.find("The report runs 1 scenario").expect("the plan");
    let line = &text[planned..]
        .lines()
        .nth(1)
        .expect("server-workload's line");
    assert!(
        line.contains("as the index recorded it") && line.contains(" h "),
        "{line}"
    );
    let ran = text.find("server-workload: ").expect("the line as it ends");
    assert!(planned < ran, "the plan comes first: {text}");
}

#[test]
fn without_out_the_report_goes_to_the_repositorys_docs_lab_and_elsewhere_needs_out() {
    // Outside the target folder, which is inside this repository.
    let outside = std::env::temp_dir().join(format!("covey-lab-default-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&outside);
    std::fs::create_dir_all(outside.join("docs/lab")).expect("create a folder");
    let report_in = |cwd: &Path| {
        covey()
            .current_dir(cwd)
            .args(["lab", "report", "--quick", "--only", "server-workload"])
            .output()
            .expect("run covey lab report")
    };
    let out = report_in(&outside);
    let entries = std::fs::read_dir(outside.join("docs/lab"))
        .expect("read")
        .count();
    assert_refused(&out, 2, &["--out", "Covey repository"]);
    assert_eq!(
        entries, 0,
        "nothing written into another project's docs/lab"
    );

    // A Covey repository: its docs/lab, from anywhere inside it.
    let repo = outside.join("repo");
    std::fs::create_dir_all(repo.join("crates/covey-lab")).expect("create a folder");
    std::fs::create_dir_all(repo.join("docs/lab")).expect("create a folder");
    std::fs::write(repo.join("crates/covey-lab/Cargo.toml"), "").expect("write a file");
    let out = report_in(&repo.join("crates"));
    let written = repo.join("docs/lab/server-workload/README.md").is_file();
    std::fs::remove_dir_all(&outside).ok();
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(written, "{}", stdout(&out));

    let help = stdout(&lab(&["report", "--help"]));
    assert!(
        help.contains("Covey repository") && help.contains("--skip protocols"),
        "{help}"
    );
}

#[test]
fn two_shards_merge_into_the_files_of_one_run() {
    let dir = Scratch::new("shards");
    let common = [
        "run",
        "server-workload",
        "--quick",
        "--runs",
        "1",
        "--set",
        "requests=50",
    ];
    let whole = dir.join("whole");
    let out = lab(&[&common[..], &["--out", path_arg(&whole)]].concat());
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let shards = dir.join("shards");
    for shard in ["0/2", "1/2"] {
        let out = lab(&[&common[..], &["--shard", shard, "--out", path_arg(&shards)]].concat());
        assert!(out.status.success(), "stderr: {}", stderr(&out));
        assert!(stdout(&out).contains(".cbor"), "{}", stdout(&out));
    }
    assert_eq!(files_with(&shards, "cbor").len(), 2);
    let merged = dir.join("merged");
    let out = lab(&["merge", path_arg(&shards), "--out", path_arg(&merged)]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(
        stdout(&out).contains("from 2 shard files"),
        "{}",
        stdout(&out)
    );
    for ext in ["csv", "json", "svg", "md"] {
        let (a, b) = (files_with(&whole, ext), files_with(&merged, ext));
        assert_eq!(a.len(), b.len(), "{ext} files");
        for (a, b) in a.iter().zip(&b) {
            assert_eq!(a.file_name(), b.file_name());
            let same = std::fs::read(a).expect("read") == std::fs::read(b).expect("read");
            assert!(same, "{} differs after merging", a.display());
        }
    }

    let out = lab(&["merge", path_arg(&files_with(&shards, "cbor")[0])]);
    assert_refused(&out, 1, &["shards missing: 1/2"]);
    let out = lab(&[&common[..], &["--shard", "2/2"]].concat());
    assert_refused(&out, 2, &["2/2", "i/n"]);
}
