#!/usr/bin/env bash
# Artifact-evaluation entry point.
#   ./run.sh [lift all options]   run every benchmark, write reports/<device>/
#   ./run.sh test                 run the test suite
# It installs what is missing (OpenCL ICD loader; PoCL when no OpenCL
# platform exists), registers NVIDIA's OpenCL driver when it is present but
# unregistered, and builds in release mode unless only a prebuilt binary can
# be used (no cargo on the machine).
set -euo pipefail
cd "$(dirname "$0")"

say() { printf '[run.sh] %s\n' "$*"; }

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi

apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        say "cannot install $* (no apt-get); please install it by hand"
        return 1
    fi
    say "installing $*"
    $SUDO apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

have_lib() { ldconfig -p 2>/dev/null | grep -q "$1"; }

# 1. The OpenCL ICD loader (libOpenCL.so.1), which the binary links against.
if ! have_lib 'libOpenCL.so.1'; then
    apt_install ocl-icd-libopencl1 || true
fi

# Building needs the unversioned libOpenCL.so to link against.
if command -v cargo >/dev/null 2>&1 && ! have_lib 'libOpenCL.so '; then
    apt_install ocl-icd-opencl-dev || true
fi

# 2. NVIDIA's driver ships libnvidia-opencl.so.1 but may not be registered.
if have_lib 'libnvidia-opencl.so.1' || [ -e /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 ]; then
    if ! grep -qs 'libnvidia-opencl' /etc/OpenCL/vendors/*.icd 2>/dev/null \
        && ! grep -qs 'libnvidia-opencl' "${OCL_ICD_VENDORS:-/nonexistent}"/*.icd 2>/dev/null; then
        if mkdir -p /etc/OpenCL/vendors 2>/dev/null && [ -w /etc/OpenCL/vendors ]; then
            echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
            say "registered NVIDIA OpenCL in /etc/OpenCL/vendors/nvidia.icd"
        else
            icd_dir="${TMPDIR:-/tmp}/lift-icd"
            mkdir -p "$icd_dir"
            echo libnvidia-opencl.so.1 > "$icd_dir/nvidia.icd"
            # Keep the system's other vendors visible next to NVIDIA's.
            cp /etc/OpenCL/vendors/*.icd "$icd_dir/" 2>/dev/null || true
            export OCL_ICD_VENDORS="$icd_dir"
            say "registered NVIDIA OpenCL through OCL_ICD_VENDORS=$icd_dir"
        fi
    fi
fi

# 3. Some OpenCL platform must exist; on a machine without one, use PoCL.
count_platforms() {
    if command -v clinfo >/dev/null 2>&1; then
        clinfo -l 2>/dev/null | grep -c '^Platform' || true
    else
        { ls /etc/OpenCL/vendors/*.icd "${OCL_ICD_VENDORS:-/nonexistent}"/*.icd 2>/dev/null || true; } | wc -l
    fi
}
if [ "$(count_platforms)" -eq 0 ]; then
    say "no OpenCL platform found: installing PoCL (OpenCL on the CPU)"
    apt_install pocl-opencl-icd clinfo || true
fi
if ! command -v clinfo >/dev/null 2>&1; then apt_install clinfo || true; fi

# 4. The binary: build it, or use the prebuilt one where there is no cargo.
LIFT=target/release/lift
if command -v cargo >/dev/null 2>&1; then
    if [ "${1:-}" != "test" ]; then
        say "building (cargo build --release)"
        cargo build --release --quiet
    fi
elif [ -x "$LIFT" ]; then
    say "cargo not found: using the prebuilt $LIFT"
else
    say "error: neither cargo nor a prebuilt $LIFT is available; install Rust (https://rustup.rs)"
    exit 2
fi

if [ "${1:-}" = "test" ]; then
    shift
    if ! command -v cargo >/dev/null 2>&1; then
        say "error: the test suite needs cargo"
        exit 2
    fi
    say "running the test suite"
    if cargo nextest --version >/dev/null 2>&1; then
        exec cargo nextest run --release "$@"
    else
        exec cargo test --release "$@"
    fi
fi

# 5. The Halide peer of the stencil suite (peers/halide/README.md): built
# ahead of time where Halide can be installed from PyPI; without it the
# halide rows say skipped. A machine without a registry uses a carried
# peers/halide/bin.
if [ ! -x peers/halide/bin/halide-peer-opencl ] && command -v python3 >/dev/null 2>&1 \
    && command -v g++ >/dev/null 2>&1; then
    say "building the Halide peer (peers/halide/build.sh; a few minutes, once)"
    peers/halide/build.sh --if-possible || say "the Halide peer did not build: its rows will say skipped"
fi

# The Halide peer runs its OpenCL build on GPUs (the API and driver the Lift
# kernels use); LIFT_HALIDE_GPU=cuda selects its CUDA build instead.

# 6. Which device: with no GPU, say that PoCL (the CPU) is used.
if [ "$(count_platforms)" -gt 0 ] && command -v clinfo >/dev/null 2>&1 \
    && ! clinfo 2>/dev/null | grep -qi 'Device Type.*GPU'; then
    say "no GPU found: running on the CPU through PoCL with the tiny size preset"
fi

status=0
"$LIFT" all "$@" || status=$?
say "report: reports/<device>/results.csv and figure8.{svg,pdf} (ls reports/)"
exit $status
