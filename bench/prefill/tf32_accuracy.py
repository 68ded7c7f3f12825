# SPDX-License-Identifier: MIT
"""fp32 attention's error against a float64 reference, flashcl's precisions beside PyTorch's fp32 kernels,
on the same inputs (docs/design/mma.md, tf32-3).

    python tf32_accuracy.py FLASHCL_BINARY [NAME=BUILD_OPTIONS ...]   (options separated by commas)

TF32_DIMS (e.g. "128") takes those head dims only.

Writes random N(0,1) Q, K, V (batch 1, 8 heads, N=4096, d 128 and 64) as .npy files, runs `flashcl run` on them
under each precision (and each VARIANT's FLASHCL_BUILD_OPTIONS, with tf32x3), PyTorch's memory-efficient and
math SDPA in fp32 (TF32 off), and prints one JSON line a run: the largest error of a row relative to the row's
largest |reference| (what flashcl's validator measures), its RMS over the rows, and the mean signed error
in units of the row scale (a bias the truncation of the matrix unit's sums would show)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch


def errors(out, ref):
    """out, ref: (heads, n, d) float64 tensors."""
    scale = ref.abs().amax(dim=-1).clamp_min(1e-30)
    diff = out - ref
    row = diff.abs().amax(dim=-1) / scale
    return {"max_rel_error": row.max().item(), "rms_rel_error": row.square().mean().sqrt().item(),
            "mean_signed": (diff / scale.unsqueeze(-1)).mean().item()}


def main():
    tool = sys.argv[1]
    variants = [(a.split("=", 1)[0], a.split("=", 1)[1].replace(",", " ")) for a in sys.argv[2:]]
    n, heads = 4096, 8
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tmp = tempfile.mkdtemp()
    for d in (int(x) for x in os.environ.get("TF32_DIMS", "128,64").split(",")):
        rng = np.random.default_rng(d)
        qkv = [rng.standard_normal((1, n, heads, d), dtype=np.float32) for _ in range(3)]
        paths = [os.path.join(tmp, f"{x}.npy") for x in "qkv"]
        for p, a in zip(paths, qkv):
            np.save(p, a)
        q, k, v = (torch.from_numpy(a[0]).to(dev).transpose(0, 1).contiguous() for a in qkv)  # (heads, n, d)
        s = torch.matmul(q.double(), k.double().transpose(-1, -2)) / d ** 0.5
        ref = torch.matmul(torch.softmax(s, dim=-1), v.double())
        del s
        runs = [("fp32", "fp32", ""), ("tf32", "tf32", ""), ("tf32x3", "tf32x3", "")]
        runs += [(f"tf32x3 {name}", "tf32x3", opts) for name, opts in variants]
        for name, prec, opts in runs:
            out_path = os.path.join(tmp, "o.npy")
            env = dict(os.environ, FLASHCL_BUILD_OPTIONS=opts) if opts else dict(os.environ)
            r = subprocess.run([tool, "run", "--q", paths[0], "--k", paths[1], "--v", paths[2], "--out", out_path,
                                "--precision", prec, "--device", "NVIDIA", "--validate", "--json"],
                               env=env, capture_output=True, text=True)
            line = {"d": d, "n": n, "run": f"flashcl {name}", "build_options": opts}
            try:
                info = json.loads(r.stdout)
                line.update(kernel=info.get("kernel"), validator=info.get("validation"))
                o = torch.from_numpy(np.load(out_path)[0]).to(dev).transpose(0, 1).double()
                line.update(errors(o, ref))
            except (ValueError, OSError) as e:
                line.update(error=f"{e}: {r.stdout[-300:]} {r.stderr[-300:]}")
            print(json.dumps(line), flush=True)
        for backend, sdp in (("efficient", torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION),
                             ("math", torch.nn.attention.SDPBackend.MATH)):
            with torch.nn.attention.sdpa_kernel(sdp):
                o = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None])[0]
            print(json.dumps({"d": d, "n": n, "run": f"PyTorch {backend} fp32", "torch": torch.__version__,
                              **errors(o.double(), ref)}), flush=True)


if __name__ == "__main__":
    main()
