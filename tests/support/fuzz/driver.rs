//! The two fuzz loops, shared by the bounded tests and the long run: each
//! input goes to the worker thread (time bound, panics caught); failures
//! are collected with the input that caused them.

use super::check::{differential, front_end, Diff};
use super::watchdog::{Ran, Worker};
use super::{gen, mutate, Rng};
use lift::runtime::{select_device, Runtime};
use std::collections::HashSet;
use std::time::Duration;

/// What went wrong with one input.
#[derive(Debug, Clone)]
pub struct Failure {
    pub kind: &'static str,
    pub input: String,
    pub msg: String,
}

#[derive(Debug, Default)]
pub struct Report {
    pub tried: usize,
    pub parsed: usize,
    /// Defs compiled at every level.
    pub compiled: usize,
    /// Defs refused (type or well-formedness or lowering error).
    pub refused: usize,
    /// Defs run on the device and compared (every level).
    pub executed: usize,
    pub skipped: usize,
    pub failures: Vec<Failure>,
    /// Why defs were refused or not run: a message (numbers blanked) and
    /// how often, with one input for each.
    pub reasons: std::collections::BTreeMap<String, (usize, String)>,
    /// True when a hang stopped the run (the worker is still busy).
    pub stopped: bool,
}

impl Report {
    pub fn count(&self, kind: &str) -> usize {
        self.failures.iter().filter(|f| f.kind == kind).count()
    }

    pub fn summary(&self, what: &str) -> String {
        format!(
            "{what}: {} tried, {} parsed, {} defs compiled at every level, {} refused, {} run on the device \
             ({} not run), {} panics, {} hangs, {} unpositioned errors, {} mismatches, {} device errors",
            self.tried,
            self.parsed,
            self.compiled,
            self.refused,
            self.executed,
            self.skipped,
            self.count("panic"),
            self.count("hang"),
            self.count("unpositioned"),
            self.count("mismatch"),
            self.count("device-error"),
        )
    }
}

/// What the worker reports for one input.
struct Outcome {
    parsed: bool,
    compiled: usize,
    refused: usize,
    executed: usize,
    skipped: usize,
    failures: Vec<(&'static str, String)>,
    reasons: Vec<String>,
}

struct Job {
    text: String,
    /// Run compiled defs on the device.
    exec: bool,
    floor: i64,
    seed: u64,
}

/// The worker's handler: front end, then the device where asked.
fn handler() -> impl FnMut(Job) -> Outcome {
    let rt = select_device(None).ok().and_then(|info| Runtime::new(info).ok());
    let mut seen = HashSet::new();
    move |job: Job| {
        let (program, front) = front_end("fuzz.lift", &job.text);
        let mut o = Outcome {
            parsed: program.is_some(),
            compiled: 0,
            refused: 0,
            executed: 0,
            skipped: 0,
            failures: front.unpositioned().into_iter().map(|m| ("unpositioned", m)).collect(),
            reasons: Vec::new(),
        };
        let mut rng = Rng::new(job.seed);
        for (def, ks) in &front.defs {
            let ok: Vec<_> = ks.iter().filter_map(|k| k.as_ref().ok()).collect();
            if ok.len() < ks.len() {
                if let Some(Err(e)) = ks.iter().find(|k| k.is_err()) {
                    o.reasons.push(format!("refused: {e}"));
                }
                o.refused += 1;
                continue;
            }
            o.compiled += 1;
            let (Some(rt), true, Some(p)) = (&rt, job.exec, &program) else { continue };
            match differential(rt, p, def, &ok, job.floor, &mut rng, &mut seen) {
                Diff::Same => o.executed += 1,
                Diff::Skipped(why) => {
                    o.reasons.push(format!("not run: {why}"));
                    o.skipped += 1
                }
                Diff::DeviceError { level, msg } => {
                    o.failures.push(("device-error", format!("def {def} at level {level}: {msg}")))
                }
                Diff::Mismatch { level, sizes, msg } => o
                    .failures
                    .push(("mismatch", format!("def {def} at level {level}, sizes {sizes:?}: {msg}"))),
            }
        }
        o
    }
}

/// Whether an OpenCL device exists (else the device checks are skipped).
pub fn has_device() -> bool {
    select_device(None).is_ok()
}

fn drive(
    inputs: impl Iterator<Item = (String, bool)>,
    limit: Duration,
    seed: u64,
    mut log: impl FnMut(usize, &str, &Report),
) -> Report {
    let worker: Worker<Job, Outcome> = Worker::spawn(handler);
    let mut r = Report::default();
    let mut rng = Rng::new(seed ^ 0xD1FF);
    for (text, exec) in inputs {
        log(r.tried, &text, &r);
        r.tried += 1;
        let floor = rng.range(5, 40);
        let job = Job { text: text.clone(), exec, floor, seed: rng.next_u64() };
        match worker.run(job, limit) {
            Ran::Done(o) => {
                r.parsed += usize::from(o.parsed);
                r.compiled += o.compiled;
                r.refused += o.refused;
                r.executed += o.executed;
                r.skipped += o.skipped;
                for why in o.reasons {
                    let key: String =
                        why.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).take(110).collect();
                    r.reasons.entry(key).or_insert((0, text.clone())).0 += 1;
                }
                for (kind, msg) in o.failures {
                    r.failures.push(Failure { kind, input: text.clone(), msg });
                }
            }
            Ran::Panic(msg) => r.failures.push(Failure { kind: "panic", input: text, msg }),
            Ran::Hang => {
                r.failures.push(Failure { kind: "hang", input: text, msg: format!("over {limit:?}") });
                r.stopped = true;
                break;
            }
        }
    }
    if !r.stopped {
        // A hung worker is left running; any other is joined, its context released.
        worker.finish();
    }
    r
}

/// `count` mutants of the corpus; every `exec_every`-th input (0: none)
/// with defs that compile is also run on the device.
pub fn mutants(
    corpus: &[(String, String)],
    count: usize,
    seed: u64,
    exec_every: usize,
    limit: Duration,
    log: impl FnMut(usize, &str, &Report),
) -> Report {
    let mut rng = Rng::new(seed);
    let corpus = corpus.to_vec();
    let inputs = (0..count).map(move |i| {
        let text = if i % 500 == 499 {
            // Now and then a deep chain (recursion depth).
            let n = [1_000, 20_000, 100_000][rng.below(3)];
            mutate::deep(&mut rng, n)
        } else {
            let (_, src) = &corpus[rng.below(corpus.len())];
            mutate::mutate(src, &mut rng)
        };
        (text, exec_every > 0 && i % exec_every == 0)
    });
    drive(inputs, limit, seed, log)
}

/// `count` random programs, every one run on the device.
pub fn programs(count: usize, seed: u64, limit: Duration, log: impl FnMut(usize, &str, &Report)) -> Report {
    let mut rng = Rng::new(seed);
    let inputs = (0..count).map(move |_| (gen::program(&mut rng), true));
    drive(inputs, limit, seed, log)
}

/// Fixed inputs (the regression files), each with whether to run it.
pub fn run_inputs(inputs: Vec<(String, bool)>, limit: Duration) -> Report {
    drive(inputs.into_iter(), limit, 7, |_, _, _| {})
}
