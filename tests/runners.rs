//! The variant runners' registry: every variant a config can name has a
//! runner, and variant names read from results files print back as they
//! were written.

use lift::harness::config::load_dir;
use lift::harness::results::read_rows;
use lift::harness::runners::Registry;
use lift::harness::variant_name::{Level, Variant};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_variant_the_configs_name_has_a_runner() {
    let registry = Registry::new();
    let mut named: BTreeSet<Variant> = Level::ALL.into_iter().map(Variant::Level).collect();
    named.insert(Variant::ExploredOther);
    for cfg in load_dir(&repo().join("configs"), &repo()).expect("configs folder") {
        let cfg = cfg.unwrap_or_else(|e| panic!("{e}"));
        for v in &cfg.variants {
            named.insert(Variant::parse(v).unwrap_or_else(|| panic!("{}: `{v}` is no variant", cfg.name)));
        }
        named.extend(registry.offers(&cfg, None));
    }
    // The configs name every kind of runner, so none of the checks below is empty.
    for v in ["reference", "lift-derived", "explored", "lift-tuned", "clblast", "cublas", "halide"] {
        assert!(named.contains(&Variant::parse(v).unwrap()), "no config names `{v}`");
    }
    for v in &named {
        assert!(registry.runner_for(v).is_some(), "no runner runs `{v}`");
    }
    assert!(registry.runner_for(&Variant::Peer("no-such-peer".into())).is_none());
}

fn results_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable folder").flatten() {
        let p = e.path();
        if p.is_dir() {
            results_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "csv")
            && std::fs::read_to_string(&p).is_ok_and(|t| t.starts_with("benchmark,size,variant,"))
        {
            out.push(p);
        }
    }
}

#[test]
fn committed_variant_names_print_back_unchanged() {
    let mut files = Vec::new();
    results_files(&repo().join("reports"), &mut files);
    assert!(!files.is_empty(), "reports/ holds results files");
    let mut seen = 0;
    for f in &files {
        // Reading parses every `variant` cell; each prints back as written.
        let rows = read_rows(f).unwrap_or_else(|e| panic!("{e}"));
        let mut raw = csv::Reader::from_path(f).unwrap();
        let cells: Vec<String> = raw.records().map(|r| r.unwrap()[2].to_string()).collect();
        assert_eq!(rows.len(), cells.len(), "{}", f.display());
        for (row, cell) in rows.iter().zip(&cells) {
            assert_eq!(&row.variant.to_string(), cell, "{}", f.display());
            seen += 1;
        }
    }
    assert!(seen > 0);
}
