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
