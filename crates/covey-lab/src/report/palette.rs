//! The colours of a chart's series: Okabe and Ito's colour-blind-safe palette without its
//! yellow, its orange and sky blue darkened so that every colour reads on white (WCAG
//! contrast of 3:1 or more, the bar for graphics).

use plotters::style::RGBColor;

/// The series colours, in the order series take them.
pub const SERIES: [RGBColor; 6] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xB5, 0x7A, 0x00), // orange, darkened from E69F00
    RGBColor(0x00, 0x00, 0x00), // black
];

/// The colour of series `index` (the palette repeats; the marker shapes keep such series
/// apart).
pub fn series_colour(index: usize) -> RGBColor {
    SERIES[index % SERIES.len()]
}

/// The WCAG 2 contrast ratio of `colour` against white, from 1 (none) to 21.
pub fn contrast_on_white(colour: RGBColor) -> f64 {
    let linear = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let RGBColor(r, g, b) = colour;
    let luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    1.05 / (luminance + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_colour_reads_on_white() {
        for colour in SERIES {
            let ratio = contrast_on_white(colour);
            assert!(ratio >= 3.0, "{colour:?} has contrast {ratio:.2} on white");
        }
    }

    #[test]
    fn contrast_matches_known_values() {
        assert!((contrast_on_white(RGBColor(0, 0, 0)) - 21.0).abs() < 1e-9);
        assert!((contrast_on_white(RGBColor(255, 255, 255)) - 1.0).abs() < 1e-9);
        // Okabe and Ito's yellow, the colour this palette leaves out, fails.
        assert!(contrast_on_white(RGBColor(0xF0, 0xE4, 0x42)) < 1.5);
    }
}
