"""Numba lowering of :mod:`symgrad.prims.windows`."""

from __future__ import annotations

from ....prims import windows as P
from ..scope import dtype_arg
from .table import lower


def _dtype(aval) -> str:
    """The result's dtype, as source (none for float64): a float32 graph's windows and
    sums stay float32, as the interpreter's do."""
    return dtype_arg(aval.dtype)


def _dims(x: str, ndim: int, d: int) -> tuple[str, list[str]]:
    """The product of the leading dims of ``x`` and its last ``d`` sizes, as source."""
    lead = " * ".join(f"{x}.shape[{k}]" for k in range(ndim - d)) or "1"
    return lead, [f"{x}.shape[{ndim - d + k}]" for k in range(d)]


def _loops(names: list[str], bounds: list[str]) -> tuple[list[str], str]:
    lines = [("    " * k) + f"for {n} in range({b}):" for k, (n, b) in enumerate(zip(names,
                                                                                  bounds))]
    return lines, "    " * len(names)


def _windows_emit(out, args, avals, out_aval, *, kernel, stride, dilation) -> list[str]:
    (x,), (aval,) = args, avals
    d = len(kernel)
    lead, size = _dims(x, aval.ndim, d)
    outs = [f"({n} - {dil * (k - 1) + 1}) // {s} + 1"
            for n, k, s, dil in zip(size, kernel, stride, dilation)]
    o = [f"{out}_o{k}" for k in range(d)]
    w = [f"{out}_k{k}" for k in range(d)]
    lines = [f"{out}_x = np.ascontiguousarray({x}).reshape(({lead}, {', '.join(size)}))",
             *(f"{name} = {expr}" for name, expr in zip([f"{out}_n{k}" for k in range(d)],
                                                          outs)),
             f"{out}_r = np.empty(({lead}, {', '.join(f'{out}_n{k}' for k in range(d))}, "
             f"{', '.join(map(str, kernel))}){_dtype(out_aval)})"]
    loops, pad = _loops([f"{out}_b", *o, *w],
                        [lead, *(f"{out}_n{k}" for k in range(d)), *map(str, kernel)])
    source = ", ".join(f"{o[k]} * {stride[k]} + {w[k]} * {dilation[k]}" for k in range(d))
    lines += loops + [f"{pad}{out}_r[{out}_b, {', '.join(o + w)}] = {out}_x[{out}_b, {source}]"]
    shape = [f"{x}.shape[{k}]" for k in range(aval.ndim - d)]
    full = ", ".join([*shape, *(f"{out}_n{k}" for k in range(d)), *map(str, kernel)])
    lines.append(f"{out} = {out}_r.reshape(({full},))")
    return lines


def _unwindows_emit(out, args, avals, out_aval, *, kernel, stride, dilation, size
                    ) -> list[str]:
    (g,), (aval,) = args, avals
    d = len(kernel)
    lead = aval.ndim - 2 * d
    b = [f"{out}_b{k}" for k in range(lead)]
    o = [f"{out}_o{k}" for k in range(d)]
    w = [f"{out}_k{k}" for k in range(d)]
    shape = [f"{g}.shape[{k}]" for k in range(lead)]
    lines = [f"{out} = np.zeros(({', '.join([*shape, *map(str, size)])},){_dtype(out_aval)})"]
    # g as it is (a convolution's gradient comes transposed from its matrix product: no
    # copy of it); its leading indices outermost, so that each window block is read
    # while it is in cache, then the windows, each read whole (its elements are
    # adjacent): 1.6-3x faster than the kernel offsets outside the windows for LeNet's
    # second convolution. The windows run backwards, so that each element's terms
    # still add up with the kernel offsets in order (a later window reaches an element
    # from an earlier offset), as the interpreter adds them: the same bits
    sliced = lead == 1 and kernel[-1] >= SLICED_RUN
    loops, pad = _loops([*b, *o, *w[:d - sliced]],
                        [*shape, *(f"{g}.shape[{lead + k}] - 1, -1, -1" for k in range(d)),
                         *map(str, kernel[:d - sliced])])
    target = [*b, *(f"{o[k]} * {stride[k]} + {w[k]} * {dilation[k]}" for k in range(d))]
    if not sliced:
        lines += loops + [f"{pad}{out}[{', '.join(target)}] += {g}[{', '.join(b + o + w)}]"]
        return lines
    # a convolution's windows over its channels too, (N, 1, *out, C, *kernel): a window's
    # rows along the last axis added through views that start where they do (indices
    # never negative, with no test of numpy's negative indices per element), in the
    # same order: 0.49 -> 0.35 ms for LeNet's second convolution; slower for poolings'
    # windows (two leading axes) and rows of two elements, which keep the loop above
    target[-1] = f"{o[-1]} * {stride[-1]}:"
    lines += loops + [f"{pad}{out}_t = {out}[{', '.join(target)}]",
                      f"{pad}{out}_g = {g}[{', '.join(b + o + w[:-1])}]",
                      f"{pad}for {w[-1]} in range({kernel[-1]}):",
                      f"{pad}    {out}_t[{w[-1]} * {dilation[-1]}] += {out}_g[{w[-1]}]"]
    return lines


#: unwindows adds rows of at least this many elements through views (see above)
SLICED_RUN = 3


lower(P.windows_p, _windows_emit)
lower(P.unwindows_p, _unwindows_emit)
