"""Op table records (tests/optable.py) of ``torch.special`` (symgrad/eager/special.py):
aliases of Tensor methods and the special-function primitives, against torch.special."""

from __future__ import annotations

from optable import FLOAT, add
from optable_elementwise import TRIGAMMA_RTOL

_PROB = ("expit", "logit", "erf", "erfc", "erfinv", "ndtr", "log_ndtr", "sinc", "round",
         "entr", "log1p", "expm1", "exp2")
add("special on (0, 1)", lambda L, x: tuple(getattr(L.special, n)(x) for n in _PROB)
    + (L.special.logit(x, eps=0.2), L.special.round(x * 10, decimals=1),
       L.special.log_ndtr(x * 40 - 45)),
    samples=(((3, 4),),), domain="prob", covers=tuple(f"special.{n}" for n in _PROB),
    full_only=("gradgrad",))  # (the aliases' in CI with their methods; the new ones below)
add("special of integers", lambda L, x: tuple(getattr(L.special, n)(x) for n in _PROB if
                                              n != "round") + (L.special.multigammaln(x + 2, 2),),
    domain="positive", dtypes=("int64", "uint8"), grad=False, covers=())
_POSITIVE = ("gammaln", "digamma", "psi", "i0", "i0e", "i1", "i1e")
add("special gamma and bessel", lambda L, x: tuple(getattr(L.special, n)(x) for n in _POSITIVE)
    + (L.special.i0e(-x), L.special.i1(-x), L.special.i1e(x * 30), L.special.polygamma(2, x),
       L.special.multigammaln(x + 1, 2), L.special.ndtr(x - 1), L.special.log_ndtr(-20 * x),
       L.special.entr(x)),
    samples=(((3, 4),),), domain="positive", dtypes=FLOAT + ("int32",), rtol=TRIGAMMA_RTOL,
    covers=tuple(f"special.{n}" for n in (*_POSITIVE, "polygamma", "multigammaln")))
add("special binary", lambda L, a, x: (L.special.xlogy(x, a), L.special.xlog1py(x, a),
                                       L.special.xlogy(x * 0, a), L.special.xlog1py(x * 0, a),
                                       L.special.gammainc(a.detach(), x),
                                       L.special.gammaincc(a.detach(), x)),
    samples=(((3, 4), (3, 4)), ((3, 1), (4,))), domain=("positive", "prob"),
    covers=("special.xlogy", "special.xlog1py", "special.gammainc",
                                       "special.gammaincc"))
add("special softmax", lambda L, x: (L.special.logsumexp(x, 1), L.special.logsumexp(x, (0, 1),
                                                                                    True),
                                     L.special.softmax(x, 0), L.special.log_softmax(x, -1),
                                     L.special.softmax(x, 1, dtype=L.float32)),
    samples=(((3, 4),),), covers=("special.logsumexp", "special.softmax", "special.log_softmax"))
