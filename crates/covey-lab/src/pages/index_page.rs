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
    /// The row as an earlier report wrote it, kept when this report did not run the
    /// scenario (`covey lab report --only`).
    pub kept_row: Option<String>,
}

/// The row of scenario `name` in an index written before, if it has one.
pub fn existing_row(index: &str, name: &str) -> Option<String> {
    let start = format!("| [{name}](");
    index
        .lines()
        .find(|line| line.starts_with(&start))
        .map(str::to_string)
}

/// The index page (README.md of the report folder);
/// `present`: the hand-written pages ([`HAND_WRITTEN`]) the folder holds, to be linked.
pub fn render(entries: &[Entry], quick: bool, seed: u64, present: &[&str]) -> String {
    let sweep = if quick { "quick" } else { "full" };
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
    page += "| scenario | what it measures | reproduces | runs | wall time |\n";
    page += "|---|---|---|---:|---:|\n";
    for e in entries {
        if let Some(row) = &e.kept_row {
            page += row;
            page += "\n";
            continue;
        }
        page += &format!(
            "| [{}]({}) | {} | {} | {} | {:.0} s |\n",
            e.name,
            e.page,
            cell(e.title),
            cell(e.paper),
            e.runs,
            e.wall_s
        );
    }
    let quick_flag = if quick { " --quick" } else { "" };
    page += &format!(
        "\nThese pages come from `covey lab report{quick_flag}` ({sweep} runs, seed {seed}); \
         run it again to regenerate them. One scenario alone: `covey lab run NAME` \
         (`--quick` for the small sweep, `--set name=value` for the parameters that \
         `covey lab params NAME` lists).\n"
    );
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
            assert!(render(&[], false, 1, &[file]).contains(&link));
            assert!(!render(&[], false, 1, &[]).contains(&link));
        }
    }
}
