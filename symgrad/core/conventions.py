"""The derivative conventions at kinks and singular points, as data.

One :class:`Convention` per row of the table (README, "Conventions at kinks"):
the case, the value symgrad gives and who agrees. The VJP rules in
:mod:`symgrad.prims` implement the rows (each rule's comment names its row),
``tests/test_conventions.py`` checks every row with exact values on both
backends, and :data:`CONVENTIONS_VERSION` is part of every kernel's cache key
(:mod:`symgrad.backend.numba.codegen`), so a changed convention never reuses a kernel
compiled under the old one.

    >>> from symgrad.core.conventions import CONVENTIONS
    >>> CONVENTIONS["relu_kink"].value
    "relu'(0) = 0"
"""

from __future__ import annotations

from dataclasses import dataclass

#: bump when a convention changes (and with it the code a VJP rule generates)
#: 1: abs, sign, maximum/minimum ties, max/min ties, sqrt, pow, where, comparisons
#: 2: where masks the unselected branch's VJPs; relu, clip, xlogy, hypot,
#:    logaddexp/logsumexp, sigmoid/softplus tails; max/min weights forward-recorded
#: 3: cbrt, sinc, remainder/floor_divide, fmax/fmin, nan_to_num, sort ties, cumprod at
#:    zeros, p-norms at 0, the decompositions' triangles and degenerate points (issue 18)
#: 4: std of equal values has gradient 0 (the norm at 0); tails: expm1' = exp,
#:    tanh' = sech**2, scaled hypot and norm gradients, softmax without x - logsumexp
#: 5: xlogy(0, y > 0) has gradient (log y, 0), as PyTorch (was (0, 0)); the derivatives of
#:    logaddexp, logsumexp, log_softmax and tanh are smooth at ties and at 0 (issue 25)
#: 6: xlogy(0, nan) has gradient (nan, nan), as PyTorch and JAX (was (0, 0): a nan input
#:    gave a gradient of 0)
CONVENTIONS_VERSION = 6


@dataclass(frozen=True)
class Convention:
    name: str
    case: str
    value: str
    agrees_with: str


CONVENTIONS: dict[str, Convention] = {c.name: c for c in [
    Convention("abs_kink", "abs'(0)", "0", "PyTorch, SymPy sign(0) (jax #37820 differs)"),
    Convention("sign", "sign'(x)", "0 everywhere", "JAX, PyTorch"),
    Convention("maximum_tie", "maximum/minimum with x == y", "1/2 to each side",
               "PyTorch, SymPy Heaviside(0) = 1/2 (jax #37821 differs)"),
    Convention("extremum_ties", "max/min reduction with k tied extrema", "1/k to each",
               "PyTorch, JAX"),
    Convention("relu_kink", "relu'(0)", "relu'(0) = 0", "PyTorch"),
    Convention("sqrt_zero", "sqrt'(0)", "+inf", "numpy arithmetic"),
    Convention("pow_zero_base", "d(x**y)/dy at x == 0, y >= 0", "0", "PyTorch, JAX"),
    Convention("pow_zero_exponent", "d(x**0)/dx", "0", "PyTorch, JAX"),
    Convention("where_no_leak", "where(c, a, b): the unselected branch",
               "contributes exactly 0, never nan or inf", "none by default (jax #347, "
               "pytorch #23395)"),
    Convention("comparisons", "comparisons, sign, floor, ceil, trunc, rint/round",
               "zero gradient", "JAX, PyTorch"),
    Convention("second_order_kinks", "relu'', abs'', clip'', maximum/minimum'' and max/min "
               "reductions'', also at the kink or tie",
               "0: the first derivatives are piecewise constant, and their rules follow",
               "PyTorch double backward, JAX"),
    Convention("outside_domain", "outside a function's domain (log(-1), sqrt(-1), ...)",
               "nan, as numpy", "numpy"),
    Convention("clip_bounds", "clip(x, lo, hi) at x == lo or x == hi",
               "gradient 1 in x (closed interval); lo/hi get it outside", "PyTorch clamp"),
    Convention("xlogy_zero", "xlogy(0, y)", "0 (nan if y is nan); gradient (log y, 0) where "
               "y > 0 (x log y is smooth there), (0, 0) where y <= 0, (nan, nan) where y is nan",
               "scipy.special.xlogy (value), PyTorch (gradient; its y-derivative at y == 0 "
               "is 0/0)"),
    Convention("hypot_origin", "hypot'(0, 0)", "(0, 0)", "norm at 0 (pytorch #2421)"),
    Convention("norm_zero", "linalg.norm'(0) (2-norm, Frobenius)", "0",
               "the minimum-norm subgradient (pytorch #2421 gives nan)"),
    Convention("std_equal", "std' where all the values are equal (std = norm(x - mean) at 0)",
               "0, as for a norm at 0 (with no degrees of freedom, n - ddof <= 0, the value "
               "is nan and so is the gradient)", "the norm convention (PyTorch and JAX give nan)"),
    Convention("arctan2_origin", "arctan2'(0, 0)", "nan (a singular point)",
               "numpy arithmetic"),
    Convention("logaddexp_tie", "logaddexp(x, y) with x == y (also both -inf)",
               "1/2 to each side", "SymPy"),
    Convention("logsumexp_infinite", "logsumexp of a group whose maximum is infinite",
               "the maximum; 1/k to its k tied entries, 0 to -inf entries",
               "scipy (value)"),
    Convention("stable_tails", "sigmoid(-800), softplus'(800)",
               "0 with gradient 0; exactly 1, not nan", "the limits"),
    # issue 18: numpy's other functions
    Convention("cbrt_zero", "cbrt'(0)", "+inf", "numpy arithmetic, as sqrt'(0)"),
    Convention("sinc_zero", "sinc'(0)", "0 (its derivative; a series near 0)", "the limit"),
    Convention("remainder", "remainder(x, y) = x % y, floor_divide(x, y) = x // y",
               "x % y: 1 in x, -(x // y) in y, jumps ignored; x // y: zero gradient",
               "PyTorch"),
    Convention("fmax_nan", "fmax/fmin with a nan operand; ties",
               "the other operand gets the gradient; ties 1/2 each", "maximum's ties"),
    Convention("nan_to_num", "nan_to_num at nan and +-inf", "replaced entries: gradient 0",
               "a selection"),
    Convention("sort_ties", "sort (and partition) of tied values",
               "each gets the cotangent of the position numpy's stable sort gives it",
               "PyTorch (its permutation), JAX"),
    Convention("cumprod_zeros", "cumprod where x has zeros",
               "exact: the first zero of a prefix gets the product of the others, anything "
               "after a second zero 0", "SymPy (PyTorch too)"),
    Convention("p_norm_zero", "norm(x, p) at x = 0, p > 1", "0 (as the 2-norm's)",
               "pytorch #2421"),
    Convention("triangle_read", "cholesky, eigh (UPLO) of a matrix",
               "gradient on the triangle numpy reads: s_ij + s_ji there, 0 in the other",
               "finite differences; PyTorch's symmetric s along symmetric matrices"),
    Convention("degenerate_spectrum", "eigh/eig/svd vectors where two eigenvalues (singular "
               "values) are equal, or svd of a non-square matrix with a zero singular value",
               "nan (not determined); the values' own gradient stays finite",
               "PyTorch (nan or inf), JAX (inf)"),
    Convention("constant_rank", "pinv, lstsq of a rank-deficient matrix",
               "the derivative at constant rank (Golub-Pereyra)", "PyTorch"),
]}
