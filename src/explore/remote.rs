//! A device of a shared search (`split`) measured by a process of its own.
//!
//! NVIDIA's OpenCL driver builds a kernel about 1.6 times slower when
//! another thread of the same process builds one at the same time (gemv
//! on two H200: 95 ms a candidate alone, 151 ms with two), so two devices
//! served by two threads built at 1.25 times the rate of one. Each helper
//! device (every device of a group but the leader's) is therefore served
//! by a child process, `lift explore <the same arguments> --serve-device
//! P:D` ([`WorkerCommand`]), which plans the same search and measures the
//! points the parent sends it. The parent keeps everything else: the
//! tuner, the log, which device measures what, the best so far.
//!
//! The protocol is one line each way:
//! - the child, once set up: `ready <plan key>` ([`plan_key`]: the parent
//!   refuses a child that planned another search);
//! - the parent: `measure <shape> <v,v,...> <cutoff ms or -> <ms left>`;
//!   the child: `<status>\t<median ms or ->\t<valid sizes>\t<derive codegen
//!   build gold run seconds>\t<message>`;
//! - the parent: `alive`; the child: `yes` or `no` (`device_alive`).
//!
//! The end of its input ends the child.

use super::measure::{device_alive, Bench, GoldCache, Outcome, Phases, Status};
use super::space::{Instance, Shape};
use super::tuner::Point;
use super::{ExploreError, ExploreOptions};
use crate::ir::Program;
use crate::runtime::DeviceInfo;
use crate::types::Sizes;
use std::cell::Cell;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};

/// How to start a worker process: this program and the arguments of the
/// search (`--serve-device P:D` is added). Only the CLI knows them.
#[derive(Clone, Debug)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

/// Why a worker process could not measure.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("could not start the worker process `{program}`: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("the worker process for {device}: {source}")]
    Io { device: String, source: std::io::Error },
    #[error("the worker process for {device} answered `{got}`, expected {expected}")]
    Protocol { device: String, got: String, expected: &'static str },
    #[error("the worker process for {device} planned another search (its key {theirs}, ours {ours})")]
    OtherPlan { device: String, ours: String, theirs: String },
}

/// What measures the candidates a worker takes: a [`Bench`] on a device
/// of this process, or a worker process ([`Child`]).
pub trait Meter {
    /// Where the measuring time went.
    fn phases(&self) -> &Cell<Phases>;
    /// Point `point` (its program `inst`, work-group `local`), with the
    /// early stops of `Bench::cutoff_ms` and `Bench::left_ms`.
    fn measure(
        &mut self,
        point: &Point,
        inst: &Instance,
        local: Option<[i64; 3]>,
        stops: (Option<f64>, f64),
    ) -> Result<Outcome, RemoteError>;
    /// Whether the device still runs a kernel (`device_alive`).
    fn alive(&mut self) -> bool;
}

impl Meter for Bench<'_> {
    fn phases(&self) -> &Cell<Phases> {
        &self.phases
    }

    fn measure(
        &mut self,
        _: &Point,
        inst: &Instance,
        local: Option<[i64; 3]>,
        (cutoff_ms, left_ms): (Option<f64>, f64),
    ) -> Result<Outcome, RemoteError> {
        self.cutoff_ms = cutoff_ms;
        self.left_ms = left_ms;
        Ok(Bench::evaluate(self, &inst.program, &inst.constraints, local))
    }

    fn alive(&mut self) -> bool {
        device_alive(self.rt)
    }
}

/// What identifies a search's shapes in both processes: their count and a
/// hash of their steps and tuner slots.
pub fn plan_key(shapes: &[Shape]) -> String {
    let text: Vec<String> =
        shapes.iter().map(|s| format!("{} {:?}", super::shard::shape_key(s), s.slots)).collect();
    format!("{}-{}", shapes.len(), super::log::fnv_hex(&text.join("\n")))
}

/// `P:D`, as `--device` takes it.
pub fn device_id(info: &DeviceInfo) -> String {
    format!("{}:{}", info.platform_index, info.device_index)
}

/// A worker process serving one device.
pub struct Child {
    device: String,
    process: std::process::Child,
    to: Option<ChildStdin>,
    from: BufReader<ChildStdout>,
    phases: Cell<Phases>,
}

impl Child {
    /// Starts `cmd` serving `info` and waits until it has planned a
    /// search with key `key` and set up its device.
    pub fn spawn(cmd: &WorkerCommand, info: &DeviceInfo, key: &str) -> Result<Child, RemoteError> {
        let device = device_id(info);
        let mut process = Command::new(&cmd.program)
            .args(&cmd.args)
            .arg("--serve-device")
            .arg(&device)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|source| RemoteError::Spawn { program: cmd.program.display().to_string(), source })?;
        let (Some(to), Some(from)) = (process.stdin.take(), process.stdout.take()) else {
            let _ = process.kill();
            let source = std::io::Error::other("no pipe to the process");
            return Err(RemoteError::Io { device, source });
        };
        let mut child =
            Child { device, process, to: Some(to), from: BufReader::new(from), phases: Cell::default() };
        let line = child.read_line("`ready KEY`")?;
        match line.strip_prefix("ready ") {
            Some(theirs) if theirs == key => Ok(child),
            Some(theirs) => Err(RemoteError::OtherPlan {
                device: child.device.clone(),
                ours: key.to_string(),
                theirs: theirs.to_string(),
            }),
            None => Err(child.protocol(line, "`ready KEY`")),
        }
    }

    fn protocol(&self, got: String, expected: &'static str) -> RemoteError {
        RemoteError::Protocol { device: self.device.clone(), got, expected }
    }

    fn io(&self, source: std::io::Error) -> RemoteError {
        RemoteError::Io { device: self.device.clone(), source }
    }

    fn send(&mut self, line: &str) -> Result<(), RemoteError> {
        let Some(to) = self.to.as_mut() else {
            return Err(self.io(std::io::Error::other("its input is closed")));
        };
        let sent = writeln!(to, "{line}").and_then(|_| to.flush());
        sent.map_err(|e| self.io(e))
    }

    /// The next line, without its end; the end of the output is an error
    /// naming what was `expected`.
    fn read_line(&mut self, expected: &'static str) -> Result<String, RemoteError> {
        let mut line = String::new();
        match self.from.read_line(&mut line) {
            Ok(0) => Err(self.protocol("the end of its output (it exited)".to_string(), expected)),
            Ok(_) => Ok(line.trim_end_matches(['\r', '\n']).to_string()),
            Err(e) => Err(self.io(e)),
        }
    }
}

impl Meter for Child {
    fn phases(&self) -> &Cell<Phases> {
        &self.phases
    }

    fn measure(
        &mut self,
        point: &Point,
        _: &Instance,
        _: Option<[i64; 3]>,
        stops: (Option<f64>, f64),
    ) -> Result<Outcome, RemoteError> {
        self.send(&request_line(point, stops))?;
        const ANSWER: &str = "a measure answer (status, median, sizes, phases, message)";
        let line = self.read_line(ANSWER)?;
        let Some((outcome, spent)) = parse_answer(&line) else {
            return Err(self.protocol(line, ANSWER));
        };
        let mut p = self.phases.get();
        p.add(&spent);
        self.phases.set(p);
        Ok(outcome)
    }

    fn alive(&mut self) -> bool {
        self.send("alive").is_ok() && self.read_line("`yes` or `no`").is_ok_and(|l| l == "yes")
    }
}

impl Drop for Child {
    /// Closes its input (it exits at the end of it) and waits for it.
    fn drop(&mut self) {
        drop(self.to.take());
        let _ = self.process.wait();
    }
}

/// The worker process's side: plans the search of `program` with `opts`
/// as the parent did, sets up `device`, says `ready` with the plan's key
/// and answers requests from `input` until it ends.
pub fn serve(
    program: &Program,
    device: DeviceInfo,
    opts: &ExploreOptions,
    input: impl BufRead,
    mut output: impl Write,
) -> Result<(), ExploreError> {
    let (program, opts, gold) = super::prepare_search(program, opts);
    let plan = super::plan(&program, &opts.def, &opts.sizes, &opts.limits)?;
    let (shapes, _, _) =
        super::spaces_for(&plan, &opts.sizes, device.max_work_group, device.compute_units, device.is_gpu());
    let dev = super::setup(device, &program, &opts, &gold.def)?;
    let golds = GoldCache::default();
    let mut bench = super::bench_for(plan.stencil, (&opts, &gold), &program, &dev, &golds);
    let io = |source| ExploreError::Io { path: "the parent's pipe".to_string(), source };
    writeln!(output, "ready {}", plan_key(&shapes)).and_then(|_| output.flush()).map_err(io)?;
    for line in input.lines() {
        let line = line.map_err(io)?;
        let answer = match parse_request(&line) {
            Some(Request::Alive) => if bench.alive() { "yes" } else { "no" }.to_string(),
            Some(Request::Measure { point, stops }) => {
                let before = bench.phases.get();
                let o = measure_point(&mut bench, (&plan, &shapes, &opts.def), &point, stops);
                answer_line(&o, &bench.phases.get().since(&before))
            }
            None => {
                let source = std::io::Error::other(format!("not a request: `{line}`"));
                return Err(io(source));
            }
        };
        writeln!(output, "{answer}").and_then(|_| output.flush()).map_err(io)?;
    }
    Ok(())
}

/// Point `point` of `shapes` measured on `bench`, as the parent's own
/// device would measure it.
fn measure_point(
    bench: &mut Bench,
    (plan, shapes, def): (&super::Plan, &[Shape], &str),
    point: &Point,
    stops: (Option<f64>, f64),
) -> Outcome {
    let inst = shapes.get(point.shape).and_then(|s| s.instantiate(&plan.base, def, &point.values).ok());
    let Some(inst) = inst else {
        let message =
            "internal: the point does not replay in the worker process, which planned the same shapes";
        return Outcome::fail(Status::Refused, message.to_string(), Sizes::new());
    };
    let local = super::local_size(&shapes[point.shape], &point.values);
    (bench.cutoff_ms, bench.left_ms) = stops;
    Bench::evaluate(bench, &inst.program, &inst.constraints, local)
}

/// A request to measure `point`.
pub fn request_line(point: &Point, (cutoff_ms, left_ms): (Option<f64>, f64)) -> String {
    let values: Vec<String> = point.values.iter().map(i64::to_string).collect();
    let cutoff = cutoff_ms.map_or("-".to_string(), |c| format!("{c:e}"));
    format!("measure {} {} {cutoff} {left_ms:e}", point.shape, values.join(","))
}

/// A parsed request.
#[derive(Debug, PartialEq)]
pub enum Request {
    Measure { point: Point, stops: (Option<f64>, f64) },
    Alive,
}

/// `measure ...` or `alive`; `None` for anything else.
pub fn parse_request(line: &str) -> Option<Request> {
    if line == "alive" {
        return Some(Request::Alive);
    }
    let mut w = line.strip_prefix("measure ")?.split(' ');
    let shape = w.next()?.parse().ok()?;
    let values = match w.next()? {
        "" => Vec::new(),
        v => v.split(',').map(|x| x.parse().ok()).collect::<Option<Vec<i64>>>()?,
    };
    let cutoff = match w.next()? {
        "-" => None,
        c => Some(c.parse().ok()?),
    };
    let left = w.next()?.parse().ok()?;
    w.next().is_none().then_some(Request::Measure { point: Point { shape, values }, stops: (cutoff, left) })
}

/// The answer for outcome `o`, which took `spent`.
pub fn answer_line(o: &Outcome, spent: &Phases) -> String {
    let median = o.median_ms.map_or("-".to_string(), |m| format!("{m:e}"));
    let sizes: Vec<String> = o.valid_sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let p = spent;
    let phases = format!("{:e} {:e} {:e} {:e} {:e}", p.derive_s, p.codegen_s, p.build_s, p.gold_s, p.run_s);
    // One line: a driver's build log may hold tabs and newlines.
    let message = o.message.replace(['\t', '\n', '\r'], " ");
    format!("{}\t{median}\t{}\t{phases}\t{message}", o.status.as_str(), sizes.join(","))
}

/// The outcome and phases of an answer; `None` if it is not one.
pub fn parse_answer(line: &str) -> Option<(Outcome, Phases)> {
    let mut f = line.splitn(5, '\t');
    let status = Status::parse(f.next()?)?;
    let median_ms = match f.next()? {
        "-" => None,
        m => Some(m.parse().ok()?),
    };
    let mut valid_sizes = Sizes::new();
    for kv in f.next()?.split(',').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=')?;
        valid_sizes.insert(k.to_string(), v.parse().ok()?);
    }
    let s: Vec<f64> = f.next()?.split(' ').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let [derive_s, codegen_s, build_s, gold_s, run_s] = s[..] else { return None };
    let phases = Phases { derive_s, codegen_s, build_s, gold_s, run_s };
    let message = f.next()?.to_string();
    Some((Outcome { status, median_ms, message, valid_sizes }, phases))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_read_back() {
        let point = Point { shape: 3, values: vec![64, -1, 4] };
        for stops in [(Some(0.0123), 512.5), (None, f64::INFINITY)] {
            let line = request_line(&point, stops);
            assert_eq!(
                parse_request(&line),
                Some(Request::Measure { point: point.clone(), stops }),
                "{line}"
            );
        }
        let none = Point { shape: 0, values: vec![] };
        assert_eq!(
            parse_request(&request_line(&none, (None, 1.0))),
            Some(Request::Measure { point: none, stops: (None, 1.0) })
        );
        assert_eq!(parse_request("alive"), Some(Request::Alive));
        for bad in ["", "measure", "measure 1 2", "measure x 1 - 1", "measure 1 1 - 1 extra", "alive?"] {
            assert_eq!(parse_request(bad), None, "{bad}");
        }
    }

    #[test]
    fn answers_read_back_on_one_line() {
        let o = Outcome {
            status: Status::BuildFailed,
            median_ms: Some(0.0371),
            message: "line 3:\terror\nline 4".to_string(),
            valid_sizes: [("M".to_string(), 1001), ("N".to_string(), 64)].into(),
        };
        let p = Phases { derive_s: 0.0, codegen_s: 0.25, build_s: 1.5, gold_s: 0.0, run_s: 3e-4 };
        let line = answer_line(&o, &p);
        assert!(!line.contains('\n'));
        let (back, phases) = parse_answer(&line).unwrap();
        assert_eq!(
            (&back.status, back.median_ms, &back.valid_sizes),
            (&o.status, o.median_ms, &o.valid_sizes)
        );
        assert_eq!(back.message, "line 3: error line 4");
        assert_eq!(phases, p);
        let none = Outcome { median_ms: None, valid_sizes: Sizes::new(), ..o };
        let (back, _) = parse_answer(&answer_line(&none, &p)).unwrap();
        assert_eq!((back.median_ms, back.valid_sizes.len()), (None, 0));
        assert!(parse_answer("ok\t1\tN=1").is_none());
        assert!(parse_answer("nonsense\t-\t\t0 0 0 0 0\t").is_none());
    }
}
