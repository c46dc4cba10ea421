"""Every primitive of the IR, each declared once with all its facets and facts.

One module per family; importing this package registers them all (in
:data:`REGISTRY`). A new primitive is added to the module of its family (or a
new module imported here): its shape rule, numpy implementation, VJP rule,
SymPy counterpart, rewrite rules and flags in one ``register`` call, and a
recording helper that VJP rules and :mod:`symgrad.numpy_api` use. The adjoint
and the passes read the declaration; how a backend writes the primitive is the
backend's (the Numba backend's lowering table, :mod:`symgrad.backend.numba.lowering`:
a ufunc needs no entry), which ``tests/test_registry.py`` demands (CONTRIBUTING.md).

- :mod:`.registry`: ``register`` and the rules every family shares;
- :mod:`.elementwise`: arithmetic, functions, the recording helpers;
  :mod:`.selection`: comparisons, ``where``, booleans entering arithmetic;
- :mod:`.promotion`: numpy's promotion of operands, ``to_float`` (an int64 as float);
- :mod:`.reductions`: ``sum``, ``mean``, ... and ``broadcast_to``, ``reshape``,
  ``transpose`` (each other's adjoints);
- :mod:`.indexing`: ``slice``, ``unslice``, ``gather``, ``scatter_add``,
  ``concatenate``, ``cumsum``;
- :mod:`.linalg`: ``matmul``, ``inv``, ``det``, ``slogdet``, ``solve``;
- :mod:`.special`: ``log2``, ``log10``, ``exp2``, ``cbrt``, ``arcsinh``, ``arccosh``,
  ``arctanh``, ``sinc``, ``remainder``, ``floor_divide``;
- :mod:`.decompositions`: ``cholesky``, ``eigh``, ``eig``, ``qr``, ``svd``, ``pinv``,
  ``lstsq``;
- :mod:`.convert`: ``convert``, a float value in the other float dtype (or complex);
- :mod:`.complex`: ``real``, ``imag``, ``conj``, ``cabs``; :mod:`.fft`: ``fft`` (numpy.fft);
- :mod:`.sorting`: ``argsort``, ``take_along``, ``scatter_along``, ``cumprod``;
- :mod:`.control`: ``proj`` (a part of a tuple) and ``cond``; :mod:`.loops`:
  ``loop`` (fori_loop, scan) and ``while``: primitives whose parameters hold graphs;
- :mod:`.norms`: ``norm2``, the Euclidean norm over axes, scaled (LAPACK's dnrm2);
- :mod:`.softmax`: ``log_softmax`` and ``nll_loss``, a cross entropy's two nodes in PyTorch,
  and ``softmax``, one node as PyTorch's; :mod:`.layer_norm`: ``layer_norm``, likewise;
- :mod:`.operators`: the operators of traced values, and the tracer VJP rules see.
"""

from . import bessel as bessel  # scipy.special's Bessel functions of any order
from . import integers as integers  # numpy's rules on bools and integers (fills call's tables)
from . import special_functions as special_functions  # scipy.special's (registers them)
from .bitwise import bitwise_p
from .complex import cabs_p, conj_p, imag_p, real_p
from .control import cond_p, proj_p
from .convert import convert_p
from .custom import call_p, callback_p
from .decompositions import cholesky_p, eig_p, eigh_p, qr_p
from .elementwise import (
    CONVENTIONS_VERSION,
    abs_p,
    add_p,
    arccos_p,
    arcsin_p,
    arctan2_p,
    arctan_p,
    ceil_p,
    cos_p,
    cosh_p,
    div_p,
    eq_p,
    exp_p,
    expm1_p,
    floor_p,
    ge_p,
    gt_p,
    hypot_p,
    le_p,
    log1p_p,
    log_p,
    logaddexp_p,
    lt_p,
    maximum_p,
    minimum_p,
    mul_p,
    ne_p,
    neg_p,
    pow_p,
    reciprocal_p,
    relu_p,
    rint_p,
    sigmoid_p,
    sign_p,
    sin_p,
    sinh_p,
    softplus_p,
    sqrt_p,
    square_p,
    sub_p,
    tan_p,
    tanh_p,
    to_float_p,
    trunc_p,
    where_p,
    xlogy_p,
)
from .fft import fft_p
from .indexing import concatenate_p, cumsum_p, gather_p, scatter_add_p, slice_p, unslice_p
from .layer_norm import layer_norm_p
from .linalg import det_p, inv_p, linear_p, matmul_p, slogdet_p, solve_p
from .loops import loop_p, while_p
from .norms import norm2_p
from .operators import PrimTracer
from .reductions import (
    broadcast_to_p,
    count_p,
    extremum_weights_p,
    max_p,
    mean_p,
    min_p,
    prod_p,
    reshape_p,
    sum_p,
    transpose_p,
)
from .registry import FACETS, FLAGS, KINDS, OPTIONAL_FACETS, REGISTRY, register
from .softmax import log_softmax_p, nll_loss_p, softmax_p
from .sorting import argsort_p, cumprod_p, scatter_along_p, take_along_p, to_int_p
from .special import (
    arccosh_p,
    arcsinh_p,
    arctanh_p,
    cbrt_p,
    erf_p,
    erfc_p,
    exp2_p,
    floor_divide_p,
    log2_p,
    log10_p,
    remainder_p,
    sinc_p,
)
from .svd import lstsq_p, pinv_p, svd_p
from .windows import unwindows_p, windows_p

__all__ = ["call_p", "callback_p", "erf_p", "erfc_p",
    "abs_p", "add_p", "arccos_p", "arcsin_p", "arctan2_p", "arctan_p", "broadcast_to_p",
    "ceil_p", "concatenate_p", "cos_p", "cosh_p", "count_p", "cumsum_p", "det_p", "div_p",
    "eq_p", "exp_p", "expm1_p", "extremum_weights_p", "floor_p", "gather_p", "ge_p", "gt_p",
    "hypot_p", "inv_p", "le_p", "log1p_p", "log_p", "logaddexp_p", "lt_p", "matmul_p", "max_p",
    "maximum_p", "mean_p", "min_p", "minimum_p", "mul_p", "ne_p", "neg_p", "norm2_p", "pow_p",
    "prod_p",
    "reciprocal_p", "relu_p", "reshape_p", "rint_p", "scatter_add_p", "sigmoid_p", "sign_p",
    "sin_p", "sinh_p", "slice_p", "slogdet_p", "softplus_p", "solve_p", "sqrt_p", "square_p",
    "sub_p", "sum_p", "tan_p", "tanh_p", "transpose_p", "trunc_p", "unslice_p", "where_p",
    "xlogy_p", "log_softmax_p", "nll_loss_p", "softmax_p", "layer_norm_p", "linear_p", "arccosh_p",
    "arcsinh_p", "arctanh_p", "cbrt_p", "exp2_p",
    "floor_divide_p",
    "log2_p", "log10_p", "remainder_p", "sinc_p", "argsort_p", "to_int_p", "cumprod_p",
    "scatter_along_p",
    "take_along_p", "cholesky_p", "eig_p", "eigh_p", "lstsq_p", "pinv_p", "qr_p", "svd_p",
    "to_float_p", "convert_p", "bitwise_p", "cond_p", "proj_p", "loop_p", "while_p",
    "windows_p", "unwindows_p", "real_p", "imag_p", "conj_p", "cabs_p", "fft_p",
    "CONVENTIONS_VERSION", "FACETS", "FLAGS", "KINDS", "OPTIONAL_FACETS",
    "REGISTRY", "PrimTracer", "register",
]
