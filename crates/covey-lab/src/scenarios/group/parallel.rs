//! Runs the independent simulations of a sweep on every core, reporting progress, with the
//! results in sweep order whatever order they finish in.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::scenarios::Progress;
use crate::LabError;

/// `run(point)` for every point, in parallel; results in the order of `points`, or the
/// first error.
pub fn run_all<P: Sync, R: Send>(
    points: &[P],
    run: impl Fn(&P) -> Result<R, LabError> + Sync,
    progress: Option<&(dyn Fn(Progress) + Send + Sync)>,
) -> Result<Vec<R>, LabError> {
    let total = points.len();
    let done = AtomicUsize::new(0);
    points
        .par_iter()
        .map(|p| {
            let r = run(p);
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(f) = progress {
                f(Progress { done: n, total });
            }
            r
        })
        .collect()
}
