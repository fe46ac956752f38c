#!/usr/bin/env python3
"""PyTorch beside the generality suite (`lift generality`): each program of
benchmarks/generality/ written as a PyTorch user would write it, at the same
sizes, on the same GPU.

Reads lines `NAME K=V ...` on stdin (the program and its sizes), prints one
CSV line per program: `NAME,median_ms,timing,expression` or
`NAME,,error,message`. On a CUDA device each call is timed with CUDA events
(the device-side clock, as Lift's OpenCL profiling events), median of --runs
after --warmup untimed calls; TF32 is off so matrix products are FP32 on
both sides. Without CUDA it runs on the CPU, timed on the host clock
(`timing` says which).

    python3 peers/pytorch/generality.py [--runs 20] [--warmup 2] < jobs.txt
"""
import sys
import time

try:
    import torch
except ImportError as e:  # reported per program by the caller
    print(f"#error,torch is not importable: {e}")
    sys.exit(3)

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
DEV = "cuda" if torch.cuda.is_available() else "cpu"


def r(*shape):
    return torch.rand(*shape, device=DEV) * 2.0 - 1.0


F = torch.nn.functional

# name -> (inputs from the sizes, the computation, its text for the CSV).
PROGRAMS = {
    "saxpy": (lambda s: [1.5, r(s["N"]), r(s["N"])], lambda a, x, y: a * x + y, "a * x + y"),
    "fma3": (lambda s: [r(s["N"]), r(s["N"]), r(s["N"])], lambda a, b, c: torch.addcmul(c, a, b), "addcmul(c, a, b)"),
    "sigmoid": (lambda s: [r(s["N"])], torch.sigmoid, "sigmoid(x)"),
    "bias_relu": (lambda s: [r(s["M"], s["N"]), r(s["N"])], lambda a, b: torch.relu(a + b), "relu(a + b)"),
    "scale_rows": (lambda s: [r(s["M"], s["N"]), r(s["M"])], lambda a, v: a * v[:, None], "a * s[:, None]"),
    "sum": (lambda s: [r(s["N"])], torch.sum, "x.sum()"),
    "maxall": (lambda s: [r(s["N"])], torch.max, "x.max()"),
    "l1norm": (lambda s: [r(s["N"])], lambda x: x.abs().sum(), "x.abs().sum()"),
    "l2norm": (lambda s: [r(s["N"])], torch.linalg.vector_norm, "linalg.vector_norm(x)"),
    "argmax": (lambda s: [r(s["N"])], torch.argmax, "x.argmax()"),
    "dot": (lambda s: [r(s["N"]), r(s["N"])], torch.dot, "dot(x, y)"),
    "rowsum": (lambda s: [r(s["M"], s["N"])], lambda a: a.sum(dim=1), "a.sum(dim=1)"),
    "rowmax": (lambda s: [r(s["M"], s["N"])], lambda a: a.amax(dim=1), "a.amax(dim=1)"),
    "colsum": (lambda s: [r(s["M"], s["N"])], lambda a: a.sum(dim=0), "a.sum(dim=0)"),
    "colmax": (lambda s: [r(s["M"], s["N"])], lambda a: a.amax(dim=0), "a.amax(dim=0)"),
    "rownorm": (lambda s: [r(s["M"], s["N"])], lambda a: (a * a).sum(dim=1), "(a * a).sum(dim=1)"),
    "rowexpsum": (lambda s: [r(s["M"], s["N"])], lambda a: a.exp().sum(dim=1), "a.exp().sum(dim=1)"),
    "gemv": (lambda s: [r(s["M"], s["N"]), r(s["N"])], torch.mv, "mv(a, x)"),
    "gemvt": (lambda s: [r(s["M"], s["N"]), r(s["M"])], lambda a, x: torch.mv(a.t(), x), "mv(a.t(), x)"),
    "mm_nn": (lambda s: [r(s["M"], s["K"]), r(s["K"], s["N"])], torch.mm, "mm(a, b)"),
    "mm_nt": (lambda s: [r(s["M"], s["K"]), r(s["N"], s["K"])], lambda a, b: torch.mm(a, b.t()), "mm(a, b.t())"),
    "mm_tn": (lambda s: [r(s["K"], s["M"]), r(s["K"], s["N"])], lambda a, b: torch.mm(a.t(), b), "mm(a.t(), b)"),
    "mm_tt": (lambda s: [r(s["K"], s["M"]), r(s["N"], s["K"])], lambda a, b: torch.mm(a.t(), b.t()), "mm(a.t(), b.t())"),
    "bmm": (lambda s: [r(s["B"], s["M"], s["K"]), r(s["B"], s["K"], s["N"])], torch.bmm, "bmm(a, b)"),
    "transpose": (lambda s: [r(s["M"], s["N"])], lambda a: a.t().contiguous(), "a.t().contiguous()"),
    "outer": (lambda s: [r(s["M"]), r(s["N"])], torch.outer, "outer(x, y)"),
    "pdist": (lambda s: [r(s["M"], s["D"]), r(s["N"], s["D"])], lambda p, q: torch.cdist(p, q) ** 2, "cdist(p, q) ** 2"),
    "blur1d": (
        lambda s: [r(s["N"]), torch.full((1, 1, 3), 1.0 / 3.0, device=DEV)],
        lambda x, w: F.conv1d(F.pad(x[None, None], (1, 1), mode="replicate"), w)[0, 0],
        "conv1d(pad(x, replicate), 1/3)",
    ),
    "box2d": (
        lambda s: [r(s["H"], s["W"]), torch.full((1, 1, 3, 3), 1.0 / 9.0, device=DEV)],
        lambda a, w: F.conv2d(a[None, None], w, padding=1)[0, 0],
        "conv2d(a, 1/9, padding=1)",
    ),
    "lap2d": (
        lambda s: [
            r(s["H"], s["W"]),
            torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]], device=DEV)[None, None],
        ],
        lambda a, w: F.conv2d(F.pad(a[None, None], (1, 1, 1, 1), mode="reflect"), w)[0, 0],
        "conv2d(pad(a, reflect), laplacian)",
    ),
    "heat3d": (
        lambda s: [r(s["Z"], s["Y"], s["X"]), heat_weights()],
        lambda a, w: F.conv3d(F.pad(a[None, None], (1, 1, 1, 1, 1, 1), mode="circular"), w)[0, 0],
        "conv3d(pad(a, circular), 7-point)",
    ),
    "softmax": (lambda s: [r(s["M"], s["N"])], lambda a: torch.softmax(a, dim=1), "softmax(a, dim=1)"),
    # The holdout suite (benchmarks/holdout/).
    "axpby": (lambda s: [1.5, 0.5, r(s["N"]), r(s["N"])], lambda a, b, x, y: a * x + b * y, "a * x + b * y"),
    "dot3": (lambda s: [r(s["N"]), r(s["N"]), r(s["N"])], lambda x, y, z: (x * y * z).sum(), "(x * y * z).sum()"),
    "rowcenter": (
        lambda s: [1.0 / s["N"], r(s["M"], s["N"])],
        lambda inv, a: a - a.sum(dim=1, keepdim=True) * inv,
        "a - a.sum(dim=1, keepdim=True) * inv",
    ),
    "colnorm": (lambda s: [r(s["M"], s["N"])], lambda a: (a * a).sum(dim=0), "(a * a).sum(dim=0)"),
    "mv_relu": (lambda s: [r(s["M"], s["N"]), r(s["N"])], lambda a, x: torch.relu(torch.mv(a, x)), "relu(mv(a, x))"),
    "blur5": (
        lambda s: [r(s["N"]), r(1, 1, 5)],
        lambda x, w: F.conv1d(F.pad(x[None, None], (2, 2), mode="replicate"), w)[0, 0],
        "conv1d(pad(x, replicate), w)",
    ),
    "gradmag": (
        lambda s: [r(s["H"], s["W"]), grad_weights()],
        lambda a, w: torch.linalg.vector_norm(F.conv2d(F.pad(a[None, None], (1, 1, 1, 1), mode="reflect"), w)[0], dim=0)
        * 0.5,
        "norm(conv2d(pad(a, reflect), [dx, dy])) / 2",
    ),
    # The holdout suite's second batch.
    "colabsmax": (lambda s: [r(s["M"], s["N"])], lambda a: a.abs().amax(dim=0), "a.abs().amax(dim=0)"),
    "rowl1": (lambda s: [r(s["M"], s["N"])], lambda a: a.abs().sum(dim=1), "a.abs().sum(dim=1)"),
    "gemv_bias": (
        lambda s: [r(s["M"], s["N"]), r(s["N"]), r(s["M"])],
        lambda a, x, b: torch.addmv(b, a, x),
        "addmv(b, a, x)",
    ),
    "lerp": (lambda s: [0.3, r(s["N"]), r(s["N"])], lambda t, x, y: torch.lerp(x, y, t), "lerp(x, y, t)"),
    "hblur3": (
        lambda s: [r(s["H"], s["W"]), torch.tensor([0.25, 0.5, 0.25], device=DEV).reshape(1, 1, 1, 3)],
        lambda a, w: F.conv2d(F.pad(a[None, None], (1, 1, 0, 0), mode="replicate"), w)[0, 0],
        "conv2d(pad(a, replicate), 1x3)",
    ),
    "sqdist": (lambda s: [r(s["N"]), r(s["N"])], lambda x, y: ((x - y) ** 2).sum(), "((x - y) ** 2).sum()"),
    # The holdout suite's third batch.
    "softplus": (lambda s: [r(s["N"])], F.softplus, "softplus(x)"),
    "rowdot": (lambda s: [r(s["M"], s["N"]), r(s["M"], s["N"])], lambda a, b: (a * b).sum(dim=1), "(a * b).sum(dim=1)"),
    "colmean": (lambda s: [1.0 / s["M"], r(s["M"], s["N"])], lambda inv, a: a.mean(dim=0), "a.mean(dim=0)"),
    "pool2": (lambda s: [r(s["N"])], lambda x: F.max_pool1d(x[None, None], 2)[0, 0], "max_pool1d(x, 2)"),
    "smooth2d": (
        lambda s: [r(s["H"], s["W"]), smooth_weights()],
        lambda a, w: F.conv2d(F.pad(a[None, None], (1, 1, 1, 1), mode="replicate"), w)[0, 0],
        "conv2d(pad(a, replicate), 5-point)",
    ),
    "rownormalize": (
        lambda s: [r(s["M"], s["N"])],
        lambda a: a / torch.linalg.vector_norm(a, dim=1, keepdim=True),
        "a / vector_norm(a, dim=1, keepdim=True)",
    ),
    "mm_scaled": (lambda s: [r(s["M"], s["K"]), r(s["K"], s["N"])], lambda a, b: 0.5 * (a @ b), "0.5 * (a @ b)"),
    # The holdout suite's fourth batch.
    "linear_relu": (
        lambda s: [r(s["M"], s["K"]), r(s["N"], s["K"]), r(s["N"])],
        lambda x, w, b: torch.relu(F.linear(x, w, b)),
        "relu(linear(x, w, bias))",
    ),
    "rowvar": (
        lambda s: [1.0 / s["N"], r(s["M"], s["N"])],
        lambda inv, a: a.var(dim=1, unbiased=False),
        "a.var(dim=1, unbiased=False)",
    ),
    "bgemv": (
        lambda s: [r(s["B"], s["M"], s["N"]), r(s["B"], s["N"])],
        lambda a, x: torch.bmm(a, x[:, :, None])[:, :, 0],
        "bmm(a, x[:, :, None])",
    ),
    "maxpool2d": (lambda s: [r(s["H"], s["W"])], lambda a: F.max_pool2d(a[None, None], 2)[0, 0], "max_pool2d(a, 2)"),
    "add_t": (lambda s: [r(s["N"], s["N"]), r(s["N"], s["N"])], lambda a, b: a + b.t(), "a + b.t()"),
    "cosine": (
        lambda s: [r(s["M"], s["N"]), r(s["M"], s["N"])],
        lambda a, b: F.cosine_similarity(a, b, dim=1),
        "cosine_similarity(a, b, dim=1)",
    ),
    "sum_mid": (lambda s: [r(s["X"], s["Y"], s["Z"])], lambda a: a.sum(dim=1), "a.sum(dim=1)"),
    "affine2d": (
        lambda s: [r(s["M"], s["N"]), r(s["M"]), r(s["N"])],
        lambda a, sc, t: torch.addcmul(t, a, sc[:, None]),
        "addcmul(t, a, s[:, None])",
    ),
    # The holdout suite's fifth batch.
    "scores": (
        lambda s: [0.125, r(s["B"], s["M"], s["D"]), r(s["B"], s["N"], s["D"])],
        lambda sc, q, k: torch.bmm(q, k.transpose(1, 2)) * sc,
        "bmm(q, k.transpose(1, 2)) * s",
    ),
    "gemvt_bias": (
        lambda s: [r(s["M"], s["N"]), r(s["M"]), r(s["N"])],
        lambda a, x, b: torch.addmv(b, a.t(), x),
        "addmv(b, a.t(), x)",
    ),
    "rowmax_sub": (lambda s: [r(s["M"], s["N"])], lambda a: a - a.amax(dim=1, keepdim=True), "a - a.amax(dim=1, keepdim=True)"),
    "rowdist": (
        lambda s: [r(s["M"], s["N"]), r(s["N"])],
        lambda a, v: torch.linalg.vector_norm(a - v[None, :], dim=1),
        "vector_norm(a - v, dim=1)",
    ),
    "outer_relu": (lambda s: [r(s["M"]), r(s["N"])], lambda x, y: torch.relu(x[:, None] + y[None, :]), "relu(x[:, None] + y)"),
    "mm_rowbias": (
        lambda s: [r(s["M"], s["K"]), r(s["K"], s["N"]), r(s["M"])],
        lambda a, b, bias: torch.addmm(bias[:, None], a, b),
        "addmm(bias[:, None], a, b)",
    ),
    "transpose_scale": (lambda s: [r(s["M"], s["N"])], lambda a: (2.0 * a.t()).contiguous(), "(2 * a.t()).contiguous()"),
    # The holdout suite's sixth batch.
    "mean": (lambda s: [1.0 / s["N"], r(s["N"])], lambda inv, x: x.mean(), "x.mean()"),
    "logsumexp": (lambda s: [r(s["M"], s["N"])], lambda a: torch.logsumexp(a, dim=1), "logsumexp(a, dim=1)"),
    "layernorm": (
        lambda s: [1.0 / s["N"], r(s["M"], s["N"])],
        lambda inv, a: F.layer_norm(a, (a.shape[1],), eps=1e-5),
        "layer_norm(a, (N,))",
    ),
    "conv1d_w": (
        lambda s: [r(s["N"]), r(1, 1, 5)],
        lambda x, w: F.conv1d(x[None, None], w)[0, 0],
        "conv1d(x, w)",
    ),
    "rowargmax": (lambda s: [r(s["M"], s["N"])], lambda a: a.argmax(dim=1), "a.argmax(dim=1)"),
    "fro": (lambda s: [r(s["M"], s["N"])], lambda a: (a * a).sum(), "(a * a).sum()"),
    "sum_last": (lambda s: [r(s["X"], s["Y"], s["Z"])], lambda a: a.sum(dim=2), "a.sum(dim=2)"),
    # The holdout suite's fifteenth batch.
    "chan_mean": (
        lambda s: [1.0 / (s["H"] * s["W"]), r(s["C"], s["H"], s["W"])],
        lambda inv, a: a.mean(dim=(1, 2)),
        "a.mean(dim=(1, 2))",
    ),
    "seq_sum": (lambda s: [r(s["B"], s["T"], s["D"])], lambda a: a.sum(dim=1), "a.sum(dim=1)"),
    "hinge": (
        lambda s: [r(s["N"]), r(s["N"])],
        lambda x, y: torch.clamp(1.0 - x * y, min=0.0).sum(),
        "clamp(1 - x * y, min=0).sum()",
    ),
    "poly3": (
        lambda s: [0.5, -1.25, 0.75, 2.0, r(s["N"])],
        lambda c0, c1, c2, c3, x: ((c3 * x + c2) * x + c1) * x + c0,
        "((c3 * x + c2) * x + c1) * x + c0",
    ),
    "clip": (lambda s: [-0.5, 0.5, r(s["N"])], lambda lo, hi, x: torch.clamp(x, lo, hi), "clamp(x, lo, hi)"),
    # The holdout suite's seventh batch.
    "mse": (lambda s: [1.0 / s["N"], r(s["N"]), r(s["N"])], lambda inv, x, y: F.mse_loss(x, y), "mse_loss(x, y)"),
    "colsoftmax": (lambda s: [r(s["M"], s["N"])], lambda a: torch.softmax(a, dim=0), "softmax(a, dim=0)"),
    "gram": (lambda s: [r(s["M"], s["K"])], lambda a: a @ a.t(), "a @ a.t()"),
    "bmm_tn": (
        lambda s: [r(s["B"], s["K"], s["M"]), r(s["B"], s["K"], s["N"])],
        lambda a, b: torch.bmm(a.transpose(1, 2), b),
        "bmm(a.transpose(1, 2), b)",
    ),
    "map3d": (lambda s: [r(s["X"], s["Y"], s["Z"])], lambda a: F.gelu(a, approximate="tanh"), "gelu(a, approximate='tanh')"),
    "segsum": (lambda s: [r(s["N"])], lambda x: x.view(-1, 64).sum(dim=1), "x.view(-1, 64).sum(dim=1)"),
    "scale_cols": (lambda s: [r(s["M"], s["N"]), r(s["N"])], lambda a, v: a * v[None, :], "a * s[None, :]"),
    "maxabsdiff": (lambda s: [r(s["N"]), r(s["N"])], lambda x, y: (x - y).abs().max(), "(x - y).abs().max()"),
    # The holdout suite's eighth batch.
    "softmax_t": (lambda s: [0.5, r(s["M"], s["N"])], lambda t, a: torch.softmax(a * t, dim=1), "softmax(a * s, dim=1)"),
    "rmsnorm": (
        lambda s: [1.0 / s["N"], r(s["M"], s["N"])],
        lambda inv, a: a * torch.rsqrt((a * a).mean(dim=1, keepdim=True) + 1e-6),
        "a * rsqrt((a * a).mean(dim=1, keepdim=True) + eps)",
    ),
    "huber": (lambda s: [r(s["N"]), r(s["N"])], lambda x, y: F.huber_loss(x, y, reduction="none"), "huber_loss(x, y, reduction='none')"),
    "maxpool3": (lambda s: [r(s["N"])], lambda x: F.max_pool1d(x[None, None], 3, stride=1)[0, 0], "max_pool1d(x, 3, stride=1)"),
    "mm_tn_relu": (lambda s: [r(s["K"], s["M"]), r(s["K"], s["N"])], lambda a, b: torch.relu(a.t() @ b), "relu(a.t() @ b)"),
    "colsum_relu": (lambda s: [r(s["M"], s["N"])], lambda a: torch.relu(a).sum(dim=0), "relu(a).sum(dim=0)"),
    "axpy2d": (lambda s: [1.5, r(s["M"], s["N"]), r(s["M"], s["N"])], lambda a, x, y: a * x + y, "a * x + y"),
    "lnorm_let": (
        lambda s: [1.0 / s["N"], r(s["M"], s["N"])],
        lambda inv, a: F.layer_norm(a, (a.shape[1],), eps=1e-5),
        "layer_norm(a, (N,))",
    ),
    "logsoftmax": (lambda s: [r(s["M"], s["N"])], lambda a: torch.log_softmax(a, dim=1), "log_softmax(a, dim=1)"),
    "l2rows_let": (lambda s: [r(s["M"], s["N"])], lambda a: a / a.norm(dim=1, keepdim=True), "a / a.norm(dim=1, keepdim=True)"),
    "dot_let": (lambda s: [r(s["N"]), r(s["N"])], torch.dot, "dot(x, y)"),
    "gelu_let": (lambda s: [r(s["N"])], lambda x: F.gelu(x, approximate="tanh"), "gelu(x, approximate='tanh')"),
    "sigmoid_sum": (lambda s: [r(s["M"], s["N"])], lambda a: torch.sigmoid(a).sum(dim=1), "sigmoid(a).sum(dim=1)"),
    "swish_sum": (lambda s: [r(s["M"], s["N"])], lambda a: F.silu(a).sum(dim=1), "silu(a).sum(dim=1)"),
    "cnorm": (
        lambda s: [1.0 / s["N"], r(s["M"], s["N"])],
        lambda inv, a: (a - a.mean(dim=1, keepdim=True)).norm(dim=1),
        "(a - a.mean(dim=1, keepdim=True)).norm(dim=1)",
    ),
    "scale_shift": (lambda s: [1.5, -0.5, r(s["N"])], lambda a, b, x: x * a + b, "x * a + b"),
    "minmax_rows": (
        lambda s: [r(s["M"], s["N"])],
        lambda a: (a - a.amin(dim=1, keepdim=True)) / (a.amax(dim=1, keepdim=True) - a.amin(dim=1, keepdim=True)),
        "(a - amin) / (amax - amin) per row",
    ),
    "relu_rowsum": (lambda s: [r(s["M"], s["N"])], lambda a: torch.relu(a).sum(dim=1), "relu(a).sum(dim=1)"),
    "sse_let": (lambda s: [r(s["N"]), r(s["N"])], lambda x, y: ((x - y) ** 2).sum(), "((x - y) ** 2).sum()"),
    # The holdout suite's eleventh batch (sizes not powers of two).
    "abs_sum": (lambda s: [r(s["N"])], lambda x: x.abs().sum(), "x.abs().sum()"),
    "rowmean": (lambda s: [1.0 / s["N"], r(s["M"], s["N"])], lambda inv, a: a.mean(dim=1), "a.mean(dim=1)"),
    "img_blur": (
        lambda s: [r(s["H"], s["W"]), torch.full((1, 1, 3, 3), 1.0 / 9.0, device=DEV)],
        lambda a, w: F.conv2d(F.pad(a[None, None], (1, 1, 1, 1), mode="replicate"), w)[0, 0],
        "conv2d(pad(a, replicate), 1/9)",
    ),
    "matmul_sq": (lambda s: [r(s["M"], s["K"]), r(s["K"], s["N"])], torch.mm, "mm(a, b)"),
    "atx": (lambda s: [r(s["M"], s["N"]), r(s["M"])], lambda a, x: torch.mv(a.t(), x), "mv(a.t(), x)"),
    "colmin": (lambda s: [r(s["M"], s["N"])], lambda a: a.amin(dim=0), "a.amin(dim=0)"),
    "logcosh": (lambda s: [r(s["N"])], lambda x: torch.log(torch.cosh(x)), "log(cosh(x))"),
    "l1rows": (lambda s: [r(s["M"], s["N"])], lambda a: a / a.abs().sum(dim=1, keepdim=True), "a / a.abs().sum(dim=1, keepdim=True)"),
    "sobelx": (
        lambda s: [r(s["H"], s["W"]), sobel_weights()],
        lambda a, w: F.conv2d(F.pad(a[None, None], (1, 1, 1, 1), mode="reflect"), w)[0, 0],
        "conv2d(pad(a, reflect), sobel_x)",
    ),
    # The holdout suite's twelfth batch (odd and prime sizes).
    "rowmaxabs": (lambda s: [r(s["M"], s["N"])], lambda a: a.abs().amax(dim=1), "a.abs().amax(dim=1)"),
    "colavg": (lambda s: [1.0 / s["M"], r(s["M"], s["N"])], lambda inv, a: a.mean(dim=0), "a.mean(dim=0)"),
    "wsum": (lambda s: [r(s["N"]), r(s["N"])], lambda w, x: (w * x).sum(), "(w * x).sum()"),
    "fmaclip": (
        lambda s: [r(s["N"]), r(s["N"]), r(s["N"])],
        lambda a, b, c: torch.clamp(torch.addcmul(c, a, b), -1.0, 1.0),
        "clamp(addcmul(c, a, b), -1, 1)",
    ),
    "mm_abt": (lambda s: [r(s["M"], s["K"]), r(s["N"], s["K"])], lambda a, b: a @ b.t(), "a @ b.t()"),
    "matvec": (lambda s: [r(s["M"], s["N"]), r(s["N"])], torch.mv, "mv(a, x)"),
    "lap5": (
        lambda s: [
            r(s["H"], s["W"]),
            torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]], device=DEV)[None, None],
        ],
        lambda a, w: F.conv2d(F.pad(a[None, None], (1, 1, 1, 1), mode="replicate"), w)[0, 0],
        "conv2d(pad(a, replicate), laplacian)",
    ),
    "exp_shift": (
        lambda s: [r(s["M"], s["N"])],
        lambda a: torch.exp(a - a.amax(dim=1, keepdim=True)),
        "exp(a - a.amax(dim=1, keepdim=True))",
    ),
    # The thirteenth batch (row functions at odd row lengths).
    "attn_softmax": (lambda s: [r(s["M"], s["N"])], lambda a: torch.softmax(a, dim=1), "softmax(a, dim=1)"),
    "vocab_lse": (lambda s: [r(s["B"], s["V"])], lambda a: torch.logsumexp(a, dim=1), "logsumexp(a, dim=1)"),
    "rowvar_odd": (
        lambda s: [1.0 / s["N"], r(s["M"], s["N"])],
        lambda inv, a: a.var(dim=1, unbiased=False),
        "a.var(dim=1, unbiased=False)",
    ),
    "ln_affine": (
        lambda s: [1.0 / s["N"], r(s["M"], s["N"]), r(s["N"]), r(s["N"])],
        lambda inv, a, g, b: F.layer_norm(a, (a.shape[1],), weight=g, bias=b, eps=1e-5),
        "layer_norm(a, (N,), g, b)",
    ),
    "logits_softmax": (lambda s: [r(s["B"], s["C"])], lambda z: torch.softmax(z, dim=1), "softmax(z, dim=1)"),
    "rowmin_short": (lambda s: [r(s["M"], s["N"])], lambda a: a.amin(dim=1), "a.amin(dim=1)"),
    "head_dot": (lambda s: [r(s["M"], s["D"]), r(s["M"], s["D"])], lambda q, k: (q * k).sum(dim=1), "(q * k).sum(dim=1)"),
    # The holdout suite's sixteenth batch.
    "trace_ab": (lambda s: [r(s["N"], s["N"]), r(s["N"], s["N"])], lambda a, b: (a * b.t()).sum(), "(a * b.t()).sum()"),
    "bilinear": (lambda s: [r(s["M"], s["N"]), r(s["M"]), r(s["N"])], lambda a, x, y: x @ (a @ y), "x @ (a @ y)"),
    "cplx_abs": (lambda s: [r(s["N"])], lambda z: z.view(-1, 2).norm(dim=1), "z.view(-1, 2).norm(dim=1)"),
    "wrap_blur": (
        lambda s: [r(s["H"], s["W"])],
        lambda img: F.avg_pool2d(F.pad(img[None, None], (1, 1, 1, 1), mode="circular"), 3, stride=1),
        "avg_pool2d(pad(img, 1, mode='circular'), 3, stride=1)",
    ),
    "box27": (
        lambda s: [r(s["Z"], s["Y"], s["X"])],
        lambda v: F.avg_pool3d(F.pad(v[None, None], (1,) * 6, mode="replicate"), 3, stride=1),
        "avg_pool3d(pad(v, 1, mode='replicate'), 3, stride=1)",
    ),
    "sepblur": (
        lambda s: [r(s["H"], s["W"]), binomial5()],
        lambda img, k: F.conv2d(
            F.pad(F.conv2d(F.pad(img[None, None], (2, 2, 0, 0), mode="replicate"), k.view(1, 1, 1, 5)), (0, 0, 2, 2), mode="replicate"),
            k.view(1, 1, 5, 1),
        ),
        "conv2d(pad(conv2d(pad(img), k row)), k column), replicate pads",
    ),
    "posfrac": (lambda s: [1.0 / s["N"], r(s["N"])], lambda inv, x: (x > 0).float().mean(), "(x > 0).float().mean()"),
    "diff_rows": (lambda s: [r(s["M"], s["N"])], lambda a: torch.diff(a, dim=1), "diff(a, dim=1)"),
    # The holdout suite's seventeenth batch.
    "rowscale_add": (
        lambda s: [r(s["M"], s["N"]), r(s["M"]), r(s["M"], s["N"])],
        lambda a, v, b: torch.addcmul(b, a, v[:, None]),
        "addcmul(b, a, s[:, None])",
    ),
    "nn_dist": (
        lambda s: [r(s["N"]), r(s["M"])],
        lambda q, ref: ((q[:, None] - ref[None, :]) ** 2).sum(dim=1),
        "((q[:, None] - r[None, :]) ** 2).sum(dim=1)",
    ),
    "wide9": (
        lambda s: [r(s["N"]), wide9_weights()],
        lambda x, w: F.conv1d(F.pad(x[None, None], (4, 4), mode="reflect"), w)[0, 0],
        "conv1d(pad(x, 4, mode='reflect'), w)",
    ),
    "bce_sum": (
        lambda s: [r(s["N"]), r(s["N"])],
        lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="sum"),
        "binary_cross_entropy_with_logits(x, y, reduction='sum')",
    ),
    "softmax3d": (lambda s: [r(s["B"], s["H"], s["K"])], lambda a: torch.softmax(a, dim=-1), "softmax(a, dim=-1)"),
    "avgpool2d": (lambda s: [r(s["H"], s["W"])], lambda img: F.avg_pool2d(img[None, None], 2), "avg_pool2d(img, 2)"),
    "xcorr31": (lambda s: [r(s["N"]), r(31)], lambda x, w: F.conv1d(x[None, None], w[None, None])[0, 0], "conv1d(x, w)"),
    "bmm_small": (
        lambda s: [r(s["B"], s["M"], s["K"]), r(s["B"], s["K"], s["N"])],
        torch.bmm,
        "bmm(a, b)",
    ),
    # The holdout suite's eighteenth batch.
    "col_dot": (lambda s: [r(s["M"], s["N"]), r(s["M"], s["N"])], lambda a, b: (a * b).sum(dim=0), "(a * b).sum(dim=0)"),
    "skinny_mm": (lambda s: [r(s["M"], s["K"]), r(s["K"], s["N"])], torch.mm, "mm(a, b)"),
    "absdiff2d": (lambda s: [r(s["H"], s["W"]), r(s["H"], s["W"])], lambda a, b: (a - b).abs().sum(), "(a - b).abs().sum()"),
    "permute3d": (
        lambda s: [r(s["A"], s["B"], s["C"])],
        lambda t: t.transpose(0, 1).contiguous(),
        "t.transpose(0, 1).contiguous()",
    ),
    "vblur3": (
        lambda s: [r(s["H"], s["W"]), vblur_weights()],
        lambda img, k: F.conv2d(F.pad(img[None, None], (0, 0, 1, 1), mode="replicate"), k),
        "conv2d(pad(img, (0, 0, 1, 1), mode='replicate'), k)",
    ),
    "maxfilt3": (
        lambda s: [r(s["N"])],
        lambda x: F.max_pool1d(F.pad(x[None, None], (1, 1), mode="replicate"), 3, stride=1)[0, 0],
        "max_pool1d(pad(x, 1, mode='replicate'), 3, stride=1)",
    ),
    "rowsum3d": (lambda s: [r(s["A"], s["B"], s["C"])], lambda t: t.sum(dim=2), "t.sum(dim=2)"),
    "mean_hw": (
        lambda s: [1.0 / (s["H"] * s["W"]), r(s["B"], s["C"], s["H"], s["W"])],
        lambda inv, t: t.mean(dim=(2, 3)),
        "t.mean(dim=(2, 3))",
    ),
}


def vblur_weights():
    """The vertical 3-tap filter of `vblur3`."""
    return torch.tensor([0.25, 0.5, 0.25], device=DEV).view(1, 1, 3, 1)


def wide9_weights():
    """The symmetric 9-tap filter of `wide9`."""
    w = torch.tensor([0.02, 0.08, 0.12, 0.18, 0.2, 0.18, 0.12, 0.08, 0.02], device=DEV)
    return w[None, None]


def binomial5():
    """The 5-tap binomial filter (1 4 6 4 1) / 16."""
    return torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0], device=DEV) / 16.0


def smooth_weights():
    """Half the centre and an eighth of each of its four neighbours."""
    w = torch.zeros(1, 1, 3, 3, device=DEV)
    w[0, 0, 1, 1] = 0.5
    for y, x in [(0, 1), (1, 0), (1, 2), (2, 1)]:
        w[0, 0, y, x] = 0.125
    return w


def sobel_weights():
    """The horizontal Sobel kernel (right minus left, the middle row doubled)."""
    w = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]], device=DEV)
    return w[None, None]


def grad_weights():
    """Central differences along x and along y, as two output channels."""
    w = torch.zeros(2, 1, 3, 3, device=DEV)
    w[0, 0, 1, 0], w[0, 0, 1, 2] = -1.0, 1.0
    w[1, 0, 0, 1], w[1, 0, 2, 1] = -1.0, 1.0
    return w


def heat_weights():
    w = torch.zeros(3, 3, 3, device=DEV)
    w[1, 1, 1] = 0.4
    for z, y, x in [(0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2)]:
        w[z, y, x] = 0.1
    return w[None, None]


def median(ts):
    ts = sorted(ts)
    n = len(ts)
    return ts[n // 2] if n % 2 else (ts[n // 2 - 1] + ts[n // 2]) / 2


def time_one(f, args, runs, warmup):
    with torch.no_grad():
        for _ in range(warmup):
            f(*args)
        times = []
        for _ in range(runs):
            if DEV == "cuda":
                torch.cuda.synchronize()
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                f(*args)
                b.record()
                torch.cuda.synchronize()
                times.append(a.elapsed_time(b))
            else:
                t = time.perf_counter()
                f(*args)
                times.append((time.perf_counter() - t) * 1e3)
    return median(times)


def main(argv):
    runs, warmup = 20, 2
    if "--runs" in argv:
        runs = int(argv[argv.index("--runs") + 1])
    if "--warmup" in argv:
        warmup = int(argv[argv.index("--warmup") + 1])
    timing = "cuda-events" if DEV == "cuda" else "host"
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        name = parts[0]
        try:
            sizes = dict((k, int(v)) for k, v in (p.split("=", 1) for p in parts[1:]))
            make, f, text = PROGRAMS[name]
            args = make(sizes)
            ms = time_one(f, args, runs, warmup)
            print(f"{name},{ms:.6f},{timing},{text}", flush=True)
            del args
            if DEV == "cuda":
                torch.cuda.empty_cache()
        except KeyError:
            print(f"{name},,error,no PyTorch version of this program", flush=True)
        except Exception as e:  # one program's failure loses none of the others
            msg = str(e).splitlines()[0].replace(",", ";") if str(e) else type(e).__name__
            print(f"{name},,error,{msg}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
