//! The index of a lab report: every scenario with what it reproduces and a link to its page.

/// One scenario's row in the index.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The scenario's name.
    pub name: &'static str,
    /// What it measures.
    pub title: &'static str,
    /// The paper it reproduces.
    pub paper: &'static str,
    /// Its page, relative to the index.
    pub page: String,
    /// Simulation runs made.
    pub runs: usize,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// Whether the page comes from the quick sweep.
    pub quick: bool,
    /// The base seed of its runs.
    pub seed: u64,
    /// The row as an earlier report wrote it, kept when this report did not run the
    /// scenario (`covey lab report --only`).
    pub kept_row: Option<String>,
}

/// What an index row records of a report's runs of one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// Runs made.
    pub runs: usize,
    /// Wall-clock seconds.
    pub wall_s: f64,
}

/// The row of scenario `name` in an index written before, if it has one, with its sweep
/// column: a row from before the index had one gets the sweep the old index's footer named
/// for all of its pages.
pub fn existing_row(index: &str, name: &str) -> Option<String> {
    let start = format!("| [{name}](");
    let row = index.lines().find(|line| line.starts_with(&start))?;
    if cells(row).len() >= 6 {
        return Some(row.to_string());
    }
    let sweep = old_footer_sweep(index).unwrap_or_else(|| "not recorded".to_string());
    Some(format!("{} {sweep} |", row.trim_end()))
}

/// The runs and wall time `row` records, if it records them.
pub fn recorded(row: &str) -> Option<Recorded> {
    let cells = cells(row);
    let runs = cells.get(3)?.parse().ok()?;
    let wall_s = cells.get(4)?.trim_end_matches('s').trim().parse().ok()?;
    Some(Recorded { runs, wall_s })
}

/// The cells of a table row, `\|` inside a cell not splitting it.
fn cells(row: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut escaped = false;
    for c in row.trim().trim_start_matches('|').chars() {
        match c {
            '|' if !escaped => cells.push(String::new()),
            _ => cells.last_mut().expect("one cell").push(c),
        }
        escaped = c == '\\';
    }
    if cells.last().is_some_and(|c| c.trim().is_empty()) {
        cells.pop();
    }
    cells.iter().map(|c| c.trim().to_string()).collect()
}

/// The sweep an index from before the sweep column named for every page in its footer
/// ("(full runs, seed 1)"), as that column writes it.
fn old_footer_sweep(index: &str) -> Option<String> {
    ["quick", "full"].iter().find_map(|sweep| {
        let marker = format!("({sweep} runs, seed ");
        let rest = &index[index.find(&marker)? + marker.len()..];
        let seed: String = rest.chars().take_while(char::is_ascii_digit).collect();
        (!seed.is_empty()).then(|| format!("{sweep}, seed {seed}"))
    })
}

/// The index page (README.md of the report folder);
/// `present`: the hand-written pages ([`HAND_WRITTEN`]) the folder holds, to be linked.
pub fn render(entries: &[Entry], present: &[&str]) -> String {
    let mut page = String::from(
        "# The Covey lab\n\n\
         Covey's simulator runs the real covey-proto engine on modelled networks to repeat the \
         experiments of the papers behind the project; the emulator runs real stacks (covey, \
         Mosquitto, Cyclone DDS, hyper) on emulated links for the experiments that need real \
         TCP and brokers (these need root). Each page below has the scenario's \
         plots, its tables with the paper's numbers beside Covey's, and where and why they \
         differ. Covey's CoAP nodes run the engine's defaults without Echo (RFC 9175), which \
         the papers' stacks predate.\n\n",
    );
    page += "| scenario | what it measures | reproduces | runs | wall time | sweep |\n";
    page += "|---|---|---|---:|---:|---|\n";
    for e in entries {
        if let Some(row) = &e.kept_row {
            page += row;
            page += "\n";
            continue;
        }
        page += &format!(
            "| [{}]({}) | {} | {} | {} | {:.0} s | {}, seed {} |\n",
            e.name,
            e.page,
            cell(e.title),
            cell(e.paper),
            e.runs,
            e.wall_s,
            if e.quick { "quick" } else { "full" },
            e.seed
        );
    }
    page += "\nEach page comes from `covey lab report` with the sweep its row names: the \
             papers' full sweeps, or the small ones of `--quick`, and the base seed \
             (`--seed`). Run it again to regenerate them, `--only NAME` for one page. One \
             scenario alone: `covey lab run NAME` (`--quick` for the small sweep, \
             `--set name=value` for the parameters that `covey lab params NAME` lists).\n";
    for (file, paragraph) in HAND_WRITTEN {
        if present.contains(&file) {
            page += paragraph;
        }
    }
    page
}

/// The pages written by hand beside the generated ones (in docs/lab/), which `covey lab
/// report` does not write, each with the paragraph that links it.
pub const HAND_WRITTEN: [(&str, &str); 3] = [
    (
        "emulator.md",
        "\nExperiments that need real protocol stacks run on the lab's emulator: real \
         processes in network namespaces joined by the simulator's link model on real time. \
         [emulator.md](emulator.md) says how it works, how closely it keeps to its \
         configuration, how fast it forwards, and how it agrees with the simulator.\n",
    ),
    (
        "framework.md",
        "\nThe lab is also a framework: [framework.md](framework.md) shows its three crates \
         (simulator, emulator, scenarios), what writing a scenario takes, running a sweep in \
         shards across processes or machines (Slurm, Kubernetes), its statistics, and the \
         802.15.4 medium on its own.\n",
    ),
    (
        "tbf.md",
        "\n[tbf.md](tbf.md) models Linux's tbf token bucket, which paper 004 capped its links \
         with: the mechanism, its sources, and the values 004 leaves open.\n",
    ),
];

/// `text` made safe for a Markdown table cell.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_written_pages_are_linked_only_where_they_are() {
        for (file, _) in HAND_WRITTEN {
            let link = format!("]({file})");
            assert!(render(&[], &[file]).contains(&link));
            assert!(!render(&[], &[]).contains(&link));
        }
    }

    fn entry(name: &'static str, quick: bool) -> Entry {
        Entry {
            name,
            title: "t | u",
            paper: "p",
            page: format!("{name}/README.md"),
            runs: 12,
            wall_s: 3.4,
            quick,
            seed: 5,
            kept_row: None,
        }
    }

    #[test]
    fn each_row_says_which_sweep_and_seed_made_its_page() {
        let index = render(&[entry("a", true), entry("b", false)], &[]);
        assert!(index.contains("| [a](a/README.md) | t \\| u | p | 12 | 3 s | quick, seed 5 |"));
        assert!(index.contains("| [b](b/README.md) | t \\| u | p | 12 | 3 s | full, seed 5 |"));
        let row = existing_row(&index, "a").expect("a's row");
        assert_eq!(
            recorded(&row),
            Some(Recorded {
                runs: 12,
                wall_s: 3.0
            })
        );
        assert!(row.ends_with("| quick, seed 5 |"), "{row}");
    }

    #[test]
    fn a_row_from_before_the_sweep_column_takes_the_old_footers_sweep() {
        let old = "| [a](a/README.md) | t | p | 1794 | 10 s |\n\nThese pages come from \
                   `covey lab report` (full runs, seed 1); run it again.\n";
        let row = existing_row(old, "a").expect("a's row");
        assert_eq!(
            row,
            "| [a](a/README.md) | t | p | 1794 | 10 s | full, seed 1 |"
        );
        let quick = old.replace("(full runs", "(quick runs");
        assert!(existing_row(&quick, "a")
            .unwrap()
            .ends_with("| quick, seed 1 |"));
        let bare = existing_row("| [a](a/README.md) | t | p | 1 | 1 s |", "a").unwrap();
        assert!(bare.ends_with("| not recorded |"), "{bare}");
        assert_eq!(existing_row(old, "b"), None);
    }
}
