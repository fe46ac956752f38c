//! Listing OpenCL platforms and devices and picking one from a selector.

use super::{cl_err, RuntimeError};
use opencl3::device::{
    Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::platform::get_platforms;
use opencl3::types::cl_device_id;
use std::fmt;
use std::sync::Once;

/// One OpenCL device with the facts the harness reports.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub platform_index: usize,
    pub device_index: usize,
    pub platform_name: String,
    pub platform_vendor: String,
    pub name: String,
    pub vendor: String,
    /// `GPU`, `CPU`, `accelerator` or `other`.
    pub kind: String,
    pub driver: String,
    pub opencl_version: String,
    pub compute_units: u32,
    pub global_mem: u64,
    pub local_mem: u64,
    pub max_alloc: u64,
    pub max_work_group: usize,
    pub(crate) id: cl_device_id,
}

impl DeviceInfo {
    pub fn is_gpu(&self) -> bool {
        self.kind == "GPU"
    }

    /// The directory name of this device's reports: the lowercase device name
    /// with every run of non-alphanumeric characters turned into one `-`.
    pub fn slug(&self) -> String {
        slugify(&self.name)
    }

    /// One line naming the device, for the choice printed at startup.
    pub fn short(&self) -> String {
        format!(
            "[{}:{}] {} ({}, {}, {})",
            self.platform_index,
            self.device_index,
            self.name,
            self.platform_name,
            self.kind,
            self.opencl_version
        )
    }

    fn matches(&self, needle: &str) -> bool {
        let hay = [&self.platform_name, &self.platform_vendor, &self.name, &self.vendor, &self.kind];
        hay.iter().any(|h| h.to_lowercase().contains(needle))
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "[{}:{}] {}", self.platform_index, self.device_index, self.name)?;
        writeln!(f, "    platform:       {} ({})", self.platform_name, self.platform_vendor)?;
        writeln!(f, "    vendor:         {}", self.vendor)?;
        writeln!(f, "    type:           {}", self.kind)?;
        writeln!(f, "    driver:         {}", self.driver)?;
        writeln!(f, "    OpenCL:         {}", self.opencl_version)?;
        writeln!(f, "    compute units:  {}", self.compute_units)?;
        writeln!(f, "    global memory:  {}", human_bytes(self.global_mem))?;
        write!(f, "    local memory:   {}", human_bytes(self.local_mem))
    }
}

/// Lowercase, non-alphanumeric runs become `-`, no leading/trailing `-`.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let t = out.trim_matches('-');
    if t.is_empty() {
        "device".to_string()
    } else {
        t.to_string()
    }
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

fn kind_name(t: u64) -> &'static str {
    if t & CL_DEVICE_TYPE_GPU != 0 {
        "GPU"
    } else if t & CL_DEVICE_TYPE_CPU != 0 {
        "CPU"
    } else if t & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        "accelerator"
    } else {
        "other"
    }
}

/// The process's first enumeration of platforms and devices, which every
/// other thread waits for. A driver workaround, the one process-wide state
/// of the runtime: PoCL (3.1 here, and its master in 2026) initialises its
/// devices in the first `clGetDeviceIDs`, and `pocl_init_devices` checks
/// its recursion guard `init_in_progress` before taking its lock, so a
/// second thread arriving meanwhile returns at once and reads devices not
/// yet set up: none at all, `max_mem_alloc_size` 0 (every buffer then
/// fails with CL_INVALID_BUFFER_SIZE), or a NULL name that
/// `clGetDeviceInfo` hands to `strlen` (SIGSEGV). Once that first
/// enumeration is over, contexts, builds and launches on several threads
/// are safe (`tests/concurrency.rs`).
static FIRST_ENUMERATION: Once = Once::new();

/// Every device of every platform, in platform order.
pub fn list_devices() -> Result<Vec<DeviceInfo>, RuntimeError> {
    FIRST_ENUMERATION.call_once(|| {
        // Errors are reported by the enumeration below.
        for p in get_platforms().unwrap_or_default() {
            let _ = p.get_devices(CL_DEVICE_TYPE_ALL);
        }
    });
    // The ICD loader reports "no platforms" as an error code; both that and
    // an empty list mean the same thing to the user.
    let platforms = get_platforms().map_err(|_| RuntimeError::NoPlatform)?;
    if platforms.is_empty() {
        return Err(RuntimeError::NoPlatform);
    }
    let mut out = Vec::new();
    for (pi, p) in platforms.iter().enumerate() {
        let pname = p.name().unwrap_or_default().trim().to_string();
        let pvendor = p.vendor().unwrap_or_default().trim().to_string();
        // A platform without devices reports an error; skip it.
        let Ok(ids) = p.get_devices(CL_DEVICE_TYPE_ALL) else { continue };
        for (di, id) in ids.into_iter().enumerate() {
            let d = Device::new(id);
            out.push(DeviceInfo {
                platform_index: pi,
                device_index: di,
                platform_name: pname.clone(),
                platform_vendor: pvendor.clone(),
                name: d.name().map_err(cl_err("reading a device name"))?.trim().to_string(),
                vendor: d.vendor().unwrap_or_default().trim().to_string(),
                kind: kind_name(d.dev_type().unwrap_or(0)).to_string(),
                driver: d.driver_version().unwrap_or_default().trim().to_string(),
                opencl_version: d.version().unwrap_or_default().trim().to_string(),
                compute_units: d.max_compute_units().unwrap_or(0),
                global_mem: d.global_mem_size().unwrap_or(0),
                local_mem: d.local_mem_size().unwrap_or(0),
                max_alloc: d.max_mem_alloc_size().unwrap_or(0),
                max_work_group: d.max_work_group_size().unwrap_or(1),
                id,
            });
        }
    }
    if out.is_empty() {
        return Err(RuntimeError::NoPlatform);
    }
    Ok(out)
}

/// Picks a device: `P:D` by index, otherwise a case-insensitive substring of
/// the platform name or vendor, device name or vendor, or type (`gpu`,
/// `cpu`). Without a selector: the first GPU, else the first device.
pub fn select_device(selector: Option<&str>) -> Result<DeviceInfo, RuntimeError> {
    let devices = list_devices()?;
    pick(&devices, selector).cloned()
}

fn pick<'a>(devices: &'a [DeviceInfo], selector: Option<&str>) -> Result<&'a DeviceInfo, RuntimeError> {
    let Some(sel) = selector.map(str::trim).filter(|s| !s.is_empty()) else {
        return devices.iter().find(|d| d.is_gpu()).or(devices.first()).ok_or(RuntimeError::NoPlatform);
    };
    let by_index =
        sel.split_once(':').and_then(|(p, d)| Some((p.parse::<usize>().ok()?, d.parse::<usize>().ok()?)));
    let found = match by_index {
        Some((p, d)) => devices.iter().find(|x| x.platform_index == p && x.device_index == d),
        None => {
            let needle = sel.to_lowercase();
            devices.iter().find(|d| d.matches(&needle))
        }
    };
    found.ok_or_else(|| RuntimeError::NoMatch {
        selector: sel.to_string(),
        available: devices.iter().map(|d| format!("  {}", d.short())).collect::<Vec<_>>().join("\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(p: usize, d: usize, pname: &str, pvendor: &str, name: &str, kind: &str) -> DeviceInfo {
        DeviceInfo {
            platform_index: p,
            device_index: d,
            platform_name: pname.into(),
            platform_vendor: pvendor.into(),
            name: name.into(),
            vendor: name.into(),
            kind: kind.into(),
            driver: "1".into(),
            opencl_version: "OpenCL 3.0".into(),
            compute_units: 1,
            global_mem: 1,
            local_mem: 1,
            max_alloc: 1,
            max_work_group: 1,
            id: std::ptr::null_mut(),
        }
    }

    #[test]
    fn selection_rules() {
        let devs = vec![
            fake(0, 0, "Portable Computing Language", "The pocl project", "pthread-skylake", "CPU"),
            fake(1, 0, "NVIDIA CUDA", "NVIDIA Corporation", "NVIDIA H100 80GB HBM3", "GPU"),
        ];
        assert_eq!(pick(&devs, None).unwrap().name, "NVIDIA H100 80GB HBM3");
        assert_eq!(pick(&devs, Some("pocl")).unwrap().platform_index, 0);
        assert_eq!(pick(&devs, Some("Portable")).unwrap().platform_index, 0);
        assert_eq!(pick(&devs, Some("cpu")).unwrap().platform_index, 0);
        assert_eq!(pick(&devs, Some("nvidia")).unwrap().platform_index, 1);
        assert_eq!(pick(&devs, Some("1:0")).unwrap().platform_index, 1);
        let err = pick(&devs, Some("amd")).unwrap_err().to_string();
        assert!(err.contains("`amd`") && err.contains("H100") && err.contains("skylake"), "{err}");
        assert!(pick(&devs[..1], None).unwrap().kind == "CPU");
    }

    #[test]
    fn slugs() {
        assert_eq!(slugify("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(slugify("pthread-skylake-avx512-AMD EPYC"), "pthread-skylake-avx512-amd-epyc");
        assert_eq!(slugify("  ?? "), "device");
    }
}
