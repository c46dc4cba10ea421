"""Cases of the complex primitives (``real``, ``imag``, ``conj``, ``cabs``, ``fft``): real
arguments and real results with complex values in between (``x + 1j * y``), so that every
table over :data:`cases.CASES` (SymPy at 50 digits, both backends, second order) runs them
as it runs the others. On Numba the kernels take the complex values (the elementwise cases
join the table's family kernels) and the FFT runs on numpy between kernels (README,
"Complex numbers"): one FFT case runs on Numba in CI, all three with ``SYMGRAD_FULL=1``
(each is several kernels, a few seconds of compiling). JAX, the oracle of complex inputs
and holomorphic derivatives, is tests/test_complex.py's and tests/test_complex_numba.py's."""

from __future__ import annotations

import os

import numpy as np
import scipy.special

from cases import Case

#: the FFT cases other than fft-ifft-3 (and complex cumprod) on the numpy backend only,
#: unless SYMGRAD_FULL=1
_FFT_BACKENDS = ("numba", "numpy") if os.environ.get("SYMGRAD_FULL") == "1" else ("numpy",)

#: scipy.special's functions of complex values (scipy's complex loops: symgrad/prims/
#: special_functions.py), each of z = x + iy: the real part of f(z) (1 - 2i), so that both
#: parts of the holomorphic derivative count; the points avoid the poles and branch cuts
#: (tests/test_complex_special.py has those, against mpmath)
COMPLEX_SPECIAL = [
    ("gamma", scipy.special.gamma, ((-2.5, 3), (0.2, 1.5))),
    ("digamma", scipy.special.psi, ((-2.5, 3), (0.2, 1.5))),
    ("ndtr", scipy.special.ndtr, ((-3, 3), (-2, 2))),
    ("loggamma", scipy.special.loggamma, ((-2.5, 3), (0.2, 1.5))),
    ("rgamma", scipy.special.rgamma, ((-2.5, 3), (-1.5, 1.5))),
    ("erfi", scipy.special.erfi, ((-2, 2), (-2, 2))),
    ("erfcx", scipy.special.erfcx, ((-2, 4), (-2, 2))),
    ("dawsn", scipy.special.dawsn, ((-3, 3), (-2, 2))),
    ("exp1", scipy.special.exp1, ((-2, 3), (0.2, 2))),
    ("expi", scipy.special.expi, ((-2, 3), (-2, -0.2))),
]

CASES = [
    Case("cabs-3", ("cabs",), lambda x, y: np.abs(x + 1j * y), ((3,), (3,)),
         ((-2, 2), (0.2, 2))),
    Case("real-imag-2x2", ("real", "imag"),
         lambda x, y: np.real((x + 1j * y) ** 2) + np.imag(np.exp(x + 1j * y)),
         ((2, 2), (2, 2)), ((-1, 1), (-1, 1))),
    Case("imag-3", ("imag",), lambda x, y: np.imag(np.exp(x + 1j * y) * (y - 1j)),
         ((3,), (3,)), ((-1, 1), (-1, 1))),
    Case("conj-3", ("conj",), lambda x, y: np.real(np.conj(x + 1j * y) * (x + 2j * y) * 1j),
         ((3,), (3,)), ((-1, 1), (-1, 1))),
    # x + iy of two real values (np.nan_to_num of a complex value: each part on its own)
    Case("complex-3", ("complex",), lambda x, y: np.real(np.nan_to_num(x + 1j * y) ** 2 * (1 - 2j)),
         ((3,), (3,)), ((-1, 1), (-1, 1))),
    # the other shapes of the elementwise parts: 0-d, 2-d, size-1, empty, non-contiguous
    *(Case(f"{name}-shape-{tag}", (name,), fn, (shape, shape), ((-2, 2), (0.2, 2)), layout=layout,
           backends=("numpy",))
      for name, fn in (("cabs", lambda x, y: np.abs(x + 1j * y)),
                       ("real", lambda x, y: np.real((x + 1j * y) * (y - 2j))),
                       ("imag", lambda x, y: np.imag((x + 1j * y) * (y - 2j))),
                       ("conj", lambda x, y: np.imag(np.conj(x + 1j * y) ** 2)),
                       ("complex", lambda x, y: np.imag(np.nan_to_num(x + 1j * y) * (y - 2j))))
      for tag, shape, layout in (("0d", (), "C"), ("2x3-F", (2, 3), "F"), ("1x1", (1, 1), "C"),
                                 ("2x0", (2, 0), "C"), ("3", (3,), "C"))),
    # (on Numba with SYMGRAD_FULL=1: numpy's cumprod of complex zeros is a large kernel,
    # about 10 s to compile; cumprod's real cases run on Numba in CI)
    Case("cumprod-complex-4", ("cumprod",),
         lambda x, y: np.real(np.cumprod(x + 1j * y) * (1.0 - 2.0j)), ((4,), (4,)),
         ((-1.5, 1.5), (0.2, 1)), backends=_FFT_BACKENDS),
    Case("cholesky-hermitian-2x2", ("cholesky",),  # B B^H + 2I: Hermitian, positive definite
         lambda x, y: np.abs(np.linalg.cholesky(
             (x + 1j * y) @ np.conj(x + 1j * y).T + 2.0 * np.eye(2))) ** 2,
         ((2, 2), (2, 2)), ((-1, 1), (-1, 1))),
    Case("fft-rfft-4", ("fft",), lambda x: np.abs(np.fft.rfft(x)) ** 2, ((4,),), ((-1, 1),),
         backends=_FFT_BACKENDS),
    Case("fft-ifft-3", ("fft",),
         lambda x, y: np.real(np.fft.ifft(np.fft.fft(x + 1j * y) * x, norm="ortho")),
         ((3,), (3,)), ((-1, 1), (-1, 1))),
    Case("fft-irfft-2x5", ("fft",), lambda x: np.fft.irfft(np.fft.rfft(x) ** 2, n=5),
         ((2, 5),), ((-1, 1),), backends=_FFT_BACKENDS),
]
CASES += [Case(f"{name}-complex-3", (name,),
               lambda x, y, f=f: np.real(f(x + 1j * y) * (1.0 - 2.0j)), ((3,), (3,)), domains)
          for name, f, domains in COMPLEX_SPECIAL]
