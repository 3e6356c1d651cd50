//! Runs a lab scenario until the `covey lab` subcommand exists:
//! `cargo run --release -p covey-lab --example lab_run -- cc-bottleneck [--quick] [--seed N]
//! [--runs N] [--out DIR] [--set name=value]...`.

use std::path::PathBuf;
use std::sync::Arc;

use covey_lab::scenarios::{self, Progress, RunOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut name = None;
    let mut options = RunOptions::default();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => options.quick = true,
            "--seed" => options.seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(1),
            "--runs" => options.runs = args.next().and_then(|s| s.parse().ok()),
            "--out" => options.out_dir = PathBuf::from(args.next().unwrap_or_default()),
            "--set" => {
                let kv = args.next().unwrap_or_default();
                let (k, v) = kv.split_once('=').unwrap_or((kv.as_str(), ""));
                options.params.push((k.to_string(), v.to_string()));
            }
            other => name = Some(other.to_string()),
        }
    }
    let Some(name) = name else {
        for s in scenarios::list() {
            println!("{:16} {}", s.name, s.title);
        }
        return;
    };
    options.progress = Some(Arc::new(|p: Progress| {
        if p.done.is_multiple_of(20) || p.done == p.total {
            eprintln!("{}/{} runs", p.done, p.total);
        }
    }));
    match scenarios::run(&name, &options) {
        Ok(summary) => {
            println!("{}", summary.markdown);
            println!("{} runs in {:.1} s", summary.runs, summary.wall_s);
            for f in summary.files {
                println!("wrote {}", f.display());
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
