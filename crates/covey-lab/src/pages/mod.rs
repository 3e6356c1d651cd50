//! The pages of a lab report (`covey lab report`): every scenario run into its folder with
//! a page (README.md) showing its report, plots and data, and an index linking them; and the
//! pieces `covey lab run` and `merge` print and check with.

pub mod data_files;
pub mod estimate;
pub mod headline;
pub mod index_page;
pub mod out_dir;
mod report;
pub mod scenario_page;

pub use report::{estimate_report, write_report, ReportOptions, ReportProgress};
