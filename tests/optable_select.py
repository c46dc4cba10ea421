"""Op table records (tests/optable.py) of the ops a later round of issue 27 added:
median, nanmean, nan_to_num, fmax/fmin, argsort, index_fill, div_(rounding_mode),
cdist and the cross product (torch.*); the losses, distances, modules and linalg
functions of that round are in tests/optable_nn_more.py."""

from __future__ import annotations

from optable import FLOAT, INTS, add

BINARY = (((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)))
NAN, INF = float("nan"), float("inf")


def _with_nans(L, x):
    """``x`` with NaN and infinities in fixed places (a mask enters as data: the gradient
    of the others is compared)."""
    flat = x.reshape(-1)
    n = min(4, flat.shape[0])
    if not x.is_floating_point() or not x.ndim:
        return x
    return L.cat([L.tensor([NAN, INF, -INF, NAN][:n], dtype=x.dtype), flat[n:]]).reshape(x.shape)


add("median", lambda L, x: (x.median(), L.median(x, 1), x.median(dim=0, keepdim=True),
                            L.median(x, -1).indices, x.median(-1).values),
    samples=(((3, 4),), ((4, 5),), ((2, 5, 3),)), dtypes=FLOAT + ("int64", "int32"),
    covers=("Tensor.median", "torch.median"))
def _ties(x):
    """0s and 1s (many ties), with x's gradient."""
    return x - x.detach() + (x.detach() > 0).to(x.dtype)


add("median(ties, NaN)", lambda L, x: (_ties(x).median(1), _ties(x).median(),
                                       _with_nans(L, x).median(1), _with_nans(L, x).median()),
    samples=(((3, 6),), ((4, 7),)), domain="normal3", covers=())
add("median(0-d)", lambda L, x: (x.median(), x.median(0), x.median(-1, keepdim=True)),
    samples=(((),),), covers=())
add("nanmean", lambda L, x: (_with_nans(L, x).nanmean(), L.nanmean(_with_nans(L, x), 1),
                             x.nanmean(dim=(0, 1), keepdim=True), L.nanmean(x)),
    samples=(((3, 4),), ((2, 3, 2),)), covers=("Tensor.nanmean", "torch.nanmean"))
def _nan_where(L, x, mask):
    """x with NaN where ``mask`` (from x's values, detached): added to x, so x's gradient
    reaches the NaN elements (a masked_fill would give them 0)."""
    return x + L.where(mask, NAN, 0.0)


# a row and a column of NaN only (with NaN elsewhere too): value NaN, gradient NaN there
# (PyTorch's (g / 0) * 0); everything NaN
add("nanmean(all-NaN rows)", lambda L, x: (
    L.nanmean(_nan_where(L, x, (L.arange(3) == 0)[:, None] | (x.detach() > 0.6)), 1),
    _nan_where(L, x, (L.arange(4) == 1) | (x.detach() < -0.6)).nanmean(0, keepdim=True)),
    samples=(((3, 4),),), covers=())
add("nanmean(all NaN)", lambda L, x: (_nan_where(L, x, x.detach() == x.detach()).nanmean(),
                                      _nan_where(L, x, x.detach() < 9).nanmean(0)),
    samples=(((3, 4),), ((),)), covers=())
add("nan_to_num", lambda L, x: (_with_nans(L, x).nan_to_num(), L.nan_to_num(x * 1),
                                L.nan_to_num(_with_nans(L, x), nan=2.0, posinf=1e3,
                                             neginf=-7.0)),
    samples=(((3, 4),), ((2, 3),)), dtypes=FLOAT + ("int64",),
    covers=("Tensor.nan_to_num", "torch.nan_to_num"))
add("Tensor.nan_to_num_", lambda L, x: _with_nans(L, x).nan_to_num_(posinf=5.0),
    samples=(((3, 4),),))
for _name in ("fmax", "fmin"):
    add(_name, lambda L, x, y, n=_name: (
        getattr(x, n)(y), getattr(L, n)(x, y), getattr(L, n)(_with_nans(L, x), y),
        getattr(x, n)(x), getattr(L, n)(_with_nans(L, x), _with_nans(L, x * 2))),
        samples=BINARY, dtypes=FLOAT + ("int64", "int8"),
        covers=(f"Tensor.{_name}", f"torch.{_name}"))
add("argsort", lambda L, x: (x.argsort(), L.argsort(x, 0), x.argsort(descending=True),
                             L.argsort(x.round(), dim=-1, stable=True),
                             L.argsort(x.round(), stable=True, descending=True)),
    samples=(((3, 5),), ((4, 6),)), domain="normal3", dtypes=FLOAT + INTS[:2], grad=False,
    covers=("Tensor.argsort", "torch.argsort"))


def _index_fill(L, x, v):
    return (x.index_fill(1, L.tensor([0, 2]), 3.5), L.index_fill(x, 0, L.tensor([1]), -2),
            x.index_fill(-1, L.tensor([3, 0, 0]), v.sum()),
            x.index_fill(0, L.tensor(0), v.sum() * 2))


add("index_fill", _index_fill, samples=(((3, 4), (2,)),), dtypes=FLOAT,
    covers=("Tensor.index_fill", "torch.index_fill"))
add("index_fill(int)", lambda L, x: (x.index_fill(1, L.tensor([0, 2]), 3),
                                     x.index_fill(0, L.tensor([1]), 2)),
    samples=(((3, 4),),), dtypes=INTS + ("bool",), grad=False, covers=())
add("Tensor.index_fill_", lambda L, x: (x * 1).index_fill_(1, L.tensor([1, 3]), -1.5),
    samples=(((3, 4),),), dtypes=FLOAT + ("int64",))
add("Tensor.div_", lambda L, x, y: ((x * 1).div_(y), (x * 1).div_(y, rounding_mode="floor"),
                                    (x * 1).div_(y, rounding_mode="trunc"),
                                    (x * 1).div_(2, rounding_mode="floor")),
    samples=(((3, 4), (3, 4)), ((3, 4), (4,))), domain=("normal3", "positive"),
    dtypes=FLOAT, gradgrad=False, covers=("Tensor.div_",))
add("div_(int)", lambda L, x, y: ((x * 1).div_(y, rounding_mode="floor"),
                                  (x * 1).div_(-y, rounding_mode="trunc")),
    samples=(((3, 4), (3, 4)),), domain=("real", "positive"), dtypes=INTS[:3], grad=False,
    covers=())

# -- distances and products --------------------------------------------------------------


def _cdist(L, x, y):
    """p = 2, 1, 3, inf, 0, with a zero distance (a row of y is one of x: PyTorch's
    gradient there is 0)."""
    y = L.cat([y[..., :1, :], x[..., :1, :], y[..., 2:, :]], -2)
    return tuple(L.cdist(x, y, p=p) for p in (2.0, 1.0, 3.0, float("inf"), 0.0))


add("cdist", _cdist, samples=(((3, 4), (5, 4)), ((2, 3, 2), (2, 4, 2))), gradgrad=False,
    covers=("torch.cdist",))  # PyTorch: "the derivative for '_cdist_backward' is not
# implemented"
add("cdist(mm)", lambda L, x, y: (L.cdist(x, y), L.cdist(x[:4], y,
                                                        compute_mode="use_mm_for_euclid_dist")),
    samples=(((27, 3), (4, 3)),), gradgrad=False, covers=())
add("cross", lambda L, x, y: (L.cross(x, y, dim=1), L.linalg.cross(x.mT, y.mT, dim=0),
                              L.linalg.cross(x[0], y[1], dim=0), L.cross(x, y),
                              x.cross(y, dim=-1), x.mT.cross(y.mT)),
    samples=(((4, 3), (4, 3)),), ref=lambda L, x, y: (
        L.cross(x, y, dim=1), L.linalg.cross(x.mT, y.mT, dim=0), L.linalg.cross(x[0], y[1], dim=0),
        L.cross(x, y, dim=1), x.cross(y, dim=-1), x.mT.cross(y.mT, dim=0)),
    # (PyTorch's dim=None is the first of size 3, with a deprecation warning)
    covers=("torch.cross", "linalg.cross", "Tensor.cross"))
add("linalg.cross(broadcast)", lambda L, x, y: L.linalg.cross(x, y),
    samples=(((2, 1, 3), (1, 4, 3)),), covers=())

# -- torch.linalg ------------------------------------------------------------------------
_SQUARE = (((4, 4),), ((2, 3, 3),))
_LINALG = {  # name -> (call, samples, domain, double backward)
    "pinv": (lambda L, a: (L.linalg.pinv(a), L.linalg.pinv(a[..., :3, :3].detach(), hermitian=True),
                           L.linalg.pinv(a, rtol=1e-12)),
             (((4, 4),), ((3, 5),), ((2, 4, 3),)), "matrix", True),
    "lstsq": (lambda L, a, b: (L.linalg.lstsq(a, b).solution, L.linalg.lstsq(a, b)[2],
                               L.linalg.lstsq(a, b, driver="gelsd"),
                               L.linalg.lstsq(a, b[..., 0]).solution),
              (((5, 3), (5, 2)), ((2, 4, 4), (2, 4, 3)), ((3, 5), (3, 2))), "matrix", True),
    "matrix_rank": (lambda L, a: (L.linalg.matrix_rank(a), L.linalg.matrix_rank(a @ a.mT),
                                  L.linalg.matrix_rank(a[..., :1] * a[..., :1, :]),
                                  L.linalg.matrix_rank(a @ a.mT, hermitian=True),
                                  L.linalg.matrix_rank(a, atol=1.0, rtol=0.0)),
                    (((4, 4),), ((2, 3, 5),)), "matrix", False),
    "cond": (lambda L, a: (L.linalg.cond(a), L.linalg.cond(a, -2), L.linalg.cond(a, "nuc")),
             _SQUARE, "matrix", True),
    # PyTorch 2.13's backward of these raises (its inv_ex output modified in place): values
    "cond(p)": (lambda L, a: (L.linalg.cond(a, "fro"), L.linalg.cond(a, 1),
                              L.linalg.cond(a, float("inf")), L.linalg.cond(a, -1)),
                _SQUARE, "matrix", False),
    "multi_dot": (lambda L, a, b, c: (L.linalg.multi_dot([a, b, c]),
                                      L.linalg.multi_dot([a[0], b, c]),
                                      L.linalg.multi_dot([a, b, c[:, 0]]),
                                      L.linalg.multi_dot((a[0], b, c[:, 0]))),
                  (((2, 3), (3, 4), (4, 2)),), "matrix", True),
    "vecdot": (lambda L, x, y: (L.linalg.vecdot(x, y), L.linalg.vecdot(x, y, dim=0)),
               (((3, 4), (3, 4)), ((3, 4), (4,))), "matrix", True),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a * 0.3), (((3, 3),), ((2, 4, 4),)),
                   "matrix", True),
    "solve_triangular": (lambda L, a, b: (
        L.linalg.solve_triangular(a, b, upper=True),
        L.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
        L.linalg.solve_triangular(a, b.mT, upper=False, left=False)),
        (((4, 4), (4, 2)), ((2, 3, 3), (2, 3, 3))), "matrix", True),
    "inv_ex": (lambda L, a: L.linalg.inv_ex(a), _SQUARE, "matrix", True),
    "cholesky_ex": (lambda L, a: (L.linalg.cholesky_ex(a), L.linalg.cholesky_ex(a, upper=True)),
                    _SQUARE, "spd", True),
    "solve(batch of vectors)": (lambda L, a, b: (L.linalg.solve(a, b), L.linalg.solve(a[0], b[0])),
                                (((2, 3, 3), (2, 3)), ((4, 2, 3, 3), (4, 2, 3))), "matrix", True),
    # (double backward: PyTorch has it, symgrad raises once_differentiable's error)
    "lu": (lambda L, a: L.linalg.lu(a), _SQUARE, "matrix", False),
    "lu_factor": (lambda L, a: (L.linalg.lu_factor(a), a.lu(), L.lu(a * 2, get_infos=True)),
                  _SQUARE, "matrix", False),
    "lu_factor_ex": (lambda L, a: L.linalg.lu_factor_ex(a), _SQUARE, "matrix", False),
}
# a symmetric matrix's hermitian pinv requiring grad (float64: PyTorch's float32 eigh-based
# gradient is off by 1e-4 relative at these condition numbers, symgrad's rounds once)
_LINALG["pinv(hermitian)"] = (lambda L, a: L.linalg.pinv(a + a.mT, hermitian=True),
                              _SQUARE, "matrix", True)
#: double backward with SYMGRAD_FULL=1 only: the same as linalg.inv's and cholesky's (CI time)
_SAME_GRADGRAD = ("inv_ex", "cholesky_ex")
for _name, (_fn, _samples, _domain, _gg) in _LINALG.items():
    add(f"linalg.{_name}", _fn, samples=_samples, domain=_domain, gradgrad=_gg, rtol=1e-9,
        grad=_name not in ("matrix_rank", "cond(p)"), covers=() if "(" in _name else None,
        full_only=("gradgrad",) if _name in _SAME_GRADGRAD else (),
        dtypes=("float64",) if _name == "pinv(hermitian)" else FLOAT)
# wide and tall matrices factor (their gradient is refused: values only)
add("linalg.lu(non-square)", lambda L, a: (L.linalg.lu(a), L.linalg.lu(a.mT),
                                           L.linalg.lu_factor(a), L.linalg.lu_factor_ex(a.mT)),
    samples=(((3, 5),), ((2, 2, 4),)), domain="matrix", grad=False, covers=())
# the regularized incomplete gamma functions: gradient in x (a's raises, as PyTorch's:
# tests/test_igamma.py)
add("igamma", lambda L, a, x: (L.igamma(a.detach(), x), a.detach().igammac(x),
                               a.detach().igamma(x * 3), L.igammac(a.detach() * 4, x)),
    samples=(((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3))), domain="positive",
    covers=("torch.igamma", "torch.igammac", "Tensor.igamma", "Tensor.igammac"))
add("igamma_", lambda L, a, x: (a.detach().clone().igamma_(x), a.detach().clone().igammac_(x),
                                a.detach().igamma(x[0, 0])),
    samples=(((3, 4), (3, 4)),), domain="positive", grad=False,
    covers=("Tensor.igamma_", "Tensor.igammac_"))
