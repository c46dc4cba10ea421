import numpy as np
from _h import compare, main
rng = np.random.default_rng(0)
X4 = rng.standard_normal((2, 3, 5, 7))
X3 = rng.standard_normal((2, 3, 6))
X5 = rng.standard_normal((1, 2, 3, 4, 5))
def interp(X, **kw):
    def f(L, dt):
        x = L.tensor(X, dtype=dt, requires_grad=True)
        y = L.nn.functional.interpolate(x, **kw)
        (y * y.cos()).sum().backward(); return [y, x.grad]
    return f
def pad(X, p, mode, value=0.0):
    def f(L, dt):
        x = L.tensor(X, dtype=dt, requires_grad=True)
        y = L.nn.functional.pad(x, p, mode=mode, value=value) if mode == "constant" else L.nn.functional.pad(x, p, mode=mode)
        (y * y.sin()).sum().backward(); return [y, x.grad]
    return f
def unfold(**kw):
    def f(L, dt):
        x = L.tensor(X4, dtype=dt, requires_grad=True)
        y = L.nn.functional.unfold(x, **kw)
        z = L.nn.functional.fold(y * 2 + 1, (5, 7), **kw)
        (z * z.sin()).sum().backward(); return [y, z, x.grad]
    return f
cases = []
for dt in ["float64", "float32"]:
    for mode in ["nearest", "nearest-exact", "bilinear", "bicubic", "area"]:
        for kw in [dict(size=(8, 4)), dict(scale_factor=1.7), dict(scale_factor=(0.6, 2.3), recompute_scale_factor=True), dict(scale_factor=(0.6, 2.3))]:
            cases.append((f"interp2 {mode} {kw}", interp(X4, mode=mode, **kw), dt))
            if mode in ("bilinear", "bicubic"):
                cases.append((f"interp2 {mode} ac {kw}", interp(X4, mode=mode, align_corners=True, **kw), dt))
    for mode in ["nearest", "linear", "area", "nearest-exact"]:
        for kw in [dict(size=11), dict(scale_factor=0.45), dict(scale_factor=2.5, recompute_scale_factor=True)]:
            cases.append((f"interp1 {mode} {kw}", interp(X3, mode=mode, **kw), dt))
            if mode == "linear": cases.append((f"interp1 {mode} ac {kw}", interp(X3, mode=mode, align_corners=True, **kw), dt))
    for kw in [dict(size=(5, 3, 7)), dict(scale_factor=(1.5, 0.7, 1.3))]:
        cases.append((f"interp3 trilinear {kw}", interp(X5, mode="trilinear", **kw), dt))
        cases.append((f"interp3 trilinear ac {kw}", interp(X5, mode="trilinear", align_corners=True, **kw), dt))
        cases.append((f"interp3 nearest {kw}", interp(X5, mode="nearest", **kw), dt))
    for mode in ["reflect", "replicate", "circular", "constant"]:
        for p in [(2, 3, 1, 4), (-1, 2, 3, -2), (0, 0, 4, 4), (3, 1)]:
            cases.append((f"pad {mode} {p}", pad(X4, p, mode, 1.5), dt))
        cases.append((f"pad3 {mode}", pad(X5, (1, 2, 2, 1, 1, 2), mode, -2.0), dt))
        cases.append((f"pad1 {mode}", pad(X3, (2, -1), mode), dt))
    cases.append(("pad circ wide", pad(X3, (7, 8), "circular"), dt))
    cases.append(("unfold", unfold(kernel_size=(2, 3), stride=(2, 1), padding=(1, 0), dilation=(1, 2)), dt))
    cases.append(("unfold2", unfold(kernel_size=3, stride=2, padding=1), dt))
main(cases)
