//! The runner's promises, for every scenario on it: parameter tables that match their
//! parameters, and shards that merge into exactly the files one run writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use covey_lab::framework::{LabScenario, RunOptions, Shard};
use covey_lab::scenarios;

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("covey-lab-fw-{tag}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    dir
}

/// Every file of `dir` by name, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

fn quick(out_dir: PathBuf, shard: Option<Shard>) -> RunOptions {
    RunOptions {
        quick: true,
        seed: 7,
        runs: Some(2),
        out_dir,
        shard,
        ..RunOptions::default()
    }
}

fn every_scenario() -> impl Iterator<Item = &'static dyn LabScenario> {
    scenarios::all().iter().copied()
}

#[test]
fn every_parameter_table_names_real_fields_with_acceptable_defaults() {
    for s in every_scenario() {
        let problems = s.table_problems();
        assert!(problems.is_empty(), "{}: {problems:?}", s.info().name);
        assert!(
            !s.describe().is_empty(),
            "{} has no parameters",
            s.info().name
        );
    }
}

#[test]
fn three_shards_merge_into_the_bytes_of_one_run() {
    for s in every_scenario().filter(|s| s.reproducible()) {
        let name = s.info().name;
        let whole = scratch(&format!("{name}-whole"));
        let shards = scratch(&format!("{name}-shards"));
        let merged = scratch(&format!("{name}-merged"));
        s.run(&quick(whole.clone(), None)).unwrap();
        for index in 0..3 {
            let summary = s
                .run(&quick(shards.clone(), Some(Shard { index, count: 3 })))
                .unwrap();
            assert_eq!(summary.files.len(), 1, "{name}: one shard file");
        }
        let summary = s.merge(std::slice::from_ref(&shards), &merged).unwrap();
        assert!(!summary.markdown.is_empty());
        let (a, b) = (files(&whole), files(&merged));
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            b.keys().collect::<Vec<_>>(),
            "{name}: the same files"
        );
        for (file, bytes) in &a {
            assert!(bytes == &b[file], "{name}: {file} differs after merging");
        }
        for dir in [whole, shards, merged] {
            std::fs::remove_dir_all(dir).ok();
        }
    }
}

#[test]
fn a_missing_a_repeated_or_a_foreign_shard_is_refused() {
    let s = scenarios::all()
        .iter()
        .copied()
        .find(|s| s.info().name == "server-workload")
        .unwrap();
    let dir = scratch("refused");
    let shard = |index, dir: &Path, seed| {
        let mut o = quick(dir.to_path_buf(), Some(Shard { index, count: 2 }));
        o.seed = seed;
        o.params = vec![("requests".into(), "20".into())];
        s.run(&o).unwrap().files.remove(0)
    };
    let first = shard(0, &dir, 7);
    let err = s
        .merge(std::slice::from_ref(&first), &dir.join("out"))
        .unwrap_err();
    assert_eq!(err.to_string(), "shards: shards missing: 1/2");
    let err = s
        .merge(&[first.clone(), first.clone()], &dir.join("out"))
        .unwrap_err();
    assert!(err.to_string().contains("repeats shard 0/2"), "{err}");
    let other = shard(1, &dir.join("other"), 8);
    let err = s.merge(&[first, other], &dir.join("out")).unwrap_err();
    assert!(
        err.to_string().contains("come from different sweeps"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_shard_is_parsed_as_i_of_n() {
    assert_eq!(
        "2/4".parse::<Shard>().unwrap(),
        Shard { index: 2, count: 4 }
    );
    for bad in ["4/4", "1/0", "x/2", "3"] {
        assert!(bad.parse::<Shard>().is_err(), "{bad}");
    }
}
