//! A context and profiling queue on one device: buffers, builds, launches.

use super::{cl_err, DeviceInfo, KernelProblem, RuntimeError};
use crate::types::HostArray;
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_float, cl_int, CL_BLOCKING};
use std::cell::Cell;
use std::path::PathBuf;
use std::ptr;
use std::time::Instant;

/// The element type of a device buffer (vector components are flat).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemKind {
    F32,
    I32,
}

/// A device buffer with the name it is reported under.
pub struct DeviceBuffer {
    pub name: String,
    pub bytes: usize,
    pub kind: ElemKind,
    buf: Buffer<u8>,
}

impl DeviceBuffer {
    /// The raw memory object, for libraries (CLBlast).
    pub fn raw(&self) -> opencl3::types::cl_mem {
        self.buf.get()
    }
}

/// A built OpenCL program.
pub struct RuntimeProgram {
    pub label: String,
    program: Program,
}

/// One kernel argument.
pub enum KernelArg<'a> {
    Buffer(&'a DeviceBuffer),
    Int(i32),
    Float(f32),
    /// Local memory of this many bytes (`local T*`), none of it from the host.
    Local(usize),
}

/// The times of one [`Runtime::run_clocked`].
#[derive(Clone, Debug, PartialEq)]
pub struct RunTimes {
    /// Each launch's kernel time by its profiling event (END - START).
    pub kernel_ns: Vec<u64>,
    /// The wall time of the whole run on the host.
    pub host_ns: u64,
}

/// One kernel launch: name, arguments and NDRange.
pub struct Launch<'a> {
    pub program: &'a RuntimeProgram,
    pub kernel: &'a str,
    pub args: Vec<KernelArg<'a>>,
    pub global: Vec<usize>,
    pub local: Option<Vec<usize>>,
}

/// An OpenCL context with one in-order queue that records profiling times.
pub struct Runtime {
    pub info: DeviceInfo,
    context: Context,
    queue: CommandQueue,
    /// Where `build` writes each program's device binary and build log
    /// (`lift run --dump-builds`), with a counter for unique names.
    dump: Option<(PathBuf, Cell<usize>)>,
}

fn to_bytes(data: &HostArray) -> (ElemKind, Vec<u8>) {
    match data {
        HostArray::F32(v) => (ElemKind::F32, v.iter().flat_map(|x| x.to_ne_bytes()).collect()),
        HostArray::I32(v) => (ElemKind::I32, v.iter().flat_map(|x| x.to_ne_bytes()).collect()),
    }
}

impl Runtime {
    pub fn new(info: DeviceInfo) -> Result<Runtime, RuntimeError> {
        let device = Device::new(info.id);
        let context = Context::from_device(&device).map_err(cl_err("creating a context"))?;
        // The OpenCL 1.2 entry point works on every driver (2.0+ keeps it).
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(cl_err("creating a profiling command queue"))?;
        Ok(Runtime { info, context, queue, dump: None })
    }

    fn alloc(&self, name: &str, kind: ElemKind, mut bytes: Vec<u8>) -> Result<DeviceBuffer, RuntimeError> {
        let len = bytes.len();
        // OpenCL refuses zero-sized buffers; keep one element so that a
        // kernel with an empty array still gets a valid pointer.
        if bytes.is_empty() {
            bytes.resize(4, 0);
        }
        let alloc_err = |e: opencl3::error_codes::ClError| RuntimeError::Alloc {
            name: name.to_string(),
            bytes: len,
            code: format!("{e} ({})", e.0),
        };
        // SAFETY: the host pointer is valid for `bytes.len()` bytes and
        // COPY_HOST_PTR copies it before `create` returns.
        let buf = unsafe {
            Buffer::<u8>::create(
                &self.context,
                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                bytes.len(),
                bytes.as_mut_ptr() as *mut std::ffi::c_void,
            )
        }
        .map_err(alloc_err)?;
        Ok(DeviceBuffer { name: name.to_string(), bytes: len, kind, buf })
    }

    /// A device buffer holding a copy of `data`.
    pub fn upload(&self, name: &str, data: &HostArray) -> Result<DeviceBuffer, RuntimeError> {
        let (kind, bytes) = to_bytes(data);
        self.alloc(name, kind, bytes)
    }

    /// A zero-filled device buffer of `bytes` bytes.
    pub fn zeroed(&self, name: &str, kind: ElemKind, bytes: usize) -> Result<DeviceBuffer, RuntimeError> {
        self.filled(name, kind, bytes, &[0])
    }

    /// A device buffer of `count` floats, each `value`.
    pub fn filled_f32(&self, name: &str, value: f32, count: usize) -> Result<DeviceBuffer, RuntimeError> {
        self.filled(name, ElemKind::F32, count * 4, &value.to_ne_bytes())
    }

    /// A device buffer of `bytes` bytes, `pattern` repeated, filled by the
    /// device (`clEnqueueFillBuffer`): no host array and no copy over the
    /// bus. Building the 1 GB buffers of the limit line's copy on the host
    /// and copying them over took most of its 5 s on an H200, and every
    /// candidate's output buffer was built so too.
    fn filled(
        &self,
        name: &str,
        kind: ElemKind,
        bytes: usize,
        pattern: &[u8],
    ) -> Result<DeviceBuffer, RuntimeError> {
        // OpenCL refuses zero-sized buffers; keep one element so that a
        // kernel with an empty array still gets a valid pointer.
        let len = bytes.max(4).next_multiple_of(pattern.len());
        let alloc_err = |e: opencl3::error_codes::ClError| RuntimeError::Alloc {
            name: name.to_string(),
            bytes,
            code: format!("{e} ({})", e.0),
        };
        // SAFETY: no host pointer is given.
        let mut buf = unsafe { Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, len, ptr::null_mut()) }
            .map_err(alloc_err)?;
        // SAFETY: the pattern outlives the call (the fill copies it before
        // returning) and `len` is a multiple of its size within the buffer.
        let fill = unsafe { self.queue.enqueue_fill_buffer(&mut buf, pattern, 0, len, &[]) }
            .map_err(cl_err(format!("filling buffer `{name}`")))?;
        fill.wait().map_err(cl_err(format!("filling buffer `{name}`")))?;
        Ok(DeviceBuffer { name: name.to_string(), bytes, kind, buf })
    }

    /// Copies a device buffer back to the host.
    pub fn download(&self, buf: &DeviceBuffer) -> Result<HostArray, RuntimeError> {
        let mut bytes = vec![0u8; buf.bytes];
        if !bytes.is_empty() {
            // SAFETY: a blocking read into a host slice of exactly the
            // buffer's size.
            unsafe { self.queue.enqueue_read_buffer(&buf.buf, CL_BLOCKING, 0, &mut bytes, &[]) }
                .map_err(cl_err(format!("reading buffer `{}` back", buf.name)))?;
        }
        let words = bytes.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]);
        Ok(match buf.kind {
            ElemKind::F32 => HostArray::F32(words.map(f32::from_ne_bytes).collect()),
            ElemKind::I32 => HostArray::I32(words.map(i32::from_ne_bytes).collect()),
        })
    }

    /// The raw queue, for libraries that enqueue their own kernels (CLBlast).
    pub fn raw_queue(&self) -> opencl3::types::cl_command_queue {
        self.queue.get()
    }

    /// Waits until everything enqueued has finished.
    pub fn finish(&self) -> Result<(), RuntimeError> {
        self.queue.finish().map_err(cl_err("waiting for the queue"))
    }

    /// Copies `from` into `to` (same size) on the device.
    pub fn copy(&self, from: &DeviceBuffer, to: &mut DeviceBuffer) -> Result<(), RuntimeError> {
        if from.bytes != to.bytes {
            return Err(RuntimeError::Alloc {
                name: to.name.clone(),
                bytes: to.bytes,
                code: format!("cannot copy `{}` of {} bytes into it", from.name, from.bytes),
            });
        }
        if from.bytes == 0 {
            return Ok(());
        }
        // SAFETY: both buffers are live and at least `bytes` long.
        unsafe { self.queue.enqueue_copy_buffer(&from.buf, &mut to.buf, 0, 0, from.bytes, &[]) }
            .map_err(cl_err(format!("copying `{}` into `{}`", from.name, to.name)))?;
        Ok(())
    }

    /// From now on, every successful `build` also writes the source, the
    /// driver's binary (PTX on NVIDIA) and the build log under `dir`, so the
    /// driver's code for two kernels can be compared.
    pub fn dump_builds_to(&mut self, dir: PathBuf) -> Result<(), RuntimeError> {
        std::fs::create_dir_all(&dir)
            .map_err(|source| RuntimeError::Dump { path: dir.display().to_string(), source })?;
        self.dump = Some((dir, Cell::new(0)));
        Ok(())
    }

    /// Builds OpenCL C source; `label` names the file in errors.
    pub fn build(&self, label: &str, source: &str, options: &str) -> Result<RuntimeProgram, RuntimeError> {
        let mut program = Program::create_from_source(&self.context, source)
            .map_err(cl_err(format!("creating the program of {label}")))?;
        if let Err(e) = super::driver_stderr::filtered(|| program.build(&[self.info.id], options)) {
            let log = program.get_build_log(self.info.id).unwrap_or_default();
            let log =
                if log.trim().is_empty() { format!("(empty log; {e})") } else { log.trim_end().to_string() };
            let kept = keep_build_log(label, source, options, &log);
            return Err(RuntimeError::Build { file: label.to_string(), log, kept });
        }
        if let Some((dir, counter)) = &self.dump {
            let n = counter.get();
            counter.set(n + 1);
            let stem = dir.join(format!("{n:03}-{}", super::slugify(label)));
            let log = program.get_build_log(self.info.id).unwrap_or_default();
            let binary = program.get_binaries().ok().and_then(|b| b.into_iter().next()).unwrap_or_default();
            for (ext, bytes) in [
                ("cl", source.as_bytes()),
                ("bin", binary.as_slice()),
                ("log", format!("options: {options}\n{log}").as_bytes()),
            ] {
                let path = stem.with_extension(ext);
                std::fs::write(&path, bytes)
                    .map_err(|source| RuntimeError::Dump { path: path.display().to_string(), source })?;
            }
        }
        Ok(RuntimeProgram { label: label.to_string(), program })
    }

    /// Enqueues the launches in order, waits for all, and returns each one's
    /// kernel time in nanoseconds (profiling END - START).
    pub fn run(&self, launches: &[Launch<'_>]) -> Result<Vec<u64>, RuntimeError> {
        Ok(self.run_clocked(launches)?.kernel_ns)
    }

    /// [`Runtime::run`], also timed on the host: from before the first
    /// kernel object is made to the queue's finish, the window in which a
    /// host-timed library call (CLBlast's) is timed, so that the two can be
    /// compared on one clock.
    pub fn run_clocked(&self, launches: &[Launch<'_>]) -> Result<RunTimes, RuntimeError> {
        let started = Instant::now();
        let mut kernels = Vec::with_capacity(launches.len());
        for l in launches {
            let kerr = |problem| RuntimeError::Kernel { kernel: l.kernel.to_string(), problem };
            let k = Kernel::create(&l.program.program, l.kernel)
                .map_err(|code| kerr(KernelProblem::NotFound { program: l.program.label.clone(), code }))?;
            for (i, a) in l.args.iter().enumerate() {
                let i = i as u32;
                // SAFETY: each argument has the size OpenCL expects for its
                // kind (a cl_mem handle, a 32-bit int or float, a local
                // buffer's size with no value); a mismatch
                // with the kernel's signature is reported by set_arg.
                let r = unsafe {
                    match a {
                        KernelArg::Buffer(b) => k.set_arg(i, &b.buf.get()),
                        KernelArg::Int(v) => k.set_arg(i, &(*v as cl_int)),
                        KernelArg::Float(v) => k.set_arg(i, &(*v as cl_float)),
                        KernelArg::Local(bytes) => k.set_arg_local_buffer(i, *bytes),
                    }
                };
                r.map_err(|code| kerr(KernelProblem::Arg { index: i, code }))?;
            }
            if l.global.is_empty()
                || l.global.len() > 3
                || l.local.as_ref().is_some_and(|x| x.len() != l.global.len())
            {
                return Err(kerr(KernelProblem::NdRange {
                    global: l.global.clone(),
                    local: l.local.clone(),
                }));
            }
            kernels.push(k);
        }
        let mut events = Vec::with_capacity(launches.len());
        for (l, k) in launches.iter().zip(&kernels) {
            let local_ptr = l.local.as_ref().map_or(ptr::null(), |v| v.as_ptr());
            // SAFETY: the size arrays outlive the call and have `work_dim`
            // entries; arguments were all set above.
            let ev = unsafe {
                self.queue.enqueue_nd_range_kernel(
                    k.get(),
                    l.global.len() as u32,
                    ptr::null(),
                    l.global.as_ptr(),
                    local_ptr,
                    &[],
                )
            }
            .map_err(|code| RuntimeError::Kernel {
                kernel: l.kernel.to_string(),
                problem: KernelProblem::Launch { global: l.global.clone(), local: l.local.clone(), code },
            })?;
            events.push(ev);
        }
        self.queue.finish().map_err(cl_err("waiting for the kernels"))?;
        let host_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mut times = Vec::with_capacity(events.len());
        for (l, ev) in launches.iter().zip(&events) {
            let what = format!("reading the profiling times of `{}`", l.kernel);
            let start = ev.profiling_command_start().map_err(cl_err(what.clone()))?;
            let end = ev.profiling_command_end().map_err(cl_err(what))?;
            times.push(end.saturating_sub(start));
        }
        Ok(RunTimes { kernel_ns: times, host_ns })
    }
}

/// Writes a failed build's log and source to the system temp folder
/// (`lift-build-<pid>-<label>.log`), so that the one-line error can say
/// where the whole log is; `None` where it cannot be written.
fn keep_build_log(label: &str, source: &str, options: &str, log: &str) -> Option<String> {
    let path =
        std::env::temp_dir().join(format!("lift-build-{}-{}.log", std::process::id(), super::slugify(label)));
    let text = format!("build of {label}\noptions: {options}\n\n{log}\n\n---- source ----\n{source}");
    // Never through a link someone left at that name: remove, then create anew.
    let _ = std::fs::remove_file(&path);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&path).ok()?;
    std::io::Write::write_all(&mut f, text.as_bytes()).ok()?;
    Some(path.display().to_string())
}
