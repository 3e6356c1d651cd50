//! A scenario's page in a lab report: its Markdown report with its plots under the
//! introduction, links to its data, and how to regenerate what is left out.

use super::data_files::{human_size, DataFiles};

/// The page for a scenario whose run printed `markdown` and wrote `files`;
/// `regenerate` is the command that writes all of its data again.
pub fn render(markdown: &str, files: &DataFiles, regenerate: &str) -> String {
    let markdown = markdown.trim_end();
    // A scenario that already shows a plot in its own text keeps it where it put it.
    let mut plots = String::new();
    for p in files
        .plots
        .iter()
        .filter(|p| !markdown.contains(&format!("({})", p.name)))
    {
        let alt = p.name.trim_end_matches(".svg");
        plots += &format!("![{alt}]({})\n\n", p.name);
    }
    // Plots go right after the introduction, before the first section.
    let split = markdown
        .match_indices("\n## ")
        .next()
        .map_or(markdown.len(), |(i, _)| i + 1);
    let (intro, sections) = markdown.split_at(split);
    let mut page = intro.trim_end().to_string();
    page += "\n\n";
    if !plots.is_empty() {
        page += "## Plots\n\n";
        page += &plots;
    }
    if !sections.is_empty() {
        page += sections;
        page += "\n\n";
    }
    page += "## Data\n\n";
    for f in &files.kept {
        page += &format!("- [{}]({}) ({})\n", f.name, f.name, human_size(f.bytes));
    }
    for f in &files.left_out {
        page += &format!(
            "- {} ({}) is too large to keep here.\n",
            f.name,
            human_size(f.bytes)
        );
    }
    page += &format!(
        "\n`{regenerate}` writes all of it again; `covey lab report` regenerates these pages.\n"
    );
    page
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::pages::data_files::{DataFile, DataFiles};

    #[test]
    fn plots_follow_the_introduction_and_large_data_is_named() {
        let files = DataFiles {
            plots: vec![DataFile {
                name: "x-rate.svg".into(),
                bytes: 10,
            }],
            kept: vec![DataFile {
                name: "x.json".into(),
                bytes: 2000,
            }],
            left_out: vec![DataFile {
                name: "x-all.csv".into(),
                bytes: 3_400_000,
            }],
        };
        let page = render(
            "# X\n\nIntro.\n\n## Table\n\n| a |\n",
            &files,
            "covey lab run x",
        );
        let plot = page.find("![x-rate](x-rate.svg)").expect("the plot");
        assert!(page.find("Intro.").unwrap() < plot);
        assert!(plot < page.find("## Table").unwrap());
        assert!(page.contains("- [x.json](x.json) (2 kB)"));
        assert!(page.contains("x-all.csv (3.4 MB) is too large"));
        assert!(page.contains("`covey lab run x` writes all of it again"));
    }
}
