"""Op table records (tests/optable.py) of the linear algebra and shape ops of
symgrad/eager/linalg_methods.py, shape_methods.py and shape_functions.py: each as the
Tensor method and the torch-level function where PyTorch has both."""

from __future__ import annotations

from optable import FLOAT, add


def _both(name, *args, **kw):
    """``x.name(*args)`` and ``torch.name(x, *args)``: the method and the function."""
    return lambda L, x, *rest: (getattr(x, name)(*rest, *args, **kw),
                                getattr(L, name)(x, *rest, *args, **kw))


def _mf(name):
    return (f"Tensor.{name}", f"torch.{name}")


# -- products ----------------------------------------------------------------------------
add("bmm", _both("bmm"), samples=(((2, 3, 4), (2, 4, 5)),), covers=_mf("bmm"))
add("baddbmm", lambda L, c, a, b: (c.baddbmm(a, b), L.baddbmm(c[0], a, b, beta=0.5, alpha=2),
                                   c.baddbmm(a, b, beta=0)),
    samples=(((2, 3, 5), (2, 3, 4), (2, 4, 5)),), covers=_mf("baddbmm"))
add("addbmm", lambda L, c, a, b: (c.addbmm(a, b), L.addbmm(c[0], a, b, beta=2, alpha=0.5)),
    samples=(((1, 5), (2, 3, 4), (2, 4, 5)),), covers=_mf("addbmm"))
add("addmv", lambda L, c, a, b: (c.addmv(a, b), L.addmv(c[0], a, b, beta=0.5, alpha=2)),
    samples=(((3,), (3, 4), (4,)),), covers=_mf("addmv"))
add("addr", lambda L, c, a, b: (c.addr(a, b), L.addr(c, a, b, beta=0.5, alpha=2)),
    samples=(((3, 4), (3,), (4,)),), covers=_mf("addr"))
add("addcmul", lambda L, c, a, b: (c.addcmul(a, b), L.addcmul(c, a, b, value=-1.5)),
    samples=(((3, 4), (3, 4), (4,)), ((), (2, 1), (3,))), dtypes=FLOAT + ("int64",),
    covers=_mf("addcmul"))
add("addcdiv", lambda L, c, a, b: (c.addcdiv(a, b), L.addcdiv(c, a, b, value=-0.5)),
    samples=(((3, 4), (3, 4), (4,)),), domain=("real", "real", "positive"),
    covers=_mf("addcdiv"))
add("ger", _both("ger"), samples=(((3,), (4,)),), covers=_mf("ger"))
add("inner", _both("inner"), samples=(((3, 4), (2, 4)), ((4,), (4,)), ((), (2, 3))),
    covers=_mf("inner"))
add("vdot", _both("vdot"), samples=(((4,), (4,)),), covers=_mf("vdot"))
# (int64 products: refused, as matmul's, tests/optable_shapes.py)
add("kron", _both("kron"), samples=(((2, 3), (3, 2)), ((2,), (2, 3)), ((2, 1, 2), (2, 2))),
    covers=_mf("kron"))
add("dist", lambda L, x, y: (x.dist(y), L.dist(x, y, 1), x.dist(y, 3), x.dist(y, float("inf"))),
    samples=(((3, 4), (3, 4)), ((3, 4), (4,))), covers=_mf("dist"))

# -- the older names of torch.linalg -------------------------------------------------------
_SQUARE = (((4, 4),), ((2, 3, 3),))
add("det", _both("det"), samples=_SQUARE, domain="matrix", dtypes=("float64",),
    covers=_mf("det"))
add("logdet", _both("logdet"), samples=_SQUARE, domain="spd", dtypes=("float64",),
    covers=_mf("logdet"))
add("slogdet", _both("slogdet"), samples=_SQUARE, domain="matrix", covers=_mf("slogdet"))
add("inverse", _both("inverse"), samples=_SQUARE, domain="matrix", rtol=1e-9,
    covers=_mf("inverse"))
add("pinverse", lambda L, a: (a.pinverse(), L.pinverse(a, rcond=1e-10)),
    samples=(((4, 3),), ((2, 3, 5),)), domain="matrix", rtol=1e-9, covers=_mf("pinverse"))
add("matrix_power", lambda L, a: (a.matrix_power(3), L.matrix_power(a, -1)), samples=_SQUARE,
    domain="spd", rtol=1e-9, covers=_mf("matrix_power"))
add("matrix_exp", _both("matrix_exp"), samples=(((3, 3),),), domain="unit", rtol=1e-9,
    covers=_mf("matrix_exp"))
add("cholesky", lambda L, a: (a.cholesky(), L.cholesky(a, upper=True)), samples=_SQUARE,
    domain="spd", rtol=1e-9, covers=_mf("cholesky"))
add("cholesky_solve",
    lambda L, b, a: (b.cholesky_solve(a.tril()), L.cholesky_solve(b, a.triu(), upper=True)),
    samples=(((3, 2), (3, 3)), ((2, 3, 1), (2, 3, 3))), domain=("real", "matrix"), rtol=1e-9,
    covers=_mf("cholesky_solve"))
add("cholesky_inverse",
    lambda L, a: (a.tril().cholesky_inverse(), L.cholesky_inverse(a.triu(), upper=True)),
    samples=(((3, 3),),), domain="matrix", rtol=1e-9, covers=_mf("cholesky_inverse"))
# (complete Q of a tall matrix: no gradient in PyTorch either)
add("qr", lambda L, a: (a.qr(), L.qr(a[..., :3, :], some=False)), samples=(((4, 3),), ((3, 3),)),
    domain="matrix", rtol=1e-9, covers=_mf("qr"))
# U and V up to the signs of their columns: U diag(S) V^T and U V^T are unique
add("svd", lambda L, a: tuple((U * S.unsqueeze(-2)) @ V.mT for U, S, V in (a.svd(),))
    + tuple((U[..., :, :3] @ V.mT, S) for U, S, V in (L.svd(a, some=False),))[0]
    + (L.svd(a, compute_uv=False),),
    samples=(((4, 3),), ((3, 3),)), domain="matrix", rtol=1e-8, covers=_mf("svd"))
add("triangular_solve", lambda L, b, a: (b.triangular_solve(a), L.triangular_solve(
    b, a, upper=False, transpose=True), L.triangular_solve(b, a, unitriangular=True)),
    samples=(((3, 2), (3, 3)), ((2, 3, 1), (2, 3, 3))), domain=("real", "matrix"), rtol=1e-9,
    covers=_mf("triangular_solve"))

# -- shapes --------------------------------------------------------------------------------
_SHAPES = {
    "diag": (lambda L, x: (x[0].diag(), L.diag(x[1], 1), x[:, 0].diag(-2), x[0, 0].diag(2)),
             (((2, 3, 4),),)),
    "diag_embed": (lambda L, x: (x.diag_embed(), L.diag_embed(x, 1), x.diag_embed(-1, 0, 2)),
                   (((2, 3),),)),
    "diagflat": (lambda L, x: (x.diagflat(), L.diagflat(x, -1)), (((2, 3),),)),
    "tile": (lambda L, x: (x.tile((2,)), L.tile(x, (2, 1, 1, 2))), (((2, 3),),)),
    "repeat_interleave": (lambda L, x: (x.repeat_interleave(2), L.repeat_interleave(
        x, L.tensor([1, 0, 3]), 1), x.repeat_interleave(L.tensor([2]), dim=0)), (((2, 3),),)),
    "rot90": (lambda L, x: (x.rot90(), L.rot90(x, 2, (1, 2)), x.rot90(-1, (2, 0))),
              (((2, 3, 4),),)),
    "fliplr": (lambda L, x: (x.fliplr(), L.fliplr(x)), (((2, 3, 4),),)),
    "flipud": (lambda L, x: (x.flipud(), L.flipud(x)), (((2, 3, 4),),)),
    "movedim": (lambda L, x: (x.movedim(0, 2), L.movedim(x, (0, 1), (2, 0))),
                (((2, 3, 4),),)),
    "moveaxis": (lambda L, x: (x.moveaxis(-1, 0), L.moveaxis(x, (1,), (2,))),
                 (((2, 3, 4),),)),
    "unflatten": (lambda L, x: (x.unflatten(1, (2, -1)), L.unflatten(x, -1, (3, 1))),
                  (((2, 6, 3),),)),
    "tensor_split": (lambda L, x: (x.tensor_split(3, 1), L.tensor_split(x, [1, 4], -1),
                                   x.tensor_split(L.tensor([0, 2, 7]), 2),
                                   x.tensor_split([-1, 2, -4], 2)), (((2, 4, 5),),)),
    "hsplit": (lambda L, x: (x.hsplit(2), L.hsplit(x, [1, 3]), x[0, 0].hsplit(5)),
               (((2, 4, 5),),)),
    "vsplit": (lambda L, x: (x.vsplit(2), L.vsplit(x, [1])), (((2, 4, 5),),)),
    "dsplit": (lambda L, x: (x.dsplit(5), L.dsplit(x, [2, 3])), (((2, 4, 5),),)),
    "split_with_sizes": (lambda L, x: (x.split_with_sizes([1, 3], 1),
                                       L.split_with_sizes(x, [2, 0, 3], -1)), (((2, 4, 5),),)),
    "narrow_copy": (lambda L, x: (x.narrow_copy(1, 1, 2), L.narrow_copy(x, -1, 0, 3)),
                    (((2, 4, 5),),)),
    "broadcast_to": (lambda L, x: (x.broadcast_to((2, 3, 4)), L.broadcast_to(x, (3, -1))),
                     (((3, 4),), ((1, 4),))),
}
for _name, (_fn, _samples) in _SHAPES.items():
    add(_name, _fn, samples=_samples, dtypes=FLOAT + ("int64", "bool"), covers=_mf(_name))
add("take_along_dim", lambda L, x: (
    x.take_along_dim(L.tensor([[[0], [2]]]), 1), L.take_along_dim(x, L.tensor([3, 0, 23])),
    L.take_along_dim(x, L.tensor([[[1, -1, 0]]]), dim=-1)),
    samples=(((2, 3, 4),),), dtypes=FLOAT + ("int64",), covers=_mf("take_along_dim"))
add("torch.masked_fill", lambda L, x, y: L.masked_fill(x, y > 0, 0.5), samples=(((3, 4), (4,)),),
    covers=("torch.masked_fill",))
add("broadcast_tensors", lambda L, x, y, z: L.broadcast_tensors(x, y, z),
    samples=(((3, 1), (4,), ()),), covers=("torch.broadcast_tensors",))
add("meshgrid", lambda L, x, y, z: (L.meshgrid(x, y, z, indexing="ij"),
                                    L.meshgrid([x, y, z], indexing="xy"),
                                    L.meshgrid(x, y, indexing="xy"), L.meshgrid(z, indexing="xy")),
    samples=(((2,), (3,), ()),), dtypes=FLOAT + ("int64",), covers=("torch.meshgrid",))
add("cartesian_prod", lambda L, x, y, z: (L.cartesian_prod(x, y, z), L.cartesian_prod(x)),
    samples=(((2,), (3,), (1,)),), dtypes=FLOAT + ("int64",), covers=("torch.cartesian_prod",))
add("tril_indices", lambda L: (L.tril_indices(3, 4), L.tril_indices(4, 3, -1),
                               L.triu_indices(3, 4, 1), L.triu_indices(3, 3, dtype=L.int32),
                               L.tril_indices(0, 3)),
    samples=((),), dtypes=("float64",), grad=False,
    covers=("torch.tril_indices", "torch.triu_indices"))
add("atleast", lambda L, x, y, z: (L.atleast_1d(x), L.atleast_1d(x, y), L.atleast_2d(x),
                                   L.atleast_2d([y, z]), L.atleast_3d(x), L.atleast_3d(y),
                                   L.atleast_3d(z), L.atleast_3d((z.unsqueeze(0),))),
    samples=(((), (3,), (2, 3)),), dtypes=FLOAT + ("int64", "bool"),
    covers=("torch.atleast_1d", "torch.atleast_2d", "torch.atleast_3d"))
add("stacks", lambda L, x, y, z: (L.hstack([y, y]), L.hstack((z, z)), L.vstack([y, z]),
                                  L.row_stack([x, y]), L.dstack([y, y]), L.dstack([z, z]),
                                  L.column_stack([x, y, z.mT])),
    samples=(((3,), (3,), (2, 3)),), dtypes=FLOAT + ("int64", "bool"),
    covers=("torch.hstack", "torch.vstack", "torch.row_stack", "torch.dstack",
            "torch.column_stack"))

# -- positions and selections ------------------------------------------------------------
_POS = (((3, 4),), ((),))
add("nonzero", lambda L, x: (x.nonzero(), L.nonzero(x > 0), x.nonzero(as_tuple=True),
                             L.nonzero(x > 0.5, as_tuple=True)),
    samples=_POS, dtypes=FLOAT + ("int64", "bool"), grad=False, covers=_mf("nonzero"))
add("argwhere", lambda L, x: (x.argwhere(), L.argwhere(x > 0)), samples=_POS,
    dtypes=FLOAT + ("int64", "bool"), grad=False, covers=_mf("argwhere"))
add("masked_select", lambda L, x, y: (x.masked_select(y > 0), L.masked_select(x, x < 0),
                                      y.masked_select(x > 0)),
    samples=(((3, 4), (3, 4)), ((3, 4), (4,))), dtypes=FLOAT + ("int64",),
    covers=_mf("masked_select"))
add("masked_scatter", lambda L, x, y: (x.masked_scatter(y > 0, y * 3),
                                       L.masked_scatter(x, x < 0, y.flip(-1))),
    samples=(((3, 4), (3, 4)),), dtypes=FLOAT + ("int64",), covers=_mf("masked_scatter"))
add("index_copy", lambda L, x, y: (x.index_copy(0, L.tensor([2, 0]), y[:2] * 2),
                                   L.index_copy(x, 1, L.tensor([3, 1, 0]), y[:, :3]),
                                   x[0, 0].index_copy(0, L.tensor(0), y[1, 1])),
    samples=(((3, 4), (3, 4)),), dtypes=FLOAT + ("int64",), covers=_mf("index_copy"))
add("put", lambda L, x, y: (x.put(L.tensor([[0, -1], [5, 3]]), y[:2, :2]),
                            L.put(x, L.tensor([2, 2, 7]), y[0, :3], accumulate=True)),
    samples=(((3, 4), (3, 4)),), dtypes=FLOAT + ("int64",), covers=_mf("put"))
# (values with ties: an integer sample; PyTorch's unique has no derivative)
add("unique", lambda L, x: (x.unique(), L.unique(x, return_inverse=True, return_counts=True),
                            L.unique(x, sorted=False, return_counts=True),
                            x.unique(dim=0, return_inverse=True),
                            L.unique(x, dim=1, return_counts=True)),
    samples=(((4, 5),),), domain="index", dtypes=("int64", "float64", "bool"),
    grad=False, covers=_mf("unique"))
add("unique_consecutive", lambda L, x: (x.unique_consecutive(), L.unique_consecutive(
    x, return_inverse=True, return_counts=True), x.unique_consecutive(dim=1,
                                                                      return_counts=True)),
    samples=(((4, 5),),), domain="index", dtypes=("int64", "float64"), grad=False,
    covers=_mf("unique_consecutive"))
add("bincount", lambda L, i, w: (i.bincount(), L.bincount(i, minlength=5),
                                 L.bincount(i, w)),
    samples=(((6,), (6,)),), domain=("index", "real"), grad=False,  # (no derivative)
    covers=_mf("bincount"))
add("histc", lambda L, x: (x.histc(4), L.histc(x, 5, -1.0, 0.5), x.histc(3, 0, 0)),
    samples=(((3, 4),),), grad=False, covers=_mf("histc"))
add("bucketize", lambda L, x, b: (L.bucketize(x, b.sort().values),
                                  L.bucketize(x, b.sort().values, right=True, out_int32=True),
                                  L.bucketize(x, b.sort().values[1:2])),
    samples=(((3, 4), (5,)),), dtypes=FLOAT + ("int64",), grad=False,
    covers=("torch.bucketize",))
add("searchsorted", lambda L, s, x: (L.searchsorted(s.sort().values, x),
                                     L.searchsorted(s.sort().values, x, side="right"),
                                     L.searchsorted(s, x, sorter=s.argsort()),
                                     L.searchsorted(s.sort().values[0], x[0], right=True)),
    samples=(((3, 5), (3, 4)),), dtypes=FLOAT + ("int64",), grad=False,
    covers=("torch.searchsorted",))

def _nan(L, x, above):
    """``x`` with NaN where it exceeds ``above``, the gradient still reaching every element."""
    return x + L.where(x.detach() > above, float("nan"), 0.0)


def _ties(x):
    """``2 x`` rounded (values with ties), with the gradient of ``2 x``."""
    y = x * 2
    return y - y.detach() + y.detach().round()


# -- reductions and statistics --------------------------------------------------------------
_X = (((3, 4),),)
add("count_nonzero", lambda L, x: (x.count_nonzero(), L.count_nonzero(x > 0, 1),
                                   x.count_nonzero((0, 1))),
    samples=_X, dtypes=FLOAT + ("int64", "bool"), grad=False, covers=_mf("count_nonzero"))
add("diff", lambda L, x: (x.diff(), L.diff(x, 2, 0), x.diff(dim=0, prepend=x[:1] * 2,
                                                            append=x[1:])),
    samples=(((3, 4),),), dtypes=FLOAT + ("int64", "bool"), covers=_mf("diff"))
# (distinct values: PyTorch's index among equal values is its quickselect's)
add("kthvalue", lambda L, x: (x.kthvalue(2), L.kthvalue(x, 1, 0, keepdim=True),
                              x[0, 0].kthvalue(1)),
    samples=(((3, 4),),), covers=_mf("kthvalue"))
add("mode", lambda L, x: (x.mode(), L.mode(x, 0, keepdim=True)), samples=(((4, 5),),),
    domain="index", dtypes=("int64", "float64"), covers=_mf("mode"))
add("quantile", lambda L, x: (x.quantile(0.3),
                              L.quantile(x, L.tensor([0.0, 0.25, 1.0], dtype=x.dtype), 1),
                              x.quantile(0.6, 0, keepdim=True, interpolation="lower"),
                              x.quantile(0.5, 1, interpolation="higher"),
                              x.quantile(0.75, -1, interpolation="midpoint"),
                              x.quantile(0.5, None, True, interpolation="nearest"),
                              _nan(L, x, 0.5).quantile(0.4, 1)),
    samples=(((3, 4),),), covers=_mf("quantile"))
add("nanquantile", lambda L, x: (x.nanquantile(0.3), L.nanquantile(
    x.masked_fill(x > 0.5, float("nan")), L.tensor([0.1, 0.9], dtype=x.dtype), 1),
    L.nanquantile(x.masked_fill(x > -2, float("nan")), 0.5),
    _nan(L, x, 0.0).nanquantile(0.7, 0), _nan(L, x, -2.0).nanquantile(0.5, 1)),
    samples=(((3, 4),),), covers=_mf("nanquantile"))
# values with ties (the gradient of nanmedian() shared among them) and NaN
add("nanmedian(ties)", lambda L, x: (_ties(x).nanmedian(), _nan(L, _ties(x), 1.5).nanmedian(),
                                     _nan(L, _ties(x), 0.5).nanmedian(1)),
    samples=(((4, 5),),), dtypes=("float64",), covers=())
add("nanmedian", lambda L, x: (x.nanmedian(), L.nanmedian(x.masked_fill(x > 0.5, float("nan")),
                                                          1), x.nanmedian(0, keepdim=True)),
    samples=(((3, 4),),), covers=_mf("nanmedian"))
add("nansum", lambda L, x: (x.nansum(), L.nansum(x.masked_fill(x > 0.5, float("nan")) if
                                                 x.is_floating_point() else x, 1),
                            x.nansum((0, 1), keepdim=True)),
    samples=(((3, 4),),), dtypes=FLOAT + ("int64",), covers=_mf("nansum"))
add("aminmax", lambda L, x: (x.aminmax(), L.aminmax(x, dim=1, keepdim=True)),
    samples=(((3, 4),),), dtypes=FLOAT + ("int64",), covers=_mf("aminmax"))
add("renorm", lambda L, x: (x.renorm(2, 0, 1.0), L.renorm(x, 1, 1, 0.8)),
    samples=(((3, 4),),), covers=_mf("renorm"))
add("cov", lambda L, x, f, a: (x.cov(), L.cov(x, correction=0), x[0].cov(),
                               L.cov(x, fweights=L.tensor([1, 2, 1, 3])),
                               L.cov(x, aweights=a.detach()),
                               L.cov(x, fweights=L.tensor([1, 2, 1, 3]), aweights=a.detach())),
    samples=(((3, 4), (4,), (4,)),), domain=("real", "real", "positive"),
    covers=_mf("cov"))
add("corrcoef", lambda L, x: (x.corrcoef(), L.corrcoef(x[:1])), samples=(((3, 4),),),
    covers=_mf("corrcoef"))
add("msort", lambda L, x: (x.msort(), L.msort(x)), samples=(((3, 4),),),
    dtypes=FLOAT + ("int64",), covers=_mf("msort"))
add("trapezoid", lambda L, y, x: (L.trapezoid(y), L.trapezoid(y, dx=0.5, dim=0),
                                  L.trapezoid(y, x), L.trapezoid(y, x[:3].sort().values, dim=0),
                                  L.cumulative_trapezoid(y), L.cumulative_trapezoid(y, dx=2.0),
                                  L.cumulative_trapezoid(y, x[:3], dim=0)),
    samples=(((3, 4), (4,)),), covers=("torch.trapezoid", "torch.cumulative_trapezoid"))
add("std_mean", lambda L, x: (L.std_mean(x), L.std_mean(x, 1, correction=0, keepdim=True),
                              L.var_mean(x), L.var_mean(x, (0, 1))),
    samples=(((3, 4),),), covers=("torch.std_mean", "torch.var_mean"))

# -- in place, on a clone (and into a tensor that does not require grad: the operands'
# gradients kept) ------------------------------------------------------------------------
def _fresh(x):
    """Zeros of ``x``'s shape and dtype that do not require grad."""
    return x.detach() * 0


_INPLACE = {
    "baddbmm_": (lambda L, c, a, b: (c.clone().baddbmm_(a, b, beta=0.5, alpha=2),
                                     _fresh(c).baddbmm_(a, b, beta=0)),
                 (((2, 3, 5), (2, 3, 4), (2, 4, 5)),)),
    "addbmm_": (lambda L, c, a, b: (c.clone().addbmm_(a, b, alpha=2),
                                    _fresh(c).addbmm_(a, b)),
                (((3, 5), (2, 3, 4), (2, 4, 5)),)),
    "addmv_": (lambda L, c, a, b: (c.clone().addmv_(a, b, beta=2), (_fresh(c) + 1).addmv_(a, b)),
               (((3,), (3, 4), (4,)),)),
    "addr_": (lambda L, c, a, b: (c.clone().addr_(a, b, alpha=0.5), (_fresh(c) + 1).addr_(a, b)),
              (((3, 4), (3,), (4,)),)),
    "addcmul_(operands)": (lambda L, c, a, b: (c.clone().addcmul_(a, b, value=2),
                                     _fresh(c).addcmul_(a, b),
                                     _fresh(c).addcdiv_(a, b.abs() + 1, value=0.5)),
                 (((3, 4), (3, 4), (4,)),)),
    "index_copy_": (lambda L, x, y: (x.clone().index_copy_(1, L.tensor([2, 0]), y[:, :2]),
                                     _fresh(x).index_copy_(0, L.tensor([1]), y[:1])),
                    (((3, 4), (3, 4)),)),
    "masked_scatter_": (lambda L, x, y: (x.clone().masked_scatter_(x > 0, y),
                                         _fresh(x).masked_scatter_(y < 0, y * 2)),
                        (((3, 4), (3, 4)),)),
    "put_": (lambda L, x, y: (x.clone().put_(L.tensor([1, -2]), y[0, :2]),
                              _fresh(x).put_(L.tensor([3, 3]), y[1, :2], accumulate=True)),
             (((3, 4), (3, 4)),)),
    "renorm_": (lambda L, x: x.clone().renorm_(2, 1, 0.5), (((3, 4),),)),
}
for _name, (_fn, _samples) in _INPLACE.items():
    add(_name, _fn, samples=_samples, full_only=("gradgrad",),
        dtypes=FLOAT + ("int64",) if _name in ("index_copy_", "masked_scatter_", "put_") else
        FLOAT,
        covers=(f"Tensor.{_name}",) if "(" not in _name else
        ("Tensor.addcmul_", "Tensor.addcdiv_"))
add("index_reduce", lambda L, x, y: tuple(
    x.index_reduce(0, L.tensor([2, 0, 2]), y[:3] * 2, r, include_self=s)
    for r in ("prod", "mean", "amax", "amin") for s in (True, False))
    + (L.index_reduce(x, 1, L.tensor([3, 3]), y[:3, :2], "amax"),
       x.clone().index_reduce_(1, L.tensor([0]), y[:3, :1], "mean", include_self=False)),
    samples=(((3, 4), (4, 4)),), dtypes=FLOAT + ("int64",),
    covers=("Tensor.index_reduce", "torch.index_reduce", "Tensor.index_reduce_"))
add("lu", lambda L, a: (a.detach().lu(), L.lu(a.detach(), get_infos=True),
                        L.lu(a.detach()[..., :3, :])),
    samples=(((4, 4),), ((2, 3, 3),)), domain="matrix", grad=False, rtol=1e-9,
    covers=_mf("lu"))


def _lu_solves(L, b, a):
    """lu_solve with lu's factors, and with factors that depend on ``a`` (their gradient)."""
    lu, piv = L.lu(a.detach())
    return b.lu_solve(lu, piv), L.lu_solve(b * 2, lu, piv), b.lu_solve(lu + 0.1 * a, piv)


add("lu_solve", _lu_solves, samples=(((4, 2), (4, 4)), ((2, 3, 1), (2, 3, 3))),
    domain=("real", "matrix"), rtol=1e-9, covers=_mf("lu_solve"))
