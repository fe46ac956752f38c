//! Stress test of OpenCL from several threads at once: each thread
//! repeatedly selects the device, creates a context and queue, builds a
//! small kernel, runs it, checks its result and drops everything.
//!
//! `cargo run --release --example cl_threads -- [lift|plain] [THREADS] [SECONDS] [warm]`
//!
//! `lift` goes through `lift::runtime`; `plain` makes the same calls with
//! opencl3 alone, to tell a driver bug from one of ours.

use lift::runtime::{select_device, ElemKind, KernelArg, Launch, Runtime};
use lift::types::HostArray;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::CL_BLOCKING;
use std::time::{Duration, Instant};

const N: usize = 1000;

fn source(salt: usize) -> String {
    // A different source each time, so that PoCL's kernel cache does not
    // turn every build after the first into a lookup.
    format!(
        "kernel void twice(global float* x, int n) {{\n\
         int i = get_global_id(0);\n\
         if (i < n) x[i] = x[i] * 2.0f + {salt}.0f * 0.0f;\n}}\n"
    )
}

fn round_lift(salt: usize) -> Result<(), String> {
    let info = select_device(None).map_err(|e| e.to_string())?;
    let rt = Runtime::new(info).map_err(|e| e.to_string())?;
    let prog = rt.build("twice.cl", &source(salt), "").map_err(|e| e.to_string())?;
    let host: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let buf = rt.upload("x", &HostArray::F32(host.clone())).map_err(|e| e.to_string())?;
    let _unused = rt.zeroed("y", ElemKind::F32, 64).map_err(|e| e.to_string())?;
    let launch = Launch {
        program: &prog,
        kernel: "twice",
        args: vec![KernelArg::Buffer(&buf), KernelArg::Int(N as i32)],
        global: vec![N.div_ceil(64) * 64],
        local: Some(vec![64]),
    };
    rt.run(&[launch]).map_err(|e| e.to_string())?;
    let HostArray::F32(out) = rt.download(&buf).map_err(|e| e.to_string())? else {
        return Err("an f32 buffer came back as i32".into());
    };
    check(&host, &out)
}

fn round_plain(salt: usize) -> Result<(), String> {
    let e = |e: opencl3::error_codes::ClError| e.to_string();
    let platforms = get_platforms().map_err(e)?;
    let ids = platforms.first().ok_or("no platform")?.get_devices(CL_DEVICE_TYPE_ALL).map_err(e)?;
    let device = Device::new(*ids.first().ok_or("no device")?);
    // What `lift::runtime::list_devices` reads first.
    device.name().map_err(e)?;
    let context = Context::from_device(&device).map_err(e)?;
    #[allow(deprecated)]
    let queue = CommandQueue::create_default(&context, opencl3::command_queue::CL_QUEUE_PROFILING_ENABLE)
        .map_err(e)?;
    let program = Program::create_and_build_from_source(&context, &source(salt), "")?;
    let kernel = Kernel::create(&program, "twice").map_err(e)?;
    let mut host: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let orig = host.clone();
    // SAFETY: COPY_HOST_PTR copies `host` before `create` returns.
    let buf = unsafe {
        Buffer::<f32>::create(&context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N, host.as_mut_ptr().cast())
    }
    .map_err(e)?;
    // SAFETY: the arguments match the kernel's signature.
    let ev = unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&buf)
            .set_arg(&(N as i32))
            .set_global_work_size(N.div_ceil(64) * 64)
            .set_local_work_size(64)
            .enqueue_nd_range(&queue)
    }
    .map_err(e)?;
    ev.wait().map_err(e)?;
    let mut out = vec![0f32; N];
    // SAFETY: a blocking read into a slice of the buffer's size.
    unsafe { queue.enqueue_read_buffer(&buf, CL_BLOCKING, 0, &mut out, &[]) }.map_err(e)?;
    check(&orig, &out)
}

fn check(input: &[f32], out: &[f32]) -> Result<(), String> {
    match input.iter().zip(out).position(|(a, b)| a * 2.0 != *b) {
        Some(i) => Err(format!("x[{i}] = {}, expected {}", out[i], input[i] * 2.0)),
        None => Ok(()),
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("lift", String::as_str).to_string();
    let threads: usize = args.get(2).map_or(Ok(4), |s| s.parse()).map_err(|e| format!("THREADS: {e}"))?;
    let secs: u64 = args.get(3).map_or(Ok(10), |s| s.parse()).map_err(|e| format!("SECONDS: {e}"))?;
    let round = match mode.as_str() {
        "lift" => round_lift,
        "plain" => round_plain,
        m => return Err(format!("unknown mode `{m}`: lift or plain")),
    };
    // `warm`: discover the platform once before the threads start.
    if args.get(4).is_some_and(|a| a == "warm") {
        let p = get_platforms().map_err(|e| e.to_string())?;
        p.first().ok_or("no platform")?.get_devices(CL_DEVICE_TYPE_ALL).map_err(|e| e.to_string())?;
    }
    let end = Instant::now() + Duration::from_secs(secs);
    let rounds: Vec<usize> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut n = 0;
                    while Instant::now() < end {
                        if let Err(e) = round(t * 1_000_000 + n) {
                            panic!("thread {t}, round {n}: {e}");
                        }
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("a thread failed")).collect()
    });
    println!("{mode}: {threads} threads, {secs} s, rounds per thread {rounds:?}: no crash");
    Ok(())
}
