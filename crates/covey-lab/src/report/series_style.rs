//! How a chart tells its series apart without relying on colour alone: a colour, a marker
//! shape and a line pattern per series, and the hollow triangle that marks a paper's
//! published points (a shape no series uses).

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::palette::series_colour;

/// A drawing area in pixels (the whole image).
type Canvas<DB> = DrawingArea<DB, Shift>;

/// What drawing on a canvas can fail with.
type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Marker half-size in pixels.
const MARKER: i32 = 4;

/// A series marker's shape; triangles are left to the paper's points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A filled disc.
    Disc,
    /// A filled square.
    Square,
    /// A filled diamond.
    Diamond,
    /// An ×.
    Cross,
    /// A ring.
    Ring,
    /// A hollow square.
    HollowSquare,
    /// A hollow diamond.
    HollowDiamond,
}

/// The shapes in the order series take them: one more than there are colours, so that no two
/// of the first 42 series look the same.
const MARKERS: [Marker; 7] = [
    Marker::Disc,
    Marker::Square,
    Marker::Diamond,
    Marker::Cross,
    Marker::Ring,
    Marker::HollowSquare,
    Marker::HollowDiamond,
];

/// Dash and gap lengths in pixels of series 2 onwards (the first is solid).
const DASHES: [(u32, u32); 4] = [(9, 4), (3, 3), (14, 4), (6, 6)];

/// The look of one series.
#[derive(Debug, Clone, Copy)]
pub struct SeriesStyle {
    /// Line and marker colour.
    pub colour: RGBColor,
    /// Marker shape at each point.
    pub marker: Marker,
    /// Dash and gap of the line; `None`: solid.
    pub dash: Option<(u32, u32)>,
}

impl SeriesStyle {
    /// The look of series `index`.
    pub fn of(index: usize) -> SeriesStyle {
        SeriesStyle {
            colour: series_colour(index),
            marker: MARKERS[index % MARKERS.len()],
            dash: index.checked_sub(1).map(|i| DASHES[i % DASHES.len()]),
        }
    }

    /// Draws the line through `points` (pixels).
    pub fn draw_line<DB: DrawingBackend>(
        &self,
        canvas: &Canvas<DB>,
        points: &[(i32, i32)],
    ) -> DrawResult<DB> {
        // Thinner dashed lines let a solid line under them show.
        match self.dash {
            None => canvas.draw(&PathElement::new(
                points.to_vec(),
                self.colour.stroke_width(2),
            )),
            Some((dash, gap)) => canvas.draw(&DashedPathElement::new(
                points.iter().copied(),
                dash,
                gap,
                self.colour.stroke_width(1),
            )),
        }
    }

    /// Draws the marker centred on `(x, y)` (pixels).
    pub fn draw_marker<DB: DrawingBackend>(
        &self,
        canvas: &Canvas<DB>,
        (x, y): (i32, i32),
    ) -> DrawResult<DB> {
        let (filled, line) = (self.colour.filled(), self.colour.stroke_width(2));
        let m = MARKER;
        let diamond = vec![
            (x, y - m - 1),
            (x + m + 1, y),
            (x, y + m + 1),
            (x - m - 1, y),
        ];
        match self.marker {
            Marker::Disc => canvas.draw(&Circle::new((x, y), m, filled)),
            Marker::Ring => canvas.draw(&Circle::new((x, y), m, line)),
            Marker::Square => {
                canvas.draw(&Rectangle::new([(x - m, y - m), (x + m, y + m)], filled))
            }
            Marker::HollowSquare => {
                canvas.draw(&Rectangle::new([(x - m, y - m), (x + m, y + m)], line))
            }
            Marker::Diamond => canvas.draw(&Polygon::new(diamond, filled)),
            Marker::HollowDiamond => {
                let mut closed = diamond.clone();
                closed.push(diamond[0]);
                canvas.draw(&PathElement::new(closed, line))
            }
            Marker::Cross => {
                canvas.draw(&PathElement::new(
                    vec![(x - m, y - m), (x + m, y + m)],
                    line,
                ))?;
                canvas.draw(&PathElement::new(
                    vec![(x - m, y + m), (x + m, y - m)],
                    line,
                ))
            }
        }
    }
}

/// Draws a paper's published point at `(x, y)` (pixels) as a hollow triangle, larger than
/// any series marker, in the colour of the lab series it belongs to.
pub fn draw_paper_marker<DB: DrawingBackend>(
    canvas: &Canvas<DB>,
    (x, y): (i32, i32),
    colour: RGBColor,
) -> DrawResult<DB> {
    let corners = vec![(x, y - 8), (x + 7, y + 5), (x - 7, y + 5), (x, y - 8)];
    canvas.draw(&PathElement::new(corners, colour.stroke_width(2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_series_differ_in_shape_and_the_first_is_the_only_solid_line() {
        let styles: Vec<SeriesStyle> = (0..MARKERS.len()).map(SeriesStyle::of).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert_ne!(a.marker, b.marker);
            }
        }
        assert!(styles[0].dash.is_none());
        assert!(styles[1..].iter().all(|s| s.dash.is_some()));
    }

    #[test]
    fn no_two_of_the_first_42_series_share_colour_and_shape() {
        let looks: Vec<(RGBColor, Marker)> = (0..42)
            .map(|i| {
                let s = SeriesStyle::of(i);
                (s.colour, s.marker)
            })
            .collect();
        for (i, a) in looks.iter().enumerate() {
            assert!(!looks[i + 1..].contains(a), "series {i} repeats");
        }
    }
}
