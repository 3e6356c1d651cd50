//! Line charts as SVG (plotters' SVG backend; no fonts or bitmaps needed).

use std::path::Path;

use plotters::prelude::*;

use crate::LabError;

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
}

/// A chart of lines over a shared x axis.
#[derive(Debug, Clone)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
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

    fn draw(&self, path: &Path, paper: &[Series]) -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
        root.fill(&WHITE)?;
        let (x0, x1, y1) = self.bounds(paper);
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, 0.0..y1)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .draw()?;
        for (i, s) in self.series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    color.stroke_width(2),
                ))?
                .label(s.name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
        for (i, s) in paper.iter().enumerate() {
            if s.points.is_empty() {
                continue;
            }
            let color = Palette99::pick(i).to_rgba();
            let marker = move |p: (f64, f64)| TriangleMarker::new(p, 7, color.stroke_width(2));
            chart
                .draw_series(s.points.iter().map(|&p| marker(p)))?
                .label(s.name.as_str())
                .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 7, color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    }
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
}
