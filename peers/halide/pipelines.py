"""The Halide peer of the CGO 2018 stencil suite.

Each pipeline computes what the benchmark's gold function computes
(src/harness/gold/cgo18/formulas.rs), with the same boundary handling, in
single precision. Each is compiled ahead of time under a grid of schedules;
the runner (runner.cpp) times every schedule on the device at hand and keeps
the fastest, so Halide gets a tuned schedule, not an untuned autoscheduler.

Every schedule is compiled twice over: once for any grid size, and once per
preset named in STATIC_PRESETS with the grid's extents and strides known at
compile time (read from configs/<benchmark>.yaml), as Lift's kernels are
compiled for their sizes where the search found that faster. The runner only
times a schedule compiled for a size on a grid of that size.

Usage: python3 pipelines.py OUTDIR TARGET [CONFIGS_DIR [PRESET,...]]
  TARGET e.g. x86-64-linux-opencl; CONFIGS_DIR defaults to ../../configs
  beside this file; the presets default to small,large ("" for none).
Writes OUTDIR/<fn>.a/.h for every (pipeline, schedule), OUTDIR/runtime.a and
OUTDIR/registry.h.
"""

import os
import sys

import halide as hl
import yaml

x, y, z = hl.Var("x"), hl.Var("y"), hl.Var("z")


def f32(v):
    return hl.f32(v)


# ---- algorithms -------------------------------------------------------------
# Each returns (inputs, output Func, dims, shrink): `inputs` the ImageParams in
# the config's `halide.inputs` order, `dims` 2 or 3 (of the output), `shrink`
# how many elements the output loses per side against the first input.


def clamp2(p):
    return hl.BoundaryConditions.repeat_edge(p)


def stencil2d():
    a = hl.ImageParam(hl.Float(32), 2, "a")
    f = hl.Func("stencil2d")
    p = lambda dy, dx: a[x + 1 + dx, y + 1 + dy]
    f[x, y] = (f32(0.25) * p(0, 0)
               + f32(0.15) * (p(-1, 0) + p(1, 0) + p(0, -1) + p(0, 1))
               + f32(0.05) * (p(-1, -1) + p(-1, 1) + p(1, -1) + p(1, 1)))
    return [a], f, 2, 1


def srad1():
    j = hl.ImageParam(hl.Float(32), 2, "J")
    q = hl.ImageParam(hl.Float(32), 1, "q0sqr")
    b = clamp2(j)
    q0 = q[0]
    c = b[x, y]
    dn, ds = b[x, y - 1] - c, b[x, y + 1] - c
    dw, de = b[x - 1, y] - c, b[x + 1, y] - c
    g2 = (dn * dn + ds * ds + dw * dw + de * de) / (c * c)
    l = (dn + ds + dw + de) / c
    num = f32(0.5) * g2 - f32(1.0 / 16.0) * (l * l)
    den = f32(1.0) + f32(0.25) * l
    qsqr = num / (den * den)
    den2 = (qsqr - q0) / (q0 * (f32(1.0) + q0))
    f = hl.Func("srad1")
    f[x, y] = hl.clamp(f32(1.0) / (f32(1.0) + den2), f32(0.0), f32(1.0))
    return [j, q], f, 2, 0


def srad2():
    j = hl.ImageParam(hl.Float(32), 2, "J")
    cc = hl.ImageParam(hl.Float(32), 2, "c")
    b, c = clamp2(j), clamp2(cc)
    jc = b[x, y]
    dn, ds = b[x, y - 1] - jc, b[x, y + 1] - jc
    dw, de = b[x - 1, y] - jc, b[x + 1, y] - jc
    cn, cs, cw, ce = c[x, y], c[x, y + 1], c[x, y], c[x + 1, y]
    f = hl.Func("srad2")
    f[x, y] = jc + f32(0.25 * 0.5) * (cn * dn + cs * ds + cw * dw + ce * de)
    return [j, cc], f, 2, 0


def hotspot2d():
    t = hl.ImageParam(hl.Float(32), 2, "temp")
    p = hl.ImageParam(hl.Float(32), 2, "power")
    b, q = clamp2(t), clamp2(p)
    c = b[x, y]
    n, s, w, e = b[x, y - 1], b[x, y + 1], b[x - 1, y], b[x + 1, y]
    f = hl.Func("hotspot2d")
    f[x, y] = c + f32(0.5) * (q[x, y] + (s + n - f32(2.0) * c) * f32(0.12)
                              + (e + w - f32(2.0) * c) * f32(0.1) + (f32(80.0) - c) * f32(0.0125))
    return [t, p], f, 2, 0


def hotspot3d():
    t = hl.ImageParam(hl.Float(32), 3, "temp")
    p = hl.ImageParam(hl.Float(32), 3, "power")
    b, q = clamp2(t), clamp2(p)
    a = lambda dz, dy, dx: b[x + dx, y + dy, z + dz]
    f = hl.Func("hotspot3d")
    f[x, y, z] = (f32(0.41) * a(0, 0, 0) + f32(0.1) * a(0, 0, -1) + f32(0.1) * a(0, 0, 1)
                  + f32(0.12) * a(0, 1, 0) + f32(0.12) * a(0, -1, 0)
                  + f32(0.05) * a(-1, 0, 0) + f32(0.05) * a(1, 0, 0)
                  + f32(0.5) * q[x, y, z] + f32(0.05 * 80.0))
    return [t, p], f, 3, 0


def acoustic():
    # `nbrs` holds each point's number of neighbours inside the room, as the
    # original code's room mask does (the config's generator makes it).
    cur = hl.ImageParam(hl.Float(32), 3, "cur")
    prev = hl.ImageParam(hl.Float(32), 3, "prev")
    nbrs = hl.ImageParam(hl.Int(32), 3, "nbrs")
    b = hl.BoundaryConditions.constant_exterior(cur, f32(0.0))
    nn = hl.cast(hl.Float(32), nbrs[x, y, z])
    s = (b[x, y, z - 1] + b[x, y, z + 1] + b[x, y - 1, z] + b[x, y + 1, z]
         + b[x - 1, y, z] + b[x + 1, y, z])
    l2 = f32(1.0 / 3.0)
    cf1 = hl.select(nn < f32(6.0), f32(0.99), f32(1.0))
    cf2 = hl.select(nn < f32(6.0), f32(1.01), f32(1.0))
    f = hl.Func("acoustic")
    f[x, y, z] = cf1 * ((f32(2.0) - l2 * nn) * cur[x, y, z] + l2 * s - cf2 * prev[x, y, z])
    return [cur, prev, nbrs], f, 3, 0


def gaussian():
    a = hl.ImageParam(hl.Float(32), 2, "a")
    wts = hl.ImageParam(hl.Float(32), 1, "weights")
    b = clamp2(a)
    acc = None
    for dy in range(-2, 3):
        for dx in range(-2, 3):
            term = wts[(dy + 2) * 5 + dx + 2] * b[x + dx, y + dy]
            acc = term if acc is None else acc + term
    f = hl.Func("gaussian")
    f[x, y] = acc
    return [a, wts], f, 2, 0


def gradient():
    a = hl.ImageParam(hl.Float(32), 2, "a")
    b = clamp2(a)
    c = b[x, y]

    def sq(v):
        return (c - v) * (c - v)

    f = hl.Func("gradient")
    f[x, y] = c + f32(1.0) / hl.sqrt(f32(1e-4) + sq(b[x, y - 1]) + sq(b[x, y + 1])
                                     + sq(b[x - 1, y]) + sq(b[x + 1, y]))
    return [a], f, 2, 0


def jacobi2d5():
    a = hl.ImageParam(hl.Float(32), 2, "a")
    b = clamp2(a)
    f = hl.Func("jacobi2d5")
    f[x, y] = (f32(5.1) * b[x, y - 1] + f32(12.1) * b[x - 1, y] + f32(15.0) * b[x, y]
               + f32(12.2) * b[x + 1, y] + f32(5.2) * b[x, y + 1]) / f32(118.0)
    return [a], f, 2, 0


def jacobi2d9():
    a = hl.ImageParam(hl.Float(32), 2, "a")
    b = clamp2(a)
    f = hl.Func("jacobi2d9")
    f[x, y] = (f32(7.1) * b[x, y - 2] + f32(5.1) * b[x, y - 1] + f32(9.2) * b[x - 2, y]
               + f32(12.1) * b[x - 1, y] + f32(15.0) * b[x, y] + f32(12.2) * b[x + 1, y]
               + f32(9.3) * b[x + 2, y] + f32(5.2) * b[x, y + 1] + f32(7.2) * b[x, y + 2]) / f32(118.0)
    return [a], f, 2, 0


def star3d(name, body):
    a = hl.ImageParam(hl.Float(32), 3, "a")
    b = clamp2(a)
    f = hl.Func(name)
    f[x, y, z] = body(lambda dz, dy, dx: b[x + dx, y + dy, z + dz])
    return [a], f, 3, 0


def jacobi3d7():
    return star3d("jacobi3d7", lambda a: (
        f32(0.161) * a(0, 0, 1) + f32(0.162) * a(0, 0, -1) + f32(0.163) * a(0, 1, 0)
        + f32(0.164) * a(0, -1, 0) + f32(0.165) * a(1, 0, 0) + f32(0.166) * a(-1, 0, 0)
        - f32(1.67) * a(0, 0, 0)))


def jacobi3d13():
    return star3d("jacobi3d13", lambda a: (
        f32(0.25) * a(0, 0, 0) + f32(0.061) * a(0, 0, -1) + f32(0.062) * a(0, 0, 1)
        + f32(0.063) * a(0, -1, 0) + f32(0.064) * a(0, 1, 0) + f32(0.065) * a(-1, 0, 0)
        + f32(0.066) * a(1, 0, 0) + f32(0.031) * a(0, 0, -2) + f32(0.032) * a(0, 0, 2)
        + f32(0.033) * a(0, -2, 0) + f32(0.034) * a(0, 2, 0) + f32(0.035) * a(-2, 0, 0)
        + f32(0.036) * a(2, 0, 0)))


def poisson():
    def body(a):
        faces = a(0, 0, -1) + a(0, 0, 1) + a(0, -1, 0) + a(0, 1, 0) + a(-1, 0, 0) + a(1, 0, 0)
        edges = (a(0, -1, -1) + a(0, -1, 1) + a(0, 1, -1) + a(0, 1, 1)
                 + a(-1, 0, -1) + a(-1, 0, 1) + a(1, 0, -1) + a(1, 0, 1)
                 + a(-1, -1, 0) + a(-1, 1, 0) + a(1, -1, 0) + a(1, 1, 0))
        return f32(2.666) * a(0, 0, 0) - f32(0.166) * faces - f32(0.0833) * edges
    return star3d("poisson", body)


def heat():
    def body(a):
        c = a(0, 0, 0)
        return (c + f32(0.125) * (a(1, 0, 0) - f32(2.0) * c + a(-1, 0, 0))
                + f32(0.125) * (a(0, 1, 0) - f32(2.0) * c + a(0, -1, 0))
                + f32(0.125) * (a(0, 0, 1) - f32(2.0) * c + a(0, 0, -1)))
    return star3d("heat", body)


# benchmark name (configs/<name>.yaml) -> algorithm
PIPELINES = {
    "stencil2d": stencil2d,
    "srad1": srad1,
    "srad2": srad2,
    "hotspot2d": hotspot2d,
    "hotspot3d": hotspot3d,
    "acoustic": acoustic,
    "gaussian": gaussian,
    "gradient": gradient,
    "jacobi2d-5pt": jacobi2d5,
    "jacobi2d-9pt": jacobi2d9,
    "jacobi3d-7pt": jacobi3d7,
    "jacobi3d-13pt": jacobi3d13,
    "poisson": poisson,
    "heat": heat,
}

# ---- schedules --------------------------------------------------------------
# GPU: thread blocks of (tx, ty[, tz]) with k outputs per thread along y (2D)
# or z (3D, a serial loop per thread over k planes): the grid a careful
# Halide user would search. CPU: parallel rows, vectorised x.

GPU_2D = [(tx, ty, k) for (tx, ty) in [(32, 4), (32, 8), (64, 4), (32, 16), (128, 2), (16, 16), (256, 1)]
          for k in (1, 2, 4)]
GPU_3D = [(tx, ty, k) for (tx, ty) in [(32, 4), (32, 8), (64, 4), (128, 2), (32, 2), (256, 1)]
          for k in (1, 2, 4, 8)]
CPU = [(v, rows) for v in (8, 16) for rows in (1, 8, 32)]


def gpu_schedules(dims):
    out = []
    for (tx, ty, k) in (GPU_2D if dims == 2 else GPU_3D):
        def apply(f, tx=tx, ty=ty, k=k):
            xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
            if dims == 2:
                yii = hl.Var("yii")
                f.tile(x, y, xo, yo, xi, yi, tx, ty * k, hl.TailStrategy.GuardWithIf)
                f.split(yi, yi, yii, k, hl.TailStrategy.GuardWithIf)
                f.reorder(yii, xi, yi, xo, yo)
                f.gpu_blocks(xo, yo).gpu_threads(xi, yi)
                if k > 1:
                    f.unroll(yii)
            else:
                zo, zi = hl.Var("zo"), hl.Var("zi")
                f.tile(x, y, xo, yo, xi, yi, tx, ty, hl.TailStrategy.GuardWithIf)
                f.split(z, zo, zi, k, hl.TailStrategy.GuardWithIf)
                f.reorder(zi, xi, yi, xo, yo, zo)
                f.gpu_blocks(xo, yo, zo).gpu_threads(xi, yi)
        out.append((f"tile{tx}x{ty}_k{k}", apply))
    return out


def cpu_schedules(dims):
    out = []
    for (v, rows) in CPU:
        def apply(f, v=v, rows=rows):
            yo, yi = hl.Var("yo"), hl.Var("yi")
            outer = z if dims == 3 else y
            if dims == 3:
                f.reorder(x, y, z)
            f.split(outer, yo, yi, rows, hl.TailStrategy.GuardWithIf).parallel(yo)
            f.vectorize(x, v, hl.TailStrategy.GuardWithIf)
        out.append((f"vec{v}_rows{rows}", apply))
    return out


# ---- compile-time sizes -----------------------------------------------------


def extent(dim, sizes, where):
    """One entry of a config's `shape`: a literal or a size variable."""
    if isinstance(dim, int):
        return dim
    if isinstance(dim, str) and dim in sizes:
        return int(sizes[dim])
    raise SystemExit(f"pipelines.py: {where}: expected a number or a size name, got {dim!r}")


def static_grids(bench, configs_dir, presets):
    """[(preset, extents x first)] of the benchmark's grid (its first Halide
    input) at each preset; every other input of the grid's rank must have
    the same shape, since all of them are bound to these extents."""
    path = os.path.join(configs_dir, bench + ".yaml")
    with open(path) as fh:
        cfg = yaml.safe_load(fh)
    shapes = {i["name"]: i["shape"] for i in cfg["inputs"]}
    names = cfg["halide"]["inputs"]
    out = []
    for preset in presets:
        if preset not in cfg["sizes"]:
            raise SystemExit(f"pipelines.py: {path}: no size preset `{preset}`")
        sizes = cfg["sizes"][preset]
        grid = [extent(d, sizes, path) for d in shapes[names[0]]]
        for n in names[1:]:
            other = [extent(d, sizes, path) for d in shapes[n]]
            if len(other) == len(grid) and other != grid:
                raise SystemExit(f"pipelines.py: {path}: input `{n}` is {other}, the grid is {grid}")
        out.append((preset, grid[::-1]))
    return out


def bind_dense(dim_of, extents):
    """Bounds (min 0) and dense strides for every dimension, x first."""
    stride = 1
    for i, e in enumerate(extents):
        dim_of(i).set_bounds(0, e).set_stride(stride)
        stride *= e


def bind_sizes(inputs, f, grid, shrink):
    """Makes the grid's extents and strides compile-time constants: every
    input of the grid's rank, and the output (the grid less `shrink`)."""
    for p in inputs:
        if p.dimensions() == len(grid):
            bind_dense(p.dim, grid)
    bind_dense(f.output_buffer().dim, [e - 2 * shrink for e in grid])


def c_ident(s):
    return "".join(ch if ch.isalnum() else "_" for ch in s)


def compile_one(algo, apply, fn, grid, lib_target, outdir):
    """Compiles one (pipeline, schedule[, sizes]); False when Halide refuses."""
    inputs, f, _, shrink = algo()
    apply(f)
    if grid is not None:
        bind_sizes(inputs, f, grid, shrink)
    args = [hl.Argument(p) for p in inputs]
    try:
        f.compile_to({hl.OutputFileType.static_library: os.path.join(outdir, fn + ".a"),
                      hl.OutputFileType.c_header: os.path.join(outdir, fn + ".h")},
                     args, fn, lib_target)
    except Exception as e:  # a schedule Halide refuses is left out, loudly
        print(f"pipelines.py: {fn}: not compiled: {e}", file=sys.stderr)
        return False
    return True


def main():
    outdir, target_s = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    configs_dir = sys.argv[3] if len(sys.argv) > 3 else os.path.join(here, "..", "..", "configs")
    presets = [p for p in (sys.argv[4] if len(sys.argv) > 4 else "small,large").split(",") if p]
    os.makedirs(outdir, exist_ok=True)
    base = hl.Target(target_s)
    gpu = base.has_gpu_feature()
    lib_target = base.with_feature(hl.TargetFeature.NoRuntime)
    hl.compile_standalone_runtime(os.path.join(outdir, "runtime.o"), base)
    reg = []
    for bench, algo in PIPELINES.items():
        scheds = []
        probe_inputs, _, dims, shrink = algo()
        grids = [(None, None)] + static_grids(bench, configs_dir, presets)
        for sname, apply in (gpu_schedules(dims) if gpu else cpu_schedules(dims)):
            for preset, grid in grids:
                name = sname if preset is None else f"{sname}@{preset}"
                fn = c_ident(f"{bench}__{name}")
                if compile_one(algo, apply, fn, grid, lib_target, outdir):
                    key = "" if grid is None else "x".join(str(e) for e in grid)
                    scheds.append((name, key, fn))
        reg.append((bench, len(probe_inputs), dims, shrink, scheds))
        print(f"{bench}: {len(scheds)} schedules", flush=True)
    with open(os.path.join(outdir, "registry.h"), "w") as h:
        h.write("// Generated by pipelines.py: every (pipeline, schedule) of the peer.\n#pragma once\n")
        h.write("#include <vector>\n#include \"HalideRuntime.h\"\n")
        for _, _, _, _, scheds in reg:
            for _, _, fn in scheds:
                h.write(f"#include \"{fn}.h\"\n")
        h.write("// grid: the first input's extents, x first (\"504x458\"), the schedule was\n"
                "// compiled for; \"\" for any size.\n")
        h.write("struct Schedule { const char *name; const char *grid; "
                "int (*run)(halide_buffer_t **ins, halide_buffer_t *out); };\n")
        h.write("struct Pipeline { const char *name; int inputs; int dims; int shrink; std::vector<Schedule> schedules; };\n")
        for bench, n, _, _, scheds in reg:
            for _, _, fn in scheds:
                ins = ", ".join(f"ins[{i}]" for i in range(n))
                h.write(f"static int call_{fn}(halide_buffer_t **ins, halide_buffer_t *out) "
                        f"{{ return {fn}({ins}, out); }}\n")
        h.write("static const std::vector<Pipeline> PIPELINES = {\n")
        for bench, n, dims, shrink, scheds in reg:
            entries = ", ".join(f"{{\"{s}\", \"{k}\", call_{fn}}}" for s, k, fn in scheds)
            h.write(f"  {{\"{bench}\", {n}, {dims}, {shrink}, {{{entries}}}}},\n")
        h.write("};\n")
    with open(os.path.join(outdir, "libs.txt"), "w") as t:
        for _, _, _, _, scheds in reg:
            for _, _, fn in scheds:
                t.write(fn + ".a\n")


if __name__ == "__main__":
    main()
