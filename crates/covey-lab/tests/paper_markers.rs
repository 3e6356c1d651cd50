//! The paper's published points are drawn on the plots that have them, and the page says so
//! under a plot that has none.

use covey_lab::scenarios::{self, RunOptions};

#[test]
fn group_delay_marks_the_papers_g5_times_and_says_fig_9_has_no_numbers() {
    let dir = std::env::temp_dir().join(format!("covey-lab-markers-{}", std::process::id()));
    let options = RunOptions {
        quick: true,
        seed: 1,
        runs: Some(1),
        out_dir: dir.clone(),
        params: vec![("queries".into(), "3".into())],
        ..RunOptions::default()
    };
    let summary = scenarios::run("group-delay", &options).expect("the quick run succeeds");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let (main, per_member) = (read("group-delay.svg"), read("group-delay-per-member.svg"));
    std::fs::remove_dir_all(&dir).ok();
    assert!(main.contains("paper, G = 5 (000 Fig 7)"), "no paper legend");
    assert!(!per_member.contains("000 Fig 7"));
    // Both plots are placed by the page itself, the note under the one without numbers.
    let md = &summary.markdown;
    let plot = md.find("(group-delay-per-member.svg)").expect("the plot");
    let note = md.find("gives no numbers per member").expect("the note");
    assert!(plot < note && md.contains("(group-delay.svg)"));
}
