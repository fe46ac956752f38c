#!/usr/bin/env python3
"""PyTorch on the GPU beside `lift explore`: the same computation at the same
sizes, timed with CUDA events around each call (the device-side clock, as
Lift's OpenCL profiling events), median of --runs after one warm-up. TF32 is
off so that matrix products are FP32 on both sides.

    python3 peers/pytorch/time_ops.py OP NAME=VALUE... [--runs 20]

OP: sum_sq, max_all, row_max, row_sum, col_sum, copy (a device-to-device
copy of N floats: the memory-bandwidth yardstick). Prints one CSV line:
op,sizes,median_ms.
"""
import sys
import torch

# Importing it also turns TF32 off.
from generality import time_one

OPS = {
    "sum_sq": (lambda s: [torch.rand(s["N"], device="cuda")], lambda x: (x * x).sum()),
    "max_all": (lambda s: [torch.rand(s["N"], device="cuda")], lambda x: x.max()),
    "row_max": (lambda s: [torch.rand(s["M"], s["N"], device="cuda")], lambda a: a.amax(dim=1)),
    "row_sum": (lambda s: [torch.rand(s["M"], s["N"], device="cuda")], lambda a: a.sum(dim=1)),
    "col_sum": (lambda s: [torch.rand(s["M"], s["N"], device="cuda")], lambda a: a.sum(dim=0)),
    "copy": (lambda s: [torch.rand(s["N"], device="cuda")], lambda x: x.clone()),
}


def main(argv):
    runs = 20
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    op, sizes = argv[0], dict((k, int(v)) for k, v in (a.split("=") for a in argv[1:]))
    make, f = OPS[op]
    # The generality suite's clock: CUDA events around each call, median.
    med = time_one(f, make(sizes), runs, 1)
    text = ";".join(f"{k}={v}" for k, v in sizes.items())
    print(f"{op},{text},{med:.5f}")


if __name__ == "__main__":
    main(sys.argv[1:])
