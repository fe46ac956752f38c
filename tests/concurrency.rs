//! The runtime from several threads at once. PoCL set up its devices
//! lazily and unsafely when two threads enumerated them first at the same
//! time (no device, CL_INVALID_BUFFER_SIZE, or SIGSEGV in `clGetDeviceInfo`);
//! `runtime::list_devices` now lets the first enumeration finish before any
//! other. This file holds one test only, so that its threads are the
//! process's first users of OpenCL under `cargo test` as under nextest.

use lift::runtime::{select_device, ElemKind, KernelArg, Launch, Runtime, RuntimeError};
use lift::types::HostArray;
use std::sync::Barrier;
use std::time::{Duration, Instant};

const THREADS: usize = 4;
/// Rounds each thread runs at least, and the time after which it stops
/// starting new ones.
const MIN_ROUNDS: usize = 2;
const FOR: Duration = Duration::from_secs(3);

/// A kernel whose text differs per round (so that PoCL's kernel cache does
/// not turn builds into lookups): `x[i] = x[i] * k + c` for `i < n`.
fn source(c: usize) -> String {
    format!(
        "kernel void axpc(global float* x, float k, int n) {{\n\
         int i = get_global_id(0);\n\
         if (i < n) x[i] = x[i] * k + {c}.0f;\n}}\n"
    )
}

/// Finds the device, creates a context and queue, builds and runs a kernel,
/// checks its result, and drops the runtime before the program and buffer
/// made from it. `Ok(false)`: there is no OpenCL device.
fn round(thread: usize, n: usize) -> Result<bool, String> {
    let info = match select_device(None) {
        Ok(i) => i,
        Err(RuntimeError::NoPlatform) => return Ok(false),
        Err(e) => return Err(e.to_string()),
    };
    let rt = Runtime::new(info).map_err(|e| e.to_string())?;
    let c = thread * 1000 + n;
    let prog = rt.build("axpc.cl", &source(c), "").map_err(|e| e.to_string())?;
    // A build error on one thread while others build is reported, not fatal.
    match rt.build("broken.cl", "kernel void f(global float* x) { x[0] = y; }", "") {
        Err(RuntimeError::Build { log, .. }) if !log.is_empty() => {}
        other => return Err(format!("the broken kernel: {:?}", other.map(|p| p.label))),
    }
    // Not a multiple of the work-group size.
    let len = 1000 + 37 * thread + n % 7;
    let host: Vec<f32> = (0..len).map(|i| (i % 101) as f32 - 50.0).collect();
    let k = 1.5 + thread as f32;
    let buf = rt.upload("x", &HostArray::F32(host.clone())).map_err(|e| e.to_string())?;
    let _spare = rt.zeroed("spare", ElemKind::I32, 4 * len).map_err(|e| e.to_string())?;
    let launch = Launch {
        program: &prog,
        kernel: "axpc",
        args: vec![KernelArg::Buffer(&buf), KernelArg::Float(k), KernelArg::Int(len as i32)],
        global: vec![len.div_ceil(64) * 64],
        local: Some(vec![64]),
    };
    let times = rt.run(&[launch]).map_err(|e| e.to_string())?;
    if times.len() != 1 {
        return Err(format!("{} kernel times for one launch", times.len()));
    }
    let HostArray::F32(out) = rt.download(&buf).map_err(|e| e.to_string())? else {
        return Err("the float buffer came back as ints".into());
    };
    for (i, (x, y)) in host.iter().zip(&out).enumerate() {
        let want = x * k + c as f32;
        if *y != want {
            return Err(format!("x[{i}] = {y}, expected {want}"));
        }
    }
    drop(rt);
    drop((prog, buf));
    Ok(true)
}

#[test]
fn threads_create_use_and_drop_runtimes_at_once() {
    let start = Barrier::new(THREADS);
    let end = Instant::now() + FOR;
    let results: Vec<Result<(usize, bool), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let start = &start;
                s.spawn(move || {
                    // Every thread enumerates the devices first at the same time.
                    start.wait();
                    let mut n = 0;
                    while n < MIN_ROUNDS || Instant::now() < end {
                        match round(t, n) {
                            Ok(true) => n += 1,
                            Ok(false) => return Ok((n, false)),
                            Err(e) => return Err(format!("thread {t}, round {n}: {e}")),
                        }
                    }
                    Ok((n, true))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a thread panicked".into()))).collect()
    });
    let results: Vec<(usize, bool)> = results.into_iter().collect::<Result<_, _>>().unwrap();
    // Without a device every thread says so; a device seen by some threads
    // only is the race this test is about.
    let found: Vec<bool> = results.iter().map(|r| r.1).collect();
    if found.iter().all(|f| !f) && select_device(None).is_err() {
        println!("skipped: no OpenCL device");
        return;
    }
    assert!(found.iter().all(|f| *f), "some threads found no device: {results:?}");
    println!("rounds per thread: {:?}", results.iter().map(|r| r.0).collect::<Vec<_>>());
}
