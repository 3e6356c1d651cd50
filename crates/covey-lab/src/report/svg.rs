//! Line charts as SVG (plotters' SVG backend; no fonts or bitmaps needed): the plot on the
//! left, its legend beside it on the right so that it covers no data.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::series_style::{draw_paper_marker, SeriesStyle};
use crate::LabError;

/// Width and height of the plot, without the legend, in pixels.
const PLOT: (u32, u32) = (900, 560);

/// Height of one legend entry in pixels.
const LEGEND_ROW: i32 = 22;

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
}

/// What an axis measures, which decides how its ticks read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisKind {
    /// A count (clients, members, bytes): ticks at whole numbers, written without decimals.
    Count,
    /// A measured quantity (seconds, a rate, a share): ticks wherever they fall.
    Quantity,
}

/// A chart of lines over a shared x axis.
#[derive(Debug, Clone)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// What the x axis measures.
    pub x_kind: AxisKind,
    /// Y axis label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
}

impl LineChart {
    /// Draws the chart into an SVG file at `path`.
    pub fn write(&self, path: &Path) -> Result<(), LabError> {
        self.write_with_paper(path, &[])
    }

    /// Draws the chart with the paper's published points as unconnected markers beside the
    /// lab's lines: each `paper` series gets the colour of the lab series at the same index,
    /// drawn as hollow triangles; an empty one only holds its index (no legend entry).
    pub fn write_with_paper(&self, path: &Path, paper: &[Series]) -> Result<(), LabError> {
        self.draw(path, paper).map_err(|e| LabError::Plot {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    fn bounds(&self, paper: &[Series]) -> (f64, f64, f64) {
        let all = self
            .series
            .iter()
            .chain(paper)
            .flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
        for &(x, y) in all {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        if !x0.is_finite() || !x1.is_finite() || x1 <= x0 {
            x0 = 0.0;
            x1 = 1.0;
        }
        (x0, x1, if y1 > 0.0 { y1 * 1.08 } else { 1.0 })
    }

    /// The legend's entries: each series with its style, then each paper series with points.
    fn legend(&self, paper: &[Series]) -> Vec<(String, LegendMark)> {
        let lines = self.series.iter().enumerate().map(|(i, s)| {
            let mark = LegendMark::Series(SeriesStyle::of(i));
            (s.name.clone(), mark)
        });
        let papers = paper
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.points.is_empty());
        let papers = papers.map(|(i, s)| {
            let mark = LegendMark::Paper(SeriesStyle::of(i).colour);
            (s.name.clone(), mark)
        });
        lines.chain(papers).collect()
    }

    fn draw(&self, path: &Path, paper: &[Series]) -> Result<(), Box<dyn std::error::Error>> {
        let legend = self.legend(paper);
        let longest = legend.iter().map(|(n, _)| n.chars().count()).max();
        // About 7 px a character at 13 px, after the 44 px sample.
        let legend_width = longest.map_or(0, |chars| 64 + 7 * chars as u32);
        let size = (PLOT.0 + legend_width, PLOT.1);
        let root = SVGBackend::new(path, size).into_drawing_area();
        root.fill(&WHITE)?;
        let (plot, _) = root.split_horizontally(PLOT.0);
        let (x0, x1, y1) = self.bounds(paper);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&self.title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, 0.0..y1)?;
        let whole = |x: &f64| format!("{x:.0}");
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .bold_line_style(BLACK.mix(0.12))
            .max_light_lines(0);
        if self.x_kind == AxisKind::Count {
            // Ticks at whole numbers only: no more ticks than whole numbers in the range.
            let whole_numbers = (x1.floor() - x0.ceil()) as usize + 1;
            mesh.x_labels(whole_numbers.clamp(2, 10))
                .x_label_formatter(&whole);
        }
        mesh.draw()?;
        let pixels = |points: &[(f64, f64)]| -> Vec<(i32, i32)> {
            points.iter().map(|p| chart.backend_coord(p)).collect()
        };
        for (i, s) in self.series.iter().enumerate() {
            let style = SeriesStyle::of(i);
            let points = pixels(&s.points);
            style.draw_line(&root, &points)?;
            for &p in &points {
                style.draw_marker(&root, p)?;
            }
        }
        for (i, s) in paper.iter().enumerate() {
            let colour = SeriesStyle::of(i).colour;
            for p in pixels(&s.points) {
                draw_paper_marker(&root, p, colour)?;
            }
        }
        draw_legend(&root, PLOT.0 as i32, &legend)?;
        root.present()?;
        Ok(())
    }
}

/// What a legend entry shows before its name.
#[derive(Debug, Clone, Copy)]
enum LegendMark {
    /// A stretch of the series' line with its marker.
    Series(SeriesStyle),
    /// The paper's triangle.
    Paper(RGBColor),
}

/// Draws `entries` in a column starting at x = `left`, level with the top of the plot.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    left: i32,
    entries: &[(String, LegendMark)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let font = ("sans-serif", 13)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (row, (name, mark)) in entries.iter().enumerate() {
        let y = 60 + LEGEND_ROW * row as i32;
        let middle = (left + 18, y);
        match mark {
            LegendMark::Series(style) => {
                style.draw_line(root, &[(left, y), (left + 36, y)])?;
                style.draw_marker(root, middle)?;
            }
            LegendMark::Paper(colour) => draw_paper_marker(root, middle, *colour)?,
        }
        root.draw(&Text::new(name.clone(), (left + 44, y), font.clone()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_svg_with_every_series_in_the_legend() {
        let dir = std::env::temp_dir().join(format!("covey-lab-svg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("chart.svg");
        let chart = LineChart {
            title: "Completion time".into(),
            x_label: "clients".into(),
            x_kind: AxisKind::Count,
            y_label: "s".into(),
            series: vec![
                Series {
                    name: "default".into(),
                    points: vec![(10.0, 30.0), (80.0, 200.0)],
                },
                Series {
                    name: "cocoa".into(),
                    points: vec![(10.0, 25.0), (80.0, 150.0)],
                },
            ],
        };
        chart.write(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") || svg.contains("<svg"));
        assert!(svg.contains("default") && svg.contains("cocoa"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_papers_points_are_markers_in_the_legend_and_inside_the_axes() {
        let dir = std::env::temp_dir().join(format!("covey-lab-svg-paper-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (plain, marked) = (dir.join("plain.svg"), dir.join("marked.svg"));
        let chart = LineChart {
            title: "Reliability".into(),
            x_label: "members".into(),
            x_kind: AxisKind::Count,
            y_label: "%".into(),
            series: vec![Series {
                name: "Covey".into(),
                points: vec![(10.0, 90.0), (30.0, 80.0)],
            }],
        };
        let paper = [Series {
            name: "paper (Table 8)".into(),
            points: vec![(10.0, 100.0), (30.0, 240.0)],
        }];
        chart.write(&plain).unwrap();
        chart.write_with_paper(&marked, &paper).unwrap();
        let (plain, marked) = (
            std::fs::read_to_string(&plain).unwrap(),
            std::fs::read_to_string(&marked).unwrap(),
        );
        assert!(marked.contains("paper (Table 8)") && !plain.contains("paper (Table 8)"));
        // The y axis grows to hold the paper's 240 %.
        let tick = |svg: &str| svg.contains("250.0");
        assert!(tick(&marked) && !tick(&plain));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn an_empty_paper_series_keeps_the_colours_in_step_and_stays_out_of_the_legend() {
        let dir = std::env::temp_dir().join(format!("covey-lab-svg-gap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gap.svg");
        let line = |name: &str| Series {
            name: name.into(),
            points: vec![(1.0, 1.0), (2.0, 2.0)],
        };
        let chart = LineChart {
            title: "t".into(),
            x_label: "x".into(),
            x_kind: AxisKind::Quantity,
            y_label: "y".into(),
            series: vec![line("first"), line("second")],
        };
        let paper = [
            Series {
                name: "paper (none here)".into(),
                points: Vec::new(),
            },
            Series {
                name: "paper (second)".into(),
                points: vec![(1.5, 1.0)],
            },
        ];
        chart.write_with_paper(&path, &paper).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert!(svg.contains("paper (second)") && !svg.contains("paper (none here)"));
    }

    /// The texts of an SVG: `(x, text-anchor, text)`.
    fn texts(svg: &str) -> Vec<(f64, String, String)> {
        let attribute = |t: &str, name: &str| {
            let start = format!("{name}=\"");
            t.split(&start)
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .to_string()
        };
        svg.split("<text ")
            .skip(1)
            .map(|t| {
                let body = t.split('>').nth(1).and_then(|r| r.split('<').next());
                let x = attribute(t, "x").parse().unwrap_or(f64::NAN);
                (
                    x,
                    attribute(t, "text-anchor"),
                    body.unwrap_or("").trim().to_string(),
                )
            })
            .collect()
    }

    /// The tick labels under the x axis.
    fn x_ticks(svg: &str) -> Vec<String> {
        texts(svg)
            .into_iter()
            .filter(|(_, anchor, t)| anchor == "middle" && t.parse::<f64>().is_ok())
            .map(|(_, _, t)| t)
            .collect()
    }

    fn drawn(chart: &LineChart, paper: &[Series], tag: &str) -> String {
        let dir = std::env::temp_dir().join(format!("covey-lab-svg-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("chart.svg");
        chart.write_with_paper(&path, paper).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        svg
    }

    fn chart(x_kind: AxisKind, xs: &[f64]) -> LineChart {
        LineChart {
            title: "t".into(),
            x_label: "clients".into(),
            x_kind,
            y_label: "y".into(),
            series: vec![Series {
                name: "only".into(),
                points: xs.iter().map(|&x| (x, x * 2.0)).collect(),
            }],
        }
    }

    #[test]
    fn a_count_axis_has_whole_number_ticks_without_decimals() {
        for xs in [&[10.0, 80.0][..], &[1.0, 3.0], &[2.0, 5.0]] {
            let ticks = x_ticks(&drawn(&chart(AxisKind::Count, xs), &[], "count"));
            for want in [xs[0], xs[1]] {
                assert!(ticks.contains(&format!("{want:.0}")), "{want} in {ticks:?}");
            }
            assert!(ticks.iter().all(|t| !t.contains('.')), "{ticks:?}");
        }
        let ticks = x_ticks(&drawn(
            &chart(AxisKind::Quantity, &[10.0, 80.0]),
            &[],
            "quantity",
        ));
        assert!(ticks.contains(&"10.0".to_string()), "{ticks:?}");
    }

    #[test]
    fn the_legend_is_beside_the_plot_and_the_grid_has_no_minor_lines() {
        let paper = [Series {
            name: "paper (Fig 1)".into(),
            points: vec![(20.0, 10.0)],
        }];
        let svg = drawn(&chart(AxisKind::Count, &[10.0, 80.0]), &paper, "legend");
        for name in ["only", "paper (Fig 1)"] {
            let (x, _, _) = texts(&svg).into_iter().find(|(_, _, t)| t == name).unwrap();
            assert!(x > PLOT.0 as f64, "{name} at x = {x}, inside the plot");
        }
        // Grid lines are the only faint lines: one per tick, no minor lines between.
        let faint = svg.matches("<line opacity=\"0.12\"").count();
        assert!(faint > 0 && faint < 30, "{faint} grid lines");
    }

    #[test]
    fn series_take_distinct_markers_and_the_papers_points_are_hollow_triangles() {
        let line = |name: &str, y: f64| Series {
            name: name.into(),
            points: vec![(1.0, y), (2.0, y)],
        };
        let chart = LineChart {
            title: "t".into(),
            x_label: "x".into(),
            x_kind: AxisKind::Quantity,
            y_label: "y".into(),
            series: vec![line("a", 1.0), line("b", 2.0), line("c", 3.0)],
        };
        let svg = drawn(&chart, &[line("paper", 4.0)], "markers");
        let hex = |i: usize| {
            let RGBColor(r, g, b) = SeriesStyle::of(i).colour;
            format!("#{r:02X}{g:02X}{b:02X}")
        };
        let filled = |element: &str, i: usize| {
            svg.split(element)
                .skip(1)
                .filter(|e| e.contains(&format!("fill=\"{}\"", hex(i))))
                .count()
        };
        // Two points and a legend entry each: discs, squares, diamonds.
        assert_eq!(filled("<circle", 0), 3);
        assert_eq!(filled("<rect", 1), 3);
        assert_eq!(filled("<polygon", 2), 3);
        // The paper's two points and its legend entry: closed three-cornered outlines.
        let triangles = svg
            .split("<polyline")
            .skip(1)
            .filter(|e| e.contains(&format!("stroke=\"{}\"", hex(0))))
            .filter_map(|e| e.split("points=\"").nth(1)?.split('"').next())
            .filter(|points| {
                let corners: Vec<&str> = points.split_whitespace().collect();
                corners.len() == 4 && corners[0] == corners[3]
            })
            .count();
        assert_eq!(triangles, 3);
    }
}
