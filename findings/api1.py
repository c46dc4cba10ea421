"""Tensor/linalg additions vs PyTorch (float64; some float32): values, indices, grads."""
import numpy as np
import torch as T
import symgrad as S
T.set_default_dtype(T.float64)
rng = np.random.default_rng(5)
bad = 0
def both(tag, fn, arrays, grad=True, tol=1e-9, dtype=None):
    global bad
    res = []
    for L in (S, T):
        dt = getattr(L, dtype) if dtype else None
        xs = [L.tensor(a, dtype=dt, requires_grad=grad and np.asarray(a).dtype.kind == "f") for a in arrays]
        try:
            y = fn(L, *xs)
            ys = y if isinstance(y, (tuple, list)) else (y,)
            vals = [np.asarray(v.detach().numpy()) if hasattr(v, "detach") else np.asarray(v) for v in ys]
            gs = []
            if grad:
                fl = [v for v in ys if hasattr(v, "requires_grad") and v.requires_grad]
                if fl:
                    s = sum((v * L.tensor(np.cos(np.arange(v.numel())).reshape(tuple(v.shape)), dtype=v.dtype)).sum() for v in fl)
                    gs = [g.numpy() if g is not None else None for g in L.autograd.grad(s, [x for x in xs if x.requires_grad], allow_unused=True)]
            res.append((vals, gs))
        except Exception as e:
            res.append(type(e).__name__ + ": " + str(e)[:150])
    a, b = res
    if isinstance(a, str) or isinstance(b, str):
        if isinstance(a, str) != isinstance(b, str):
            bad += 1; print("EXC", tag, "\n  sym:", a if isinstance(a, str) else "ok", "\n  tor:", b if isinstance(b, str) else "ok")
        return
    def close(u, v):
        if u is None or v is None:
            return u is None and v is None
        return u.shape == v.shape and np.allclose(u.astype(float), v.astype(float), rtol=tol, atol=tol, equal_nan=True)
    okv = all(close(u, v) and u.dtype == v.dtype for u, v in zip(a[0], b[0]))
    okg = all(close(u, v) for u, v in zip(a[1], b[1]))
    if not (okv and okg):
        bad += 1
        print("FAIL", tag, "values" if not okv else "", "grads" if not okg else "")
        for u, v in zip(a[0] if not okv else a[1], b[0] if not okv else b[1]):
            print("   sym", None if u is None else (u.dtype, u.ravel()[:6]), "\n   tor", None if v is None else (v.dtype, v.ravel()[:6]))

x = rng.standard_normal((4, 6)); xn = x.copy(); xn[1, 2] = np.nan; xn[3, :] = np.nan
xt = np.round(x * 2) / 2  # ties
both("median all", lambda L, a: a.median(), [x])
both("median even all", lambda L, a: a[:, :4].median(), [x])
both("median dim", lambda L, a: tuple(a.median(1)), [xt])
both("median dim keep", lambda L, a: tuple(a.median(0, keepdim=True)), [xt])
both("median nan", lambda L, a: a.median(), [xn])
both("median nan dim", lambda L, a: tuple(a.median(1)), [xn])
both("nanmedian dim", lambda L, a: tuple(a.nanmedian(1)), [xn])
both("nanmedian all", lambda L, a: a.nanmedian(), [xn])
both("nanmean", lambda L, a: a.nanmean(1), [xn])
both("nanmean all", lambda L, a: L.nanmean(a), [xn])
both("nanmean keep", lambda L, a: a.nanmean((0, 1), keepdim=True), [xn])
special = np.array([np.nan, np.inf, -np.inf, 1.0, -2.0])
for dt in ("float64", "float32"):
    both("nan_to_num " + dt, lambda L, a: a.nan_to_num(), [special], dtype=dt)
    both("nan_to_num args " + dt, lambda L, a: L.nan_to_num(a, nan=0.5, posinf=1e300, neginf=-7), [special], dtype=dt)
both("fmax", lambda L, a, b: L.fmax(a, b), [np.array([np.nan, 1, 2, np.nan, 3.0]), np.array([1, np.nan, 2, np.nan, -1.0])])
both("fmin", lambda L, a, b: L.fmin(a, b), [np.array([np.nan, 1, 2, np.nan, 3.0]), np.array([1, np.nan, 2, np.nan, -1.0])])
both("fmax bcast", lambda L, a, b: L.fmax(a, b), [x, x[0]])
both("argsort stable", lambda L, a: a.argsort(dim=1, stable=True), [xt], grad=False)
both("argsort stable desc", lambda L, a: a.argsort(dim=0, descending=True, stable=True), [xt], grad=False)
both("sort stable desc", lambda L, a: tuple(a.sort(dim=1, descending=True, stable=True)), [xt])
both("argsort nan", lambda L, a: L.argsort(a, 1, stable=True), [xn], grad=False)
both("argsort nan desc", lambda L, a: L.argsort(a, 1, descending=True, stable=True), [xn], grad=False)
both("index_fill", lambda L, a: a.index_fill(1, L.tensor([0, 4, 4]), -1.5), [x])
both("index_fill neg", lambda L, a: a.index_fill(-2, L.tensor([3]), 2.0), [x])
both("index_fill tensor val", lambda L, a, v: a.index_fill(1, L.tensor([1]), v), [x, np.array(3.0)])
a3 = rng.standard_normal((5, 3)); b3 = rng.standard_normal((5, 3))
both("cross", lambda L, a, b: L.cross(a, b, dim=1), [a3, b3])
both("linalg.cross", lambda L, a, b: L.linalg.cross(a, b[:1]), [a3, b3])
both("cross default dim", lambda L, a, b: L.cross(a.T.reshape(3, 5), b.T.reshape(3, 5)), [a3, b3])
# linalg
A = rng.standard_normal((4, 3)); Sq = rng.standard_normal((4, 4)); Sq2 = Sq @ Sq.T + 4 * np.eye(4)
R = rng.standard_normal((4, 2)) @ rng.standard_normal((2, 3))  # rank 2
both("pinv", lambda L, a: L.linalg.pinv(a), [A])
both("pinv herm", lambda L, a: L.linalg.pinv(a, hermitian=True), [Sq2])
both("pinv rank def", lambda L, a: L.linalg.pinv(a), [R], tol=1e-7)
both("pinv rtol", lambda L, a: L.linalg.pinv(a, rtol=0.3), [A])
both("pinv atol", lambda L, a: L.linalg.pinv(a, atol=1.0), [A])
both("lstsq", lambda L, a, b: L.linalg.lstsq(a, b).solution, [A, rng.standard_normal((4, 2))])
both("lstsq full", lambda L, a, b: tuple(v for v in L.linalg.lstsq(a, b, driver="gelsd")), [A, rng.standard_normal((4, 2))], grad=False)
both("lstsq rank-def gelsd", lambda L, a, b: L.linalg.lstsq(a, b, driver="gelsd").solution, [R, rng.standard_normal((4, 2))], grad=False, tol=1e-7)
both("lstsq batched vec", lambda L, a, b: L.linalg.lstsq(a, b).solution, [rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 4, 1))])
both("matrix_rank", lambda L, a: L.linalg.matrix_rank(a), [R], grad=False)
both("matrix_rank tol", lambda L, a: L.linalg.matrix_rank(a, atol=1.0, rtol=0.0), [A], grad=False)
both("matrix_rank herm", lambda L, a: L.linalg.matrix_rank(a, hermitian=True), [Sq2], grad=False)
for p in (None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2):
    both(f"cond {p}", lambda L, a: L.linalg.cond(a, p), [Sq])
both("cond rect", lambda L, a: L.linalg.cond(a), [A])
both("multi_dot", lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [rng.standard_normal(4), Sq, rng.standard_normal((4, 2))])
both("multi_dot vecs", lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [rng.standard_normal(4), Sq, rng.standard_normal(4)])
both("matrix_exp", lambda L, a: L.linalg.matrix_exp(a), [Sq])
both("matrix_exp big", lambda L, a: L.linalg.matrix_exp(a), [Sq * 5])
both("matrix_exp batch", lambda L, a: L.matrix_exp(a), [rng.standard_normal((2, 3, 3))])
U = np.triu(Sq) + 3 * np.eye(4)
for upper in (True, False):
    for left in (True, False):
        for unit in (False, True):
            M = U if upper else U.T
            B = rng.standard_normal((4, 3)) if left else rng.standard_normal((3, 4))
            both(f"solve_tri up{upper} left{left} unit{unit}", lambda L, a, b: L.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit), [M + np.tril(np.ones((4, 4)), -1) * upper, B])
both("inv_ex", lambda L, a: tuple(L.linalg.inv_ex(a)), [Sq])
both("inv_ex singular", lambda L, a: L.linalg.inv_ex(a).info, [np.ones((3, 3))], grad=False)
both("cholesky_ex", lambda L, a: tuple(L.linalg.cholesky_ex(a)), [Sq2])
both("cholesky_ex notpd", lambda L, a: L.linalg.cholesky_ex(a).info, [Sq], grad=False)
both("cholesky_ex upper", lambda L, a: L.linalg.cholesky_ex(a, upper=True).L, [Sq2])
both("vecdot", lambda L, a, b: L.linalg.vecdot(a, b, dim=0), [a3, b3])
# F.pad negative, interpolate area, maxpool NaN
img = rng.standard_normal((2, 3, 7, 9))
for pads in ((-1, 2, 0, -3), (-2, -2), (1, -1, -2, 2)):
    for mode in ("constant", "reflect", "replicate", "circular"):
        both(f"pad {pads} {mode}", lambda L, a: L.nn.functional.pad(a, pads, mode=mode), [img])
for size in ((3, 4), (7, 9), (5, 2), (14, 10), (1, 1)):
    both(f"area {size}", lambda L, a: L.nn.functional.interpolate(a, size=size, mode="area"), [img])
both("area 1d", lambda L, a: L.nn.functional.interpolate(a[0], size=4, mode="area"), [img])
both("area 3d", lambda L, a: L.nn.functional.interpolate(a[None], size=(1, 5, 4), mode="area"), [img])
both("area sf", lambda L, a: L.nn.functional.interpolate(a, scale_factor=0.6, mode="area"), [img])
imn = img.copy(); imn[0, 0, 1, 1] = np.nan; imn[0, 0, 1, 2] = np.nan; imn[1, 2, 3, 3] = np.inf
both("maxpool nan idx", lambda L, a: tuple(L.nn.functional.max_pool2d(a, 3, 2, padding=1, return_indices=True)), [imn])
both("maxpool1d nan", lambda L, a: tuple(L.nn.functional.max_pool1d(a[0], 2, return_indices=True)), [imn[0, :, 1]])
both("adaptive maxpool nan", lambda L, a: tuple(L.nn.functional.adaptive_max_pool2d(a, (2, 3), return_indices=True)), [imn])
print("bad", bad)
