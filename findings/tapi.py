import numpy as np, torch, symgrad as sgt, warnings, traceback
import symgrad.nn.functional as SF, torch.nn.functional as TF
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
def both(fn, *arrs, grad=True, name=""):
    outs = []
    for lib in (torch, sgt):
        ts = [lib.tensor(a.copy(), requires_grad=grad and a.dtype.kind == "f") for a in arrs]
        try:
            y = fn(lib, *ts)
            ys = y if isinstance(y, (tuple, list)) else (y,)
            vals = [np.asarray(v.detach().numpy()) if hasattr(v, "detach") else np.asarray(v) for v in ys]
            gs = []
            if grad:
                loss = sum((v.double() * lib.tensor(np.linspace(0.3, 1.7, v.numel()).reshape(tuple(v.shape)))).sum() for v in ys if hasattr(v, "dtype") and v.dtype.is_floating_point and v.requires_grad)
                if hasattr(loss, "backward"):
                    loss.backward()
                gs = [None if t.grad is None else t.grad.numpy().copy() for t in ts]
            outs.append((vals, gs))
        except Exception as e:
            outs.append(("ERR", f"{type(e).__name__}: {str(e)[:120]}"))
    (t, s) = outs
    if t[0] == "ERR" or s[0] == "ERR":
        if t[0] != s[0] or True: print(name, "torch:", t[1] if t[0]=="ERR" else "ok", "| sg:", s[1] if s[0]=="ERR" else "ok")
        return
    for a, b in zip(t[0], s[0]):
        if a.dtype != b.dtype or a.shape != b.shape or not np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True):
            print(name, "VALUE", a.dtype, b.dtype, a.shape, b.shape, (np.max(np.abs(a.astype(float)-b.astype(float))) if a.shape==b.shape else "")); break
    for a, b in zip(t[1], s[1]):
        if (a is None) != (b is None) or (a is not None and not np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)):
            print(name, "GRAD", a if a is None else a.ravel()[:4], b if b is None else b.ravel()[:4]); break
A = rng.standard_normal((3, 4, 5)); B = rng.standard_normal((4, 5, 2)); M = rng.standard_normal((4, 4))
cases = {
 "tensordot2": (lambda L, a, b: L.tensordot(a, b, dims=2), A, B),
 "tensordot_list": (lambda L, a, b: L.tensordot(a, b, dims=([1, 2], [0, 1])), A, B),
 "tensordot0": (lambda L, a, b: L.tensordot(a[0, 0], b[0, 0], dims=0), A, B),
 "block_diag": (lambda L, a, b: L.block_diag(a[0], b[0], a[0, 0]), A, B),
 "block_diag_int": (lambda L, a, b: L.block_diag(a[0], b), A, np.arange(4).reshape(2,2)),
 "as_strided": (lambda L, a: L.as_strided(a, (3, 3), (2, 1), 1), rng.standard_normal(20)),
 "as_strided_overlap_grad": (lambda L, a: L.as_strided(a, (4, 4), (1, 1)) * 2, rng.standard_normal(20)),
 "as_strided_of_view": (lambda L, a: L.as_strided(a[2:], (3, 2), (3, 1)) , rng.standard_normal(20)),
 "as_strided_of_tview": (lambda L, a: (a.t() * 1).as_strided((2, 2), (1, 4)) , rng.standard_normal((4, 5))),
 "lp_pool1d": (lambda L, a: L.nn.functional.lp_pool1d(a, 2, 3, 2), rng.standard_normal((2, 3, 11))),
 "lp_pool2d": (lambda L, a: L.nn.functional.lp_pool2d(a, 3.0, (2, 3)), rng.standard_normal((2, 3, 8, 9))),
 "lp_pool1d_p1": (lambda L, a: L.nn.functional.lp_pool1d(a, 1, 2), rng.standard_normal((2, 3, 8))),
 "lp_pool_ceil": (lambda L, a: L.nn.functional.lp_pool1d(a, 2, 3, 2, ceil_mode=True), rng.standard_normal((2, 3, 10))),
 "igamma": (lambda L, a, x: L.igamma(a, x), rng.random(6) * 3 + 0.1, rng.random(6) * 4),
 "igammac": (lambda L, a, x: L.igammac(a, x), rng.random(6) * 3 + 0.1, rng.random(6) * 4),
 "lu": (lambda L, m: L.linalg.lu(m), M),
 "lu_rect": (lambda L, m: L.linalg.lu(m[:3]), M),
 "lu_factor": (lambda L, m: L.linalg.lu_factor(m)[0], M),
 "inv_ex": (lambda L, m: L.linalg.inv_ex(m), np.stack([M, np.zeros((4, 4))])),
 "cholesky_ex": (lambda L, m: L.linalg.cholesky_ex(m), np.stack([M @ M.T, -np.eye(4)])),
 "nanmean": (lambda L, a: L.nanmean(a, dim=1), np.array([[1., np.nan, 3.], [np.nan, np.nan, np.nan]])),
 "nanmean_all": (lambda L, a: L.nanmean(a), np.array([[1., np.nan, 3.], [np.nan, np.nan, np.nan]])),
 "nansum": (lambda L, a: L.nansum(a, dim=1), np.array([[1., np.nan, 3.], [np.nan, np.nan, np.nan]])),
 "special.xlog1py": (lambda L, a, b: L.special.xlog1py(a, b), np.array([0., 1., 2., 0.]), np.array([-1., 0.5, 3., np.nan])),
 "special.xlogy": (lambda L, a, b: L.special.xlogy(a, b), np.array([0., 1., 2., 0.]), np.array([0., 0.5, 3., np.nan])),
 "special.entr": (lambda L, a: L.special.entr(a), np.array([0., 1., 2., -1., 0.5])),
 "special.erfcx": (lambda L, a: L.special.erfcx(a), np.array([-3., 0., 2., 30.])),
 "special.log_ndtr": (lambda L, a: L.special.log_ndtr(a), np.array([-40., -3., 0., 2., 30.])),
 "special.ndtri": (lambda L, a: L.special.ndtri(a), np.array([0.01, 0.5, 0.99])),
 "special.i0e": (lambda L, a: L.special.i0e(a), np.array([-3., 0., 2., 30.])),
 "special.i1e": (lambda L, a: L.special.i1e(a), np.array([-3., 0., 2., 30.])),
 "special.i1": (lambda L, a: L.special.i1(a), np.array([-3., 0., 2., 30.])),
 "special.sinc": (lambda L, a: L.special.sinc(a), np.array([-3., 0., 0.5, 1e-9])),
 "special.logit": (lambda L, a: L.special.logit(a, eps=0.1), np.array([0.0, 0.05, 0.5, 1.])),
 "special.polygamma": (lambda L, a: L.special.polygamma(2, a), np.array([-2.5, 0.3, 3.])),
 "special.multigammaln": (lambda L, a: L.special.multigammaln(a, 3), np.array([2.5, 3.3])),
 "special.zeta": (lambda L, a, b: L.special.zeta(a, b), np.array([2., 3.5]), np.array([1., 2.])),
 "special.log_softmax": (lambda L, a: L.special.log_softmax(a, 0), np.array([1., 2., 3.])),
 "special.round": (lambda L, a: L.special.round(a), np.array([0.5, 1.5, 2.5])),
 "special.expit": (lambda L, a: L.special.expit(a), np.array([0.5, -100, 2.5])),
 "special.bessel_j0": (lambda L, a: L.special.bessel_j0(a), np.array([0.5, -10, 2.5])),
 "special.gammaln": (lambda L, a: L.special.gammaln(a), np.array([0.5, -2.5, 2.5])),
 "special.psi": (lambda L, a: L.special.psi(a), np.array([0.5, -2.5, 2.5])),
 "special.logsumexp": (lambda L, a: L.special.logsumexp(a, 0), np.array([0.5, -2.5, 2.5])),
 "special.softmax": (lambda L, a: L.special.softmax(a, 0), np.array([0.5, -2.5, 2.5])),
 "special.gammainc": (lambda L, a, x: L.special.gammainc(a, x), np.array([0.5, 2.5]), np.array([1., 3.])),
 "unsqueeze_": (lambda L, a: (a * 1).unsqueeze_(1) * 2, rng.standard_normal((3, 2))),
 "t_": (lambda L, a: (a * 1).t_() * L.tensor([1., 2., 3.]), rng.standard_normal((3, 2))),
 "transpose_": (lambda L, a: (a * 1).transpose_(0, 2).sum(0), rng.standard_normal((3, 2, 4))),
 "squeeze_": (lambda L, a: (a * 1).squeeze_(), rng.standard_normal((3, 1, 4))),
 "swapdims_": (lambda L, a: (a * 1).swapdims_(0, 1)[0], rng.standard_normal((3, 2, 4))),
 "logspace": (lambda L: L.logspace(0, 2, 5), ),
 "logspace_base": (lambda L: L.logspace(-1, 2, 7, base=2), ),
 "vander": (lambda L, a: L.linalg.vander(a), np.array([1., 2., 3.])),
 "vander_N": (lambda L, a: L.linalg.vander(a, N=5), np.array([1., 2., -3.])),
 "pdist": (lambda L, a: L.nn.functional.pdist(a), rng.standard_normal((5, 3))),
 "pdist_p1": (lambda L, a: L.nn.functional.pdist(a, p=1), rng.standard_normal((5, 3))),
 "pdist_dup": (lambda L, a: L.nn.functional.pdist(a), np.array([[1., 2.], [1., 2.], [0., 1.]])),
 "lrn": (lambda L, a: L.nn.functional.local_response_norm(a, 3), rng.standard_normal((2, 5, 4))),
 "channel_shuffle": (lambda L, a: L.nn.functional.channel_shuffle(a, 2), rng.standard_normal((2, 4, 3))),
 "mvlgamma_int": (lambda L, a: L.mvlgamma(a, 2), np.array([3, 4])),
 "pow_int_neg": (lambda L, a: a ** 2, np.array([3, -4])),
 "pow_bool": (lambda L, a: a ** 2, np.array([True, False])),
 "pow_bool_float": (lambda L, a: a ** 2.5, np.array([True, False])),
 "pow_int_float_t": (lambda L, a, b: a ** b, np.array([3, 4]), np.array([0.5, 2.])),
 "intdiv": (lambda L, a: a / 2, np.array([3, -4])),
 "int_sum": (lambda L, a: a.sum(), np.array([3, -4], dtype=np.int32)),
 "bool_sum": (lambda L, a: a.sum(), np.array([True, True])),
 "int8_cumsum": (lambda L, a: a.cumsum(0), np.array([100, 100], dtype=np.int8)),
 "uint8_prod": (lambda L, a: a.prod(), np.array([100, 100], dtype=np.uint8)),
 "int_mean_err": (lambda L, a: a.mean(), np.array([3, -4])),
 "bool_add": (lambda L, a: a + a, np.array([True, False])),
 "bool_mul_int": (lambda L, a: a * 3, np.array([True, False])),
 "int_true_div_t": (lambda L, a: L.true_divide(a, a), np.array([3, 4], dtype=np.int16)),
 "int16_float": (lambda L, a: a * 2.5, np.array([3, 4], dtype=np.int16)),
 "f32_scalar_f64_0d": (lambda L, a: a * L.tensor(2.5, dtype=L.float64), np.array([3, 4], dtype=np.float32)),
 "int_0d_float": (lambda L, a: a + L.tensor(1.5), np.array([3, 4], dtype=np.int32)),
 "block_diag_empty": (lambda L, a: L.block_diag(a, L.zeros(0, 2)), rng.standard_normal((2, 2))),
}
for name, (fn, *arrs) in cases.items():
    try:
        both(fn, *arrs, name=name)
    except Exception as e:
        print(name, "HARNESS", type(e).__name__, e)
