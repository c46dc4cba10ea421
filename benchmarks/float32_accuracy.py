"""The ulp errors of symgrad's float32 math (symgrad/backend/vecmath32.py), measured.

Method: a stratified sample of the float32 line: the 2**32 bit patterns in strata of
``STRIDE`` consecutive patterns, one uniformly random pattern from each (about 1.07e7
points at the default stride of 400: every binade, subnormals, both signs), plus every
special and tail point (0, -0, inf, nan, the least subnormal and normal, the overflow,
underflow and rounds-to-1 thresholds and their neighbours). The oracle is the float64
function (numpy's exp, log, tanh; 1/(1 + exp(-x)) and logaddexp(0, x) for sigmoid and
softplus), whose own error, below 2**-51 relative, is 2**-27 of a float32 ulp or less;
the error is |got - f64| in ulps of the float32 nearest f64 (2**-149 below the normal
range). mpmath at 50 digits then recomputes the error at the 200 worst points and at
20,000 random ones: the report gives the largest difference between the two oracles.

Run:  python benchmarks/float32_accuracy.py [--stride 400] [--functions exp,log,...]
"""

from __future__ import annotations

import argparse
import math
import time

import mpmath
import numba
import numpy as np

from symgrad.backend import vecmath32 as v32

ORACLES = {
    "exp": (np.exp, mpmath.exp),
    "log": (np.log, lambda x: mpmath.log(x) if x > 0 else (mpmath.ninf if x == 0 else mpmath.nan)),
    "tanh": (np.tanh, mpmath.tanh),
    "sin": (np.sin, mpmath.sin),
    "cos": (np.cos, mpmath.cos),
    "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), lambda x: 1 / (1 + mpmath.exp(-x))),
    "softplus": (lambda x: np.logaddexp(0.0, x), lambda x: mpmath.log1p(mpmath.exp(x))),
}


def _loop(fn):
    @numba.njit(error_model="numpy")
    def run(x):
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = fn(x[i])
        return out
    return run


KERNELS = {"exp": _loop(v32.exp32), "log": _loop(v32.log32), "tanh": _loop(v32.tanh32),
           "sin": _loop(v32.sin32), "cos": _loop(v32.cos32),
           "sigmoid": _loop(v32.sigmoid32), "softplus": _loop(v32.softplus32)}

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45,
                    1.1754943508222875e-38, -1.1754943508222875e-38, 88.72283, 88.72284,
                    89.0, -87.33654, -103.27893, -103.97208, -104.0, -110.0, 9.0, 9.01,
                    9.1, -9.1, 1e-30, 1e-20, 17.0, -17.0, -24.0, 24.0, 0.34657359,
                    3.4028235e38, -3.4028235e38, 0.5, 2.0, 1e-4], dtype=np.float32)


def sample(stride: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    starts = np.arange(0, 2**32, stride, dtype=np.uint64)
    bits = (starts + rng.integers(0, stride, starts.size, dtype=np.uint64)) % 2**32
    x = bits.astype(np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        near = np.concatenate([np.nextafter(SPECIAL, np.float32(np.inf)),
                               np.nextafter(SPECIAL, np.float32(-np.inf))])
    return np.concatenate([SPECIAL, near, x])


def ulp32(ref: np.ndarray) -> np.ndarray:
    r = np.abs(ref.astype(np.float32)).astype(np.float64)
    r = np.where(np.isinf(r), np.float64(np.finfo(np.float32).max), r)
    e = np.frexp(np.maximum(r, 2.0 ** -126))[1]
    return np.ldexp(1.0, e - 24)


def errors(name: str, x: np.ndarray, got: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        ref = ORACLES[name][0](x.astype(np.float64))
    ref32 = ref.astype(np.float32)
    err = np.abs(got.astype(np.float64) - ref) / ulp32(ref)
    special = ~np.isfinite(ref32) | ~np.isfinite(got)
    same = (got == ref32) | (np.isnan(got) & np.isnan(ref32))
    err[special] = np.where(same[special], 0.0, np.inf)
    return err


def mp_error(name: str, xi: float, gi: float) -> float:
    with mpmath.workdps(50):
        ref = ORACLES[name][1](mpmath.mpf(float(xi)))
        if mpmath.isnan(ref) or mpmath.isinf(ref):
            return 0.0 if (math.isnan(gi) if mpmath.isnan(ref) else gi == float(ref)) else math.inf
        near = float(np.float32(float(ref)))
        if math.isinf(near) or math.isnan(gi) or math.isinf(gi):
            return 0.0 if gi == near else math.inf
        e = math.frexp(max(abs(near), 2.0 ** -126))[1]
        return float(abs(mpmath.mpf(gi) - ref) / mpmath.ldexp(1, e - 24))


def main() -> None:
    np.seterr(all="ignore")  # the tails overflow on purpose
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stride", type=int, default=400)
    parser.add_argument("--functions", default=",".join(ORACLES))
    opts = parser.parse_args()
    x = x_all = sample(opts.stride)
    print(f"{x.size} points (stride {opts.stride}); float64 oracle, mpmath at 50 digits "
          f"on the 200 worst and 20000 random points")
    print("| function | max ulp (float64 oracle) | at x | max ulp (mpmath, checked points) "
          "| oracles differ by | points |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    for name in opts.functions.split(","):
        start = time.perf_counter()
        if name in ("sin", "cos"):  # beyond TRIG_LIMIT32 the loop runs again with libm
            x = x_all[np.abs(x_all) < v32.TRIG_LIMIT32]
        else:
            x = x_all
        got = KERNELS[name](x)
        err = errors(name, x, got)
        worst = np.argsort(err)[-200:]
        check = np.concatenate([worst, rng.integers(0, x.size, 20000)])
        mp = np.array([mp_error(name, float(x[k]), float(got[k])) for k in check])
        finite = np.isfinite(mp) & np.isfinite(err[check])
        differ = float(np.max(np.abs(mp[finite] - err[check][finite]), initial=0.0))
        k = int(np.argmax(err))
        print(f"| {name} | {err[k]:.3f} | {x[k]!r} | {mp.max():.3f} | {differ:.1e} | {x.size} |"
              f"  ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
