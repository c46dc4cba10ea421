"""Op table records (tests/optable.py): reductions, scans, shape and indexing ops,
matrix products, torch.linalg and the factories."""

from __future__ import annotations

import numpy as np
from optable import FLOAT, INTS, add

X3 = (((2, 3, 4),),)
UNARY = (((3, 4),), ((),))

# -- reductions: the method (several dim forms) and the function ---------------------
_REDUCE = {  # name -> (call forms, domain, dtypes, double backward)
    "sum": ((lambda x: x.sum(), lambda x: x.sum(1), lambda x: x.sum((0, -1), keepdim=True)),
            "real", FLOAT + INTS + ("bool",), True),
    "mean": ((lambda x: x.mean(), lambda x: x.mean(-1, keepdim=True)), "real", FLOAT, True),
    "prod": ((lambda x: x.prod(), lambda x: x.prod(1)), "positive", FLOAT + ("int32",), True),
    "amax": ((lambda x: x.amax(), lambda x: x.amax((0, 2))), "real", FLOAT + ("int8",), True),
    "amin": ((lambda x: x.amin(1, keepdim=True),), "real", FLOAT + ("int64",), True),
    "max": ((lambda x: x.max(), lambda x: x.max(1)), "real", FLOAT + ("int64", "bool"), True),
    "min": ((lambda x: x.min(), lambda x: x.min(-1, keepdim=True)), "real",
            FLOAT + ("uint8", "bool"), True),
    "argmax": ((lambda x: x.argmax(), lambda x: x.argmax(1)), "real", FLOAT + ("int32",), False),
    "argmin": ((lambda x: x.argmin(0, keepdim=True),), "real", FLOAT + ("int64",), False),
    "std": ((lambda x: x.std(), lambda x: x.std(1, correction=0)), "real", FLOAT, True),
    "var": ((lambda x: x.var(), lambda x: x.var(0, keepdim=True)), "real", FLOAT, True),
    "norm": ((lambda x: x.norm(), lambda x: x.norm(p=1, dim=1)), "real", FLOAT, True),
    "logsumexp": ((lambda x: x.logsumexp(1), lambda x: x.logsumexp((0, 2))), "real", FLOAT, True),
    "all": ((lambda x: x.all(), lambda x: x.all(1)), "real", FLOAT + ("int64", "bool"), False),
    "any": ((lambda x: x.any(), lambda x: x.any(-1)), "real", FLOAT + ("uint8", "bool"), False),
    "cumsum": ((lambda x: x.cumsum(1), lambda x: x.cumsum(-1)), "real",
               FLOAT + ("int64", "int8", "bool"), True),
    "cumprod": ((lambda x: x.cumprod(1),), "real", FLOAT + ("int32",), True),
    "logcumsumexp": ((lambda x: x.logcumsumexp(1),), "real", FLOAT, True),
    "cummax": ((lambda x: x.cummax(1),), "real", FLOAT + ("int64",), True),
    "cummin": ((lambda x: x.cummin(0),), "real", FLOAT + ("int16",), True),
    "softmax": ((lambda x: x.softmax(1),), "real", FLOAT, True),
    "log_softmax": ((lambda x: x.log_softmax(-1),), "real", FLOAT, True),
    "sort": ((lambda x: x.sort(1), lambda x: x.sort(0, descending=True)), "real",
             FLOAT + ("int64",), True),
    "topk": ((lambda x: x.topk(2), lambda x: x.topk(1, dim=0, largest=False)), "real",
             FLOAT + ("int32",), True),
}
#: the function's arguments after the tensor where it needs them
_FUNCTION_ARGS = {"logsumexp": (1,), "cumsum": (1,), "cumprod": (1,), "logcumsumexp": (1,),
                  "cummax": (1,), "cummin": (1,), "softmax": (1,), "log_softmax": (1,),
                  "topk": (2,)}
for _name, (_forms, _domain, _dtypes, _gg) in _REDUCE.items():
    add(_name, lambda L, x, n=_name, forms=_forms: tuple(f(x) for f in forms)
        + (getattr(L, n)(x, *_FUNCTION_ARGS.get(n, ())),),
        samples=X3, domain=_domain, dtypes=_dtypes, gradgrad=_gg,
        covers=(f"Tensor.{_name}", f"torch.{_name}"))
# a wide range: PyTorch's double backward loses all accuracy there (symgrad's agrees with
# mpmath to 1e-15 on this record's sample), so only the first order is compared
add("logcumsumexp(wide)", lambda L, x: (x * 400).logcumsumexp(2), samples=X3, gradgrad=False,
    covers=("Tensor.logcumsumexp",))
add("reductions of 0-d", lambda L, x: (x.sum(), x.mean(0), x.amax(), x.max(), x.cumsum(0),
                                       x.softmax(0), x.log_softmax(-1), x.logsumexp(0),
                                       x.prod(0), x.cummax(0).values, x.sort(0).values),
    samples=(((),),), covers=())
add("max/min(other)", lambda L, x, y: (x.max(y), L.min(x, y)), samples=(((3, 4), (4,)),),
    covers=("Tensor.max", "torch.min"))

# -- shapes and views -----------------------------------------------------------------
_SHAPE = {
    "view": lambda L, x: (x.view(4, 6), x.view(-1), x.view((2, 12))),
    "reshape": lambda L, x: (x.reshape(6, -1), L.reshape(x, (24,))),
    "view_as": lambda L, x: (x.view_as(L.zeros(6, 4)), x.reshape_as(L.zeros(4, 6))),
    "flatten": lambda L, x: (x.flatten(), L.flatten(x, 1), x.ravel()),
    "permute": lambda L, x: (x.permute(2, 0, 1), L.permute(x, (1, 0, 2))),
    "transpose": lambda L, x: (x.transpose(0, 2), L.transpose(x, -1, -2), x.swapaxes(0, 1),
                               x.swapdims(1, 2), x.mT),
    "t": lambda L, x: (x[0].t(), L.t(x[1]), x[0].T),
    "squeeze": lambda L, x: (x[:1].squeeze(), L.squeeze(x[:, :1], 1), x.squeeze(0)),
    "unsqueeze": lambda L, x: (x.unsqueeze(0), L.unsqueeze(x, -1)),
    "expand": lambda L, x: (x[:, :1].expand(-1, 3, 4), x[0].expand_as(L.zeros(2, 3, 4))),
    "repeat": lambda L, x: x.repeat(2, 1, 1),
    "flip": lambda L, x: (x.flip(0), L.flip(x, (1, 2))),
    "narrow": lambda L, x: (x.narrow(1, 1, 2), L.narrow(x, -1, 0, 3)),
    "chunk": lambda L, x: (x.chunk(2, 2), L.chunk(x, 3, 1)),
    "split": lambda L, x: (x.split(2, 2), L.split(x, [1, 2], 1)),
    "unbind": lambda L, x: (x.unbind(1), L.unbind(x, 0)),
    "roll": lambda L, x: (x.roll(1, 1), L.roll(x, 2), x.roll((1, -1), (0, 2))),
    "tril": lambda L, x: (x.tril(), L.tril(x, -1)),
    "triu": lambda L, x: (x.triu(1), L.triu(x)),
    "trace": lambda L, x: (x[0].trace(), L.trace(x[1, :, :3])) if x.dtype != L.bool else (),
    "unfold": lambda L, x: (x.unfold(2, 2, 1), x.unfold(0, 1, 2), x.unfold(-1, 4, 3)),
    "take": lambda L, x: x.take(L.tensor([[0, 5], [23, 7]])),
    "getitem": lambda L, x: (x[0], x[-1, 1:], x[:, [0, 2]], x[x > 0], x[None, ..., 1],
                             x[L.tensor([1, 0]), :, L.tensor([3, 2])],
                             x[:, L.tensor([[0], [2]]), 1:3]),
    "clone": lambda L, x: (x.clone(), L.clone(x), x.contiguous(), x.detach(), L.detach(x)),
    "conversions": lambda L, x: (x.float(), x.double(), x.half(), x.to(L.float32),
                                 x.to(dtype=L.int64), x.type(L.float32), x.long(), x.int(),
                                 x.short(), x.char(), x.bool(), x.cpu(), x.conj(), x.real),
}
_SHAPE_COVERS = {
    "view_as": ("Tensor.view_as", "Tensor.reshape_as"),
    "flatten": ("Tensor.flatten", "torch.flatten", "Tensor.ravel"),
    "transpose": ("Tensor.transpose", "torch.transpose", "Tensor.swapaxes", "Tensor.swapdims",
                  "Tensor.mT"),
    "t": ("Tensor.t", "torch.t", "Tensor.T"),
    "expand": ("Tensor.expand", "Tensor.expand_as"), "repeat": ("Tensor.repeat",),
    "view": ("Tensor.view",), "unfold": ("Tensor.unfold",), "take": ("Tensor.take",),
    "getitem": ("Tensor.__getitem__",),
    "clone": ("Tensor.clone", "torch.clone", "Tensor.contiguous", "Tensor.detach",
              "torch.detach"),
    "conversions": ("Tensor.float", "Tensor.double", "Tensor.half", "Tensor.to", "Tensor.type",
                    "Tensor.long", "Tensor.int", "Tensor.short", "Tensor.char", "Tensor.bool",
                    "Tensor.cpu", "Tensor.conj", "Tensor.real"),
}
for _name, _fn in _SHAPE.items():
    add(_name, _fn, samples=X3, dtypes=FLOAT + ("int64", "bool"),
        covers=_SHAPE_COVERS.get(_name, (f"Tensor.{_name}", f"torch.{_name}")),
        rtol=1e-3 if _name == "conversions" else 1e-10)
add("byte", lambda L, x: x.abs().byte(), samples=X3, dtypes=("float64", "int64"),
    covers=("Tensor.byte",))
add("cat", lambda L, x, y: (L.cat([x, y]), L.cat((y, x, y), dim=-2), L.concat([x, y], 0),
                            L.stack([x, x]), L.stack((x, x * 2), -1)),
    samples=(((1, 4), (2, 4)), ((3, 4), (3, 4))), dtypes=FLOAT + ("int64", "bool"),
    covers=("torch.cat", "torch.concat", "torch.stack"))

# -- gathers and scatters -------------------------------------------------------------


def _t(L, value):
    return L.tensor(value)


_IDX = [[0, 1], [1, 3], [2, 0]]
_SCATTER = {
    "gather": lambda L, x: (x.gather(1, _t(L, _IDX)), L.gather(x, 0, _t(L, [[2, 0, 1, 1]]))),
    "scatter": lambda L, x: (x.scatter(1, _t(L, _IDX), x[:, 2:] * 2),
                             L.scatter(x, 0, _t(L, [[0, 1, 2, 0]]), 5.0)),
    "scatter_add": lambda L, x: (x.scatter_add(1, _t(L, [[0, 0], [1, 3], [2, 2]]), x[:, :2]),
                                 L.scatter_add(x, 0, _t(L, [[1, 1, 0, 2]]), x[:1] * 3)),
    "scatter_reduce": lambda L, x: tuple(
        L.scatter_reduce(x, 1, _t(L, [[0, 0], [1, 3], [2, 2]]), x[:, :2] * 2, r,
                         include_self=s) for r in ("sum", "mean", "amax", "amin", "prod")
        for s in (True, False)),
    "index_add": lambda L, x: (x.index_add(0, _t(L, [2, 0]), x[:2] * 3),
                               L.index_add(x, 1, _t(L, [3, 3]), x[:, :2], alpha=2)),
    "index_select": lambda L, x: (x.index_select(1, _t(L, [2, 0, 2])),
                                  L.index_select(x, 0, _t(L, [1]))),
}
for _name, _fn in _SCATTER.items():
    add(_name, _fn, samples=(((3, 4),),), dtypes=FLOAT + ("int64",),
        covers=(f"Tensor.{_name}", f"torch.{_name}"))
add("gather/scatter of 0-d", lambda L, x: (x.gather(0, _t(L, 0)), x.scatter(0, _t(L, 0), 5.0),
                                           x.scatter_add(0, _t(L, 0), x * 2),
                                           x.scatter_reduce(0, _t(L, 0), x * 3, "amax")),
    samples=(((),),), covers=())

# -- matrix products --------------------------------------------------------------------
MATMUL_SAMPLES = (((3, 4), (4, 2)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((2, 1, 3, 4), (3, 4, 2)))
# int64 matrix products: symgrad refuses them (it computes them in float64, which rounds
# above 2**53) with a TypeError that says so; PyTorch computes them in int64
add("matmul", lambda L, x, y: (x @ y, x.matmul(y), L.matmul(x, y)), samples=MATMUL_SAMPLES,
    covers=("Tensor.matmul", "torch.matmul", "Tensor.__matmul__"))
add("__rmatmul__", lambda L, x, y: y.__rmatmul__(x), samples=MATMUL_SAMPLES[:1],
    covers=("Tensor.__rmatmul__",))
add("mm", lambda L, x, y: (x.mm(y), L.mm(x, y)), samples=MATMUL_SAMPLES[:1],
    dtypes=FLOAT + ("int32",), covers=("Tensor.mm", "torch.mm"))
add("mv", lambda L, x, y: (x.mv(y), L.mv(x, y)), samples=(((3, 4), (4,)),),
    covers=("Tensor.mv", "torch.mv"))
add("dot", lambda L, x, y: (x.dot(y), L.dot(x, y)), samples=(((4,), (4,)),),
    covers=("Tensor.dot", "torch.dot"))
add("outer", lambda L, x, y: (x.outer(y), L.outer(x, y)), samples=(((3,), (4,)),),
    dtypes=FLOAT + ("int64",), covers=("Tensor.outer", "torch.outer"))
add("einsum", lambda L, x, y: (L.einsum("ij,kj->ik", x, x), L.einsum("ij,j", x, y[0]),
                               L.einsum("ii", x[:, :3]), L.einsum("ij->", x),
                               L.einsum("bij,jk->bik", x[None], y.T)),
    samples=(((3, 4), (3, 4)),), covers=("torch.einsum",))

# -- torch.linalg -------------------------------------------------------------------------
_SQUARE = (((4, 4),), ((2, 3, 3),))
_LINALG = {  # name -> (call, samples, domain, double backward)
    "solve": (lambda L, a, b: (L.linalg.solve(a, b), L.linalg.solve(a, b.mT, left=False)),
              (((4, 4), (4, 2)), ((2, 3, 3), (3, 3))), "matrix", True),
    "inv": (lambda L, a: L.linalg.inv(a), _SQUARE, "matrix", True),
    "det": (lambda L, a: L.linalg.det(a), _SQUARE, "matrix", True),  # float64 only: below
    "slogdet": (lambda L, a: L.linalg.slogdet(a), _SQUARE, "matrix", True),
    "cholesky": (lambda L, a: (L.linalg.cholesky(a), L.linalg.cholesky(a, upper=True)),
                 _SQUARE, "spd", True),
    "qr": (lambda L, a: L.linalg.qr(a), (((4, 4),), ((4, 3),)), "matrix", True),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), (((4, 4),), ((3, 5),)), "matrix", True),
    "svd": (lambda L, a: L.linalg.svd(a, full_matrices=False)[1], (((4, 4),),), "matrix", True),
    "eigh": (lambda L, a: (L.linalg.eigh(a)[0], L.linalg.eigh(a, "U")[0]), _SQUARE, "spd", True),
    # UPLO="U" of a nonsymmetric matrix: the upper triangle is the matrix's
    "eigh(U)": (lambda L, a: (L.linalg.eigh(a, "U")[0], L.linalg.eigvalsh(a, UPLO="U")),
                _SQUARE, "matrix", True),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a), _SQUARE, "spd", True),
    "vector_norm": (lambda L, b: (L.linalg.vector_norm(b), L.linalg.vector_norm(b, 1, dim=0),
                                  L.linalg.vector_norm(b, 3, dim=-1, keepdim=True)),
                    (((4, 2),), ((3,),)), "matrix", True),
    "matrix_norm": (lambda L, a: (L.linalg.matrix_norm(a), L.linalg.matrix_norm(a, "nuc"),
                                  L.linalg.matrix_norm(a, 2), L.linalg.matrix_norm(a, 1)),
                    _SQUARE, "matrix", True),
    "norm": (lambda L, a: (L.linalg.norm(a), L.linalg.norm(a, dim=-1)), _SQUARE, "matrix", True),
    "matrix_power": (lambda L, a: (L.linalg.matrix_power(a, 3), L.linalg.matrix_power(a, -2),
                                   L.linalg.matrix_power(a, 0)), _SQUARE, "spd", True),
}
for _name, (_fn, _samples, _domain, _gg) in _LINALG.items():
    # PyTorch 2.13's float32 det backward raises under a float64 default dtype (its lu_solve
    # gets a float64 right-hand side): no oracle there
    add(f"linalg.{_name}", _fn, samples=_samples, domain=_domain, gradgrad=_gg, rtol=1e-9,
        dtypes=("float64",) if _name == "det" else FLOAT,
        covers=("linalg.eigh", "linalg.eigvalsh") if _name == "eigh(U)" else None)

# -- disagreements with PyTorch found by the table, not fixed yet (reported) --------------

# -- factories: no inputs; values and dtypes -------------------------------------------
add("factories", lambda L: (L.zeros(2, 3), L.ones((3,), dtype=L.int32), L.full((2,), 7),
                            L.full((2, 2), 1.5, dtype=L.float32), L.eye(3), L.eye(2, 4),
                            L.arange(5), L.arange(1, 2, 0.25), L.arange(0, 5, 2, dtype=L.int8),
                            L.linspace(0, 1, 5), L.tensor([[1, 2], [3, 4]]),
                            L.tensor([True]), L.tensor(2.5), L.as_tensor([1, 2], dtype=L.int16),
                            L.from_numpy(np.arange(3, dtype=np.int32)),
                            L.tensor(np.array([1, 2], dtype=np.uint8))),
    samples=((),), dtypes=("float64",), grad=False,
    covers=("torch.zeros", "torch.ones", "torch.full", "torch.eye", "torch.arange",
            "torch.linspace", "torch.tensor", "torch.as_tensor", "torch.from_numpy"))
add("like factories", lambda L, x: (L.zeros_like(x), L.ones_like(x, dtype=L.int64),
                                    L.full_like(x, 7), x.new_zeros(2), x.new_ones((1, 2)),
                                    x.new_full((2,), 3), x.new_tensor([1, 2])),
    samples=(((3, 4),),), dtypes=FLOAT + ("int64", "bool"), grad=False,
    covers=("torch.zeros_like", "torch.ones_like", "torch.full_like", "Tensor.new_zeros",
            "Tensor.new_ones", "Tensor.new_full", "Tensor.new_tensor"))
