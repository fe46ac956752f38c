// The Halide peer's runner: one executable holding every stencil pipeline
// of the CGO 2018 suite, each compiled ahead of time under several
// schedules (see pipelines.py). The lift harness calls it as
//
//   halide-peer BENCHMARK IN_1.npy .. IN_k.npy OUT.npy REPS
//
// For each schedule it runs the pipeline once untimed (this also copies the
// inputs to the device), then R times, each call followed by a device sync,
// and takes the median wall time of one call (host-timed: launch overhead
// included, transfers not, as the inputs stay on the device). It prints one
// line per schedule and, last, the best:
//
//   schedule=<name> median_ms=<x>
//   median_ms=<best> schedule=<name>
//
// and writes the best schedule's output to OUT.npy (float32, C order: the
// first input's shape, less the pipeline's `shrink` on every side).
// Exit codes: 0 ok, 2 bad arguments or input files, 1 a pipeline failed.

#include "HalideBuffer.h"
#include "HalideRuntime.h"
#include "registry.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using Halide::Runtime::Buffer;

namespace {

[[noreturn]] void die(int code, const std::string &msg) {
    std::fprintf(stderr, "halide-peer: %s\n", msg.c_str());
    std::exit(code);
}

// A float32 or int32 array read from .npy (version 1 or 2 headers).
struct Array {
    std::vector<int> shape;  // numpy order: outermost first
    bool is_int = false;
    std::vector<uint32_t> data;  // the raw 4-byte elements
};

Array read_npy(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) die(2, path + ": cannot open");
    char magic[6];
    f.read(magic, 6);
    if (!f || std::memcmp(magic, "\x93NUMPY", 6) != 0) die(2, path + ": not a .npy file");
    unsigned char ver[2];
    f.read(reinterpret_cast<char *>(ver), 2);
    uint32_t hlen = 0;
    if (ver[0] == 1) {
        unsigned char b[2];
        f.read(reinterpret_cast<char *>(b), 2);
        hlen = b[0] | (b[1] << 8);
    } else {
        unsigned char b[4];
        f.read(reinterpret_cast<char *>(b), 4);
        hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
    }
    std::string header(hlen, ' ');
    f.read(&header[0], hlen);
    if (!f) die(2, path + ": truncated header");
    Array a;
    if (header.find("'descr': '<i4'") != std::string::npos)
        a.is_int = true;
    else if (header.find("'descr': '<f4'") == std::string::npos)
        die(2, path + ": expected dtype float32 ('<f4') or int32 ('<i4')");
    if (header.find("'fortran_order': False") == std::string::npos)
        die(2, path + ": expected C order");
    auto lp = header.find('(', header.find("'shape'"));
    auto rp = header.find(')', lp);
    if (lp == std::string::npos || rp == std::string::npos) die(2, path + ": no shape");
    std::stringstream ss(header.substr(lp + 1, rp - lp - 1));
    std::string item;
    size_t n = 1;
    while (std::getline(ss, item, ',')) {
        if (item.find_first_not_of(" ") == std::string::npos) continue;
        int d = std::atoi(item.c_str());
        if (d <= 0) die(2, path + ": bad shape entry `" + item + "`");
        a.shape.push_back(d);
        n *= size_t(d);
    }
    a.data.resize(n);
    f.read(reinterpret_cast<char *>(a.data.data()), std::streamsize(n * 4));
    if (!f) die(2, path + ": fewer elements than its shape says");
    return a;
}

void write_npy(const std::string &path, const std::vector<int> &shape, const float *data) {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
    size_t n = 1;
    for (size_t i = 0; i < shape.size(); i++) {
        dict += std::to_string(shape[i]) + (shape.size() == 1 ? ",)" : (i + 1 < shape.size() ? ", " : ")"));
        n *= size_t(shape[i]);
    }
    dict += ", }";
    size_t total = 10 + dict.size() + 1;
    dict += std::string((64 - total % 64) % 64, ' ') + "\n";
    std::ofstream f(path, std::ios::binary);
    if (!f) die(2, path + ": cannot write");
    f.write("\x93NUMPY\x01\x00", 8);
    uint16_t hl = uint16_t(dict.size());
    f.put(char(hl & 0xff));
    f.put(char(hl >> 8));
    f.write(dict.data(), std::streamsize(dict.size()));
    f.write(reinterpret_cast<const char *>(data), std::streamsize(n * sizeof(float)));
    if (!f) die(2, path + ": write failed");
}

// Halide's dimension 0 is the innermost: reverse numpy's shape. A scalar
// (shape ()) becomes a one-element vector.
Buffer<> as_buffer(Array &a) {
    std::vector<int> sizes(a.shape.rbegin(), a.shape.rend());
    if (sizes.empty()) sizes.push_back(1);
    halide_type_t t = a.is_int ? halide_type_of<int32_t>() : halide_type_of<float>();
    Buffer<> b(t, a.data.data(), sizes);
    // A wrapped host array is not "dirty", and a GPU pipeline would then
    // allocate its device copy without copying the data into it.
    b.set_host_dirty();
    return b;
}

double time_once(const Schedule &s, std::vector<Buffer<>> &ins, Buffer<float> &out) {
    std::vector<halide_buffer_t *> raw;
    for (auto &b : ins) raw.push_back(b.raw_buffer());
    auto t0 = std::chrono::steady_clock::now();
    int rc = s.run(raw.data(), out.raw_buffer());
    if (rc == 0) rc = out.device_sync();
    auto t1 = std::chrono::steady_clock::now();
    if (rc != 0) return -1.0;
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) die(2, "usage: halide-peer BENCHMARK IN_1.npy .. IN_k.npy OUT.npy REPS  (or --list)");
    std::string bench = argv[1];
    if (bench == "--list") {
        for (const Pipeline &p : PIPELINES) std::printf("%s (%zu schedules)\n", p.name, p.schedules.size());
        return 0;
    }
    // BENCHMARK IN_1.npy .. IN_k.npy OUT.npy REPS
    std::vector<std::string> rest(argv + 2, argv + argc);
    const Pipeline *pipe = nullptr;
    for (const Pipeline &p : PIPELINES)
        if (bench == p.name) pipe = &p;
    if (!pipe) die(2, "unknown benchmark `" + bench + "` (--list shows them)");
    if (int(rest.size()) != pipe->inputs + 2)
        die(2, bench + " takes " + std::to_string(pipe->inputs) + " input file(s), then OUT.npy and REPS; got " +
                   std::to_string(rest.size()) + " argument(s)");
    int reps = std::atoi(rest.back().c_str());
    if (reps < 1) die(2, "REPS must be a positive integer, got `" + rest.back() + "`");
    std::string out_path = rest[rest.size() - 2];
    std::vector<std::string> in_paths(rest.begin(), rest.end() - 2);

    std::vector<Array> arrays;
    for (auto &p : in_paths) arrays.push_back(read_npy(p));
    if (int(arrays[0].shape.size()) != pipe->dims)
        die(2, in_paths[0] + ": expected a " + std::to_string(pipe->dims) + "-dimensional grid");
    std::vector<int> out_shape = arrays[0].shape;
    for (int &d : out_shape) {
        d -= 2 * pipe->shrink;
        if (d < 1) die(2, in_paths[0] + ": grid too small for " + bench);
    }

    double best = -1.0;
    const Schedule *best_s = nullptr;
    std::vector<float> best_out;
    for (const Schedule &s : pipe->schedules) {
        std::vector<Buffer<>> ins;
        for (auto &a : arrays) ins.push_back(as_buffer(a));
        std::vector<int> sizes(out_shape.rbegin(), out_shape.rend());
        Buffer<float> out(sizes);
        if (time_once(s, ins, out) < 0) {  // warm-up: JIT of the device code, input copies
            std::printf("schedule=%s failed\n", s.name);
            continue;
        }
        std::vector<double> ts;
        bool ok = true;
        for (int r = 0; r < reps && ok; r++) {
            double t = time_once(s, ins, out);
            ok = t >= 0;
            ts.push_back(t);
        }
        if (!ok) {
            std::printf("schedule=%s failed\n", s.name);
            continue;
        }
        std::sort(ts.begin(), ts.end());
        double med = ts.size() % 2 ? ts[ts.size() / 2] : 0.5 * (ts[ts.size() / 2 - 1] + ts[ts.size() / 2]);
        std::printf("schedule=%s median_ms=%.6f\n", s.name, med);
        if (best < 0 || med < best) {
            best = med;
            best_s = &s;
            out.copy_to_host();
            best_out.assign(out.data(), out.data() + out.number_of_elements());
        }
        for (auto &b : ins) b.device_free();
        out.device_free();
    }
    if (!best_s) die(1, "every schedule of " + bench + " failed");
    write_npy(out_path, out_shape, best_out.data());
    std::printf("median_ms=%.6f schedule=%s\n", best, best_s->name);
    return 0;
}
