"""Gradients over Dask arrays (symgrad.distributed): the same numbers as in memory, on
Dask's threads, processes and a LocalCluster, in the passes the plan promises; refusals
of what mixes rows; one kernel for chunks of every length; bounded memory out of core.

The oracle is the in-memory gradient of the same function (symgrad's own kernel on the
whole numpy array, itself checked against SymPy and finite differences elsewhere), and
for logistic regression the gradient written out by hand in numpy.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import symgrad as sg  # noqa: E402
from symgrad.backend.numba import compile as kernels  # noqa: E402
from symgrad.distributed import RowSplitError, plan_of  # noqa: E402

from oracle import rng_for  # noqa: E402

#: subprocesses import the symgrad under test (not whichever one is installed)
ENV = {**os.environ, "PYTHONPATH": str(Path(sg.__file__).resolve().parent.parent)}
#: SYMGRAD_FULL=1: the out-of-core run at its full size
FULL = os.environ.get("SYMGRAD_FULL") == "1"
#: numbers compared on the interpreter; the tests of kernels over chunks (threads,
#: processes, a cluster, one kernel for chunks of different lengths) use Numba
B = "interpreter"

RTOL = 1e-10


def assert_same(got, want, what=""):
    """Equal to the in-memory result to RTOL (of the largest component, for components
    that are nearly zero: a gradient's entries cancel to different last bits)."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, what
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * scale, err_msg=what)


# -- the models --------------------------------------------------------------------------


def logistic(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def least_squares(w, X, y):
    return 0.5 * np.sum((X @ w - y) ** 2)


def poisson(w, X, y):
    z = X @ w
    return np.mean(np.exp(z) - y * z)


def softmax(W, b, X, Y):
    z = X @ W + b
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def centered(w, X, y):
    """A loss that subtracts the mean over rows: the mean needs a pass of its own."""
    r = X @ w - y
    return np.mean((r - np.mean(r)) ** 2)


def centered_by_hand(w, X, y):
    """``centered``'s value and gradient written out: with ``c = r - mean(r)`` the value
    is ``mean(c ** 2)`` and the gradient ``2 X.T c / n`` (``c`` sums to zero, so the
    mean's own share of the gradient vanishes)."""
    c = X @ w - y
    c = c - np.mean(c)
    return np.mean(c ** 2), 2.0 * (X.T @ c) / len(y)


def log_mean_exp(w, X, y):
    return np.log(np.mean(np.exp(X @ w - y)))


def standardized(w, X, y):
    """Columns centred and scaled by statistics over all rows: three passes."""
    m = np.mean(X, axis=0)
    s = np.sqrt(np.mean((X - m) ** 2, axis=0))
    return np.mean(np.tanh(((X - m) / s) @ w - y) ** 2)


def data(name, n=1000, d=6, chunks=(300, 6), labels="binary"):
    rng = rng_for(name)
    X = rng.normal(size=(n, d))
    z = X @ rng.normal(size=d)
    y = {"binary": (z + rng.normal(size=n) > 0) * 1.0,
         "counts": rng.poisson(np.exp(0.3 * z)) * 1.0,
         "real": z + 0.1 * rng.normal(size=n)}[labels]
    w = 0.1 * rng.normal(size=d)
    Xd = da.from_array(X, chunks=chunks)
    yd = da.from_array(y, chunks=(chunks[0] if isinstance(chunks[0], int) else chunks[0],))
    return w, X, y, Xd, yd


MODELS = [  # (loss, labels, passes over the data for the gradient)
    (logistic, "binary", 1),
    (least_squares, "real", 1),
    (poisson, "counts", 1),
    (log_mean_exp, "real", 1),  # the 1 / mean cotangent pulled out of X.T @ g
    (centered, "real", 2),      # pass 1: the mean; pass 2: the gradient
    (standardized, "real", 3),  # means; standard deviations; the gradient
]


@pytest.mark.parametrize("loss, labels, passes", MODELS, ids=lambda m: getattr(m, "__name__", ""))
def test_gradient_over_dask_equals_in_memory_gradient(loss, labels, passes):
    w, X, y, Xd, yd = data(loss.__name__, labels=labels)
    g = sg.grad(loss, backend=B)
    assert_same(g(w, Xd, yd), g(w, X, y), loss.__name__)
    assert len(plan_of(g, w, Xd, yd).passes) == passes


def test_logistic_gradient_equals_the_handwritten_formula():
    w, X, y, Xd, yd = data("handwritten", n=3000, chunks=(700, 6))
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    assert_same(sg.grad(logistic)(w, Xd, yd), X.T @ (p - y) / len(y))


def test_softmax_classifier_with_several_parameter_arrays():
    rng = rng_for("softmax")
    n, d, k = 900, 5, 4
    X = rng.normal(size=(n, d))
    Y = np.eye(k)[rng.integers(0, k, n)]
    W, b = 0.1 * rng.normal(size=(d, k)), 0.1 * rng.normal(size=k)
    Xd = da.from_array(X, chunks=((200, 350, 350), (2, 3)))  # columns chunked too
    Yd = da.from_array(Y, chunks=(128, k))                   # other row chunks: rechunked
    step = sg.value_and_grad(softmax, argnums=(0, 1), backend=B)
    (v, (gW, gb)), (v0, (gW0, gb0)) = step(W, b, Xd, Yd), step(W, b, X, Y)
    assert_same(v, v0)
    assert_same(gW, gW0)
    assert_same(gb, gb0)
    assert len(plan_of(step, W, b, Xd, Yd).passes) == 1


@pytest.mark.parametrize("chunks", [((1, 99, 400, 333, 167),), ((0, 500, 0, 500),), ((1000,),)],
                         ids=["unequal", "empty chunks", "one chunk"])
def test_unequal_chunks(chunks):
    w, X, y, _, _ = data("unequal")
    Xd = da.from_array(X, chunks=(chunks[0], (6,)))
    yd = da.from_array(y, chunks=chunks)
    for loss in (logistic, centered):
        g = sg.value_and_grad(loss, backend=B)
        (v, gw), (v0, gw0) = g(w, Xd, yd), g(w, X, y)
        assert_same(v, v0)
        assert_same(gw, gw0)


def test_chunks_of_different_lengths_compile_one_kernel():
    def loss(w, X, y):  # a structure of its own: a kernel no other test compiles
        z = X @ w + 0.125
        return np.mean(np.logaddexp(0.0, z) - y * z)

    w, X, y, _, _ = data("one kernel", n=1200)
    before = kernels.compile_stats()
    g = sg.grad(loss)
    for lengths in [(100, 250, 333, 517), (1200,), (7, 993, 200), (600, 600)]:
        Xd = da.from_array(X, chunks=(lengths, (6,)))
        assert_same(g(w, Xd, da.from_array(y, chunks=(lengths,))), g(w, X, y))
    after = kernels.compile_stats()
    # one chunk kernel for 10 chunk lengths, one kernel of the whole in-memory graph
    assert after["kernels"] - before["kernels"] == 2
    signatures = (after["compiled"] + after["loaded_from_disk"]
                  - before["compiled"] - before["loaded_from_disk"])
    assert signatures == 2


def test_gradient_with_respect_to_the_data_is_a_dask_array_with_its_chunks():
    w, X, y, Xd, yd = data("wrt data", chunks=(250, 6))
    g = sg.grad(least_squares, argnums=(0, 1))
    (gw, gX), (gw0, gX0) = g(w, Xd, yd), g(w, X, y)
    assert isinstance(gX, da.Array) and gX.chunks == Xd.chunks
    assert_same(gw, gw0)
    assert_same(gX.compute(), gX0)


def test_a_gradient_in_the_data_made_from_parameters_only():
    """The gradient of mean(X * w) in X is w / X.size on every row: a pass whose chunk
    graph reads no data (it raised dask's ValueError('Unknown dimension'))."""
    w, X, y, Xd, yd = data("wrt data, parameters only", chunks=((0, 400, 600), 6))
    for compute in (True, False):
        gX = sg.grad(lambda w, X: 3.0 * np.mean(X * w), argnums=1, backend=B)(
            w, Xd, compute=compute)
        assert isinstance(gX, da.Array) and gX.chunks == Xd.chunks
        assert_same(gX.compute(), np.broadcast_to(3.0 * w / X.size, X.shape))
    gw, gX = sg.grad(lambda w, X: np.sum(X * w, axis=(0, 1)) ** 2, argnums=(0, 1),
                     backend=B)(w, Xd)
    s = np.sum(X @ w)
    assert_same(gw, 2 * s * X.sum(axis=0))
    assert_same(gX.compute(), np.broadcast_to(2 * s * w, X.shape))


def test_value_and_grad_and_jit():
    w, X, y, Xd, yd = data("jit")
    v, gw = sg.value_and_grad(logistic, backend=B)(w, Xd, yd)
    assert isinstance(v, np.float64) and isinstance(gw, np.ndarray)
    assert_same(v, logistic(w, X, y))
    assert_same(sg.jit(logistic, backend=B)(w, Xd, yd), logistic(w, X, y))
    # a row-wise result stays a Dask array with the data's chunks (never gathered)
    z = sg.jit(lambda w, X: np.tanh(X @ w), backend=B)(w, Xd)
    assert isinstance(z, da.Array) and z.chunks == (Xd.chunks[0],)
    assert_same(z.compute(), np.tanh(X @ w))
    centred = sg.jit(lambda X: X - np.mean(X, axis=0), backend=B)(Xd)
    assert_same(centred.compute(), X - X.mean(axis=0))
    # maxima and minima over rows split in a forward pass
    assert_same(sg.jit(lambda X: np.max(X, axis=0) - np.min(X, axis=0), backend=B)(Xd),
                X.max(axis=0) - X.min(axis=0))


def test_compute_false_returns_lazy_dask_objects():
    w, X, y, Xd, yd = data("lazy")
    for loss in (logistic, centered):  # one pass; two passes chained in one graph
        v, gw = sg.value_and_grad(loss)(w, Xd, yd, compute=False)
        assert isinstance(v, da.Array) and isinstance(gw, da.Array)
        (v, gw), (v0, gw0) = dask.compute(v, gw), sg.value_and_grad(loss)(w, X, y)
        assert_same(v, v0)
        assert_same(gw, gw0)


def test_a_dask_cotangent_for_a_row_wise_output():
    w, X, _, Xd, _ = data("seeded")
    ct = rng_for("ct").normal(size=len(X))
    g = sg.grad(lambda w, X: np.tanh(X @ w), backend=B)
    assert_same(g(w, Xd, gradient=da.from_array(ct, chunks=180)), g(w, X, gradient=ct))


def test_pytree_arguments_and_aux():
    """Parameters in a dict, data in a tuple, aux with a row-wise value: the flat
    function's plan, and the results regrouped (on the interpreter: no compile)."""
    w, X, y, Xd, yd = data("pytrees", n=300, chunks=(70, 6))

    def loss(p, data):
        X, y = data
        r = X @ p["w"] + p["b"] - y
        return np.mean(r ** 2), {"largest": np.max(r), "residual": r}

    p = {"w": w, "b": np.float64(0.5)}
    f = sg.value_and_grad(loss, has_aux=True, backend="numpy")
    ((v, aux), g), ((v0, aux0), g0) = f(p, (Xd, yd)), f(p, (X, y))
    assert_same(v, v0)
    assert_same(aux["largest"], aux0["largest"])
    assert isinstance(aux["residual"], da.Array) and aux["residual"].chunks == (Xd.chunks[0],)
    assert_same(aux["residual"].compute(), aux0["residual"])
    assert set(g) == {"w", "b"}
    assert_same(g["w"], g0["w"])
    assert_same(g["b"], g0["b"])
    assert len(plan_of(f, p, (Xd, yd)).passes) == 1


def test_a_matrix_per_row_splits():
    """inv, det and solve over a stack of matrices, one per row: the rows are a batch axis."""
    rng = rng_for("matrices")
    A = rng.normal(size=(100, 3, 3)) + 3.0 * np.eye(3)
    Ad = da.from_array(A, chunks=(30, 3, 3))
    b = rng.normal(size=3)

    def f(s, A):
        B = A + s * np.eye(3)
        return np.mean(np.log(np.abs(np.linalg.det(B)))) + np.sum(np.linalg.solve(B, b))

    g = sg.value_and_grad(f, backend="numpy")
    (v, gs), (v0, gs0) = g(np.float64(0.5), Ad), g(np.float64(0.5), A)
    assert_same(v, v0)
    assert_same(gs, gs0)
    assert_same(sg.jit(np.linalg.inv, backend="numpy")(Ad).compute(), np.linalg.inv(A))


PARAMETER_WORK = [  # (loss of w, X and an int n, passes): loops and decompositions
    # that read only parameters run on the driver; cholesky over a stack, one per row
    (lambda w, X, n: np.sum(np.tanh(X @ sg.fori_loop(0, n, lambda i, v: v * np.cos(v), w))), 1),
    (lambda w, X, n: np.mean(X @ w) * np.linalg.eigh(np.outer(w, w) + n * np.eye(6))[0][-1], 1),
    (lambda w, X, n: np.sum(np.linalg.cholesky(
        n * np.eye(2) + ((X @ w) ** 2)[:, None, None] * np.ones((2, 2)))), 1),
]


@pytest.mark.parametrize("loss, passes", PARAMETER_WORK)
def test_loops_and_decompositions_of_parameters_split(loss, passes):
    """A trip count n (an int, traced as an integer as in memory) and the new primitives:
    the same gradient as in memory, for two values of n (one plan: n is an argument). On
    the interpreter, in memory and per chunk: the plan is the subject (compiling eigh's
    adjoint takes a minute; chunk kernels are compiled by the other tests)."""
    w, X, _, Xd, _ = data("parameter work", n=200, chunks=(70, 6))
    g = sg.grad(loss, backend="numpy")
    for n in (2, 3):
        assert_same(g(w, Xd, n), g(w, X, n))
    assert len(plan_of(g, w, Xd, 3).passes) == passes


def test_backend_numpy_runs_the_interpreter_per_chunk():
    w, X, y, Xd, yd = data("interpreter")
    g = sg.grad(centered, backend="numpy")
    assert_same(g(w, Xd, yd), sg.grad(centered)(w, X, y))


def test_threaded_scheduler():
    w, X, y, Xd, yd = data("threads", n=20_000, chunks=(3000, 6))
    with dask.config.set(scheduler="threads", num_workers=2):
        assert_same(sg.grad(poisson)(w, Xd, yd), sg.grad(poisson)(w, X, y))


# The two tests below run the same two chunk kernels (value_and_grad of centered: two
# passes; a kernel does not depend on the number of rows), so whichever runs second loads
# them from the disk cache; their oracle is the formula, not an in-memory kernel.


def test_processes_scheduler():
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    w, X, y, Xd, yd = data("processes", n=5000, chunks=(1300, 6))
    g = sg.value_and_grad(centered)  # two passes, each in the worker processes
    # one pool for both passes (by default Dask starts processes at every compute)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool, \
            dask.config.set(scheduler="processes", pool=pool):
        v, gw = g(w, Xd, yd)
    v0, gw0 = centered_by_hand(w, X, y)
    assert_same(v, v0)
    assert_same(gw, gw0)


@pytest.fixture
def environ_restored():
    """os.environ as it was before the test: distributed's Nanny sets its workers'
    variables in the spawning process's own environment and leaves them there
    (``os.environ.update(pre_spawn_env)``: MALLOC_TRIM_THRESHOLD_=65536,
    OMP/MKL/OPENBLAS_NUM_THREADS=1, PYTHONHASHSEED), so every later subprocess of this
    pytest worker inherited them (test_memory's child ran with glibc's dynamic
    thresholds off)."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_local_cluster_with_two_worker_processes_loads_kernels_from_disk(environ_restored):
    distributed = pytest.importorskip("dask.distributed")
    w, X, y, Xd, yd = data("cluster", n=6000, chunks=(1000, 6))
    v0, gw0 = centered_by_hand(w, X, y)
    g = sg.value_and_grad(centered)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        v, gw = g(w, Xd, yd)
        assert_same(v, v0)
        assert_same(gw, gw0)
        v, gw = dask.compute(*g(w, Xd, yd, compute=False))  # driver steps run on workers
        assert_same(v, v0)
        assert_same(gw, gw0)
        stats = client.run(kernels.compile_stats)
    assert len(stats) == 2
    for worker in stats.values():  # the driver compiled; workers only loaded machine code
        assert worker["kernels"] >= 1 and worker["compiled"] == 0, stats


def test_chunk_programs_pickle_to_a_working_program():
    from symgrad.distributed import _cache_of

    w, X, y, Xd, yd = data("pickle")
    g = sg.grad(logistic, backend="numpy")
    g(w, Xd, yd)
    (prepared,) = _cache_of(g.signature).values()
    program = prepared.programs[0]
    clone = pickle.loads(pickle.dumps(program))
    inputs = prepared.plan.passes[0].graph.inputs
    args = [X[:50] if v.hint == "X" else y[:50] if v.hint == "y" else w if v.hint == "w"
            else -1 / len(y) for v in inputs]
    a, b = program(*args)[0], clone(*args)[0]
    assert_same(a[0]["sum"], b[0]["sum"])


# -- refusals --------------------------------------------------------------------------------


REFUSED = [  # (function of w and X, what the message names)
    (lambda w, X: np.sum(np.cumsum(X @ w) ** 2), "cumsum"),
    (lambda w, X: np.sum((X[1:] - X[:-1]) @ w), "slice along the rows"),
    (lambda w, X: np.sum(np.diff(X @ w) ** 2), "slice along the rows"),
    (lambda w, X: np.sum(np.roll(X @ w, 1) * (X @ w)), "slice along the rows"),
    (lambda w, X: X[0] @ w, "slice along the rows"),
    (lambda w, X: np.sum(X[[0, 5, 5]] @ w), "indexing rows"),
    (lambda w, X: np.sum(np.concatenate([X, X]) @ w), "concatenating along the rows"),
    (lambda w, X: np.sum(X.ravel()) * w[0], "reshape that merges the rows"),
    (lambda w, X: np.max(X @ w), "max or min over the rows"),
    (lambda w, X: np.sum(np.sort(X @ w) * np.cos(X @ w)), "sort along the rows"),
    # np.cumprod counts zeros with a cumulative sum, refused first
    (lambda w, X: np.sum(np.cumprod(np.cos(X @ w))), "cumulative sum along the rows"),
    (lambda w, X: np.sum(sg.fori_loop(0, 3, lambda i, v: v * np.cos(v), X @ w)),
     "does not look inside a loop"),
    (lambda w, X: np.sum(np.linalg.eigh(np.eye(2) + (X @ w)[:, None, None] * np.ones((2, 2)))[0]),
     "decomposition of a stack"),
]


@pytest.mark.parametrize("fn, named", REFUSED, ids=lambda x: x if isinstance(x, str) else "")
def test_operations_that_mix_rows_are_refused_with_the_operation_named(fn, named):
    w, _, _, Xd, _ = data("refused", n=100, chunks=(30, 6))
    with pytest.raises(RowSplitError, match=named):
        sg.grad(fn)(w, Xd)


def test_a_product_of_rows_with_rows_is_refused_in_jit():
    _, _, _, Xd, _ = data("gram", n=100, chunks=(30, 6))
    with pytest.raises(RowSplitError, match=r"pairs rows with other rows \(X @ X.T\)"):
        sg.jit(lambda X: np.sum(X @ X.T))(Xd)


def test_a_sort_within_each_row_splits():
    """np.sort over the last axis of an (n, k) value sorts each row on its own: row-wise,
    one pass, and the same gradient as in memory (on the interpreter: the plan is the
    subject)."""
    w, X, _, Xd, _ = data("sort rows", n=100, chunks=(30, 6))
    f = lambda w, X: np.sum(np.sort(X * w, axis=1)[:, -2:] ** 2)  # noqa: E731
    g = sg.grad(f, backend="numpy")
    assert_same(g(w, Xd), g(w, X))
    assert len(plan_of(g, w, Xd).passes) == 1


def test_a_numpy_array_with_one_entry_per_row_is_refused():
    w, X, y, Xd, _ = data("numpy rows", n=100, chunks=(30, 6))
    with pytest.raises(RowSplitError, match="numpy array of one entry per row"):
        sg.grad(least_squares)(w, Xd, y)


def test_no_dask_array_is_computed_behind_the_users_back():
    w, _, _, Xd, _ = data("captured", n=100, chunks=(30, 6))
    other = da.ones(3)
    with pytest.raises(TypeError, match="reads a Dask array that is not one of its arguments"):
        sg.grad(lambda w, X: np.sum(X @ w) + np.sum(np.asarray(other)))(w, Xd)


def test_dask_arguments_with_different_numbers_of_rows_are_refused():
    w, _, _, Xd, _ = data("rows", n=100, chunks=(30, 6))
    with pytest.raises(ValueError, match="different numbers of rows"):
        sg.grad(least_squares)(w, Xd, da.ones(99, chunks=30))


def test_a_function_that_branches_on_the_number_of_rows_is_refused():
    w, _, y, Xd, yd = data("branch", n=100, chunks=(30, 6))

    def loss(w, X, y):
        return least_squares(w, X, y) if X.shape[0] < 150 else logistic(w, X, y)

    with pytest.raises(RowSplitError, match="must not branch on the number of rows"):
        sg.grad(loss)(w, Xd, yd)


# -- out of core ----------------------------------------------------------------------------


LOSS = textwrap.dedent('''
    def loss(w, X, y):
        z = X @ w
        return np.mean(np.logaddexp(0.0, z) - y * z)
''')

RUN = textwrap.dedent('''
    """One gradient over memory-mapped files read chunk by chunk; prints the driver's peak
    RSS in MB before the run (after imports and loading the kernel) and after it, and the
    kernel signatures it compiled."""
    import resource, sys
    import dask, dask.array as da, numpy as np
    import symgrad as sg
    from symgrad.backend.numba import compile as kernels

    class MemmapRows:
        """A float64 file, memory-mapped afresh for each chunk Dask reads (no mapping
        outlives its chunk, so no page of the file stays resident). Not a np.memmap itself:
        da.from_array copies an array-like that has .copy(), i.e. reads all of it."""

        def __init__(self, path, shape):
            self.path, self.shape, self.ndim = path, shape, len(shape)
            self.dtype = np.dtype(np.float64)

        def __getitem__(self, index):
            mm = np.memmap(self.path, dtype=self.dtype, mode="r", shape=self.shape)
            return np.array(mm[index])

    LOSS

    x_path, y_path, n, d, chunk = sys.argv[1:3] + [int(a) for a in sys.argv[3:]]
    X = da.from_array(MemmapRows(x_path, (n, d)), chunks=(chunk, d))
    y = da.from_array(MemmapRows(y_path, (n,)), chunks=chunk)
    g = sg.value_and_grad(loss)
    w = np.zeros(d)
    g(w, X[:10], y[:10])  # loads the kernel
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with dask.config.set(scheduler="threads", num_workers=2):
        value, grad = g(w, X, y)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(before, after, kernels.compile_stats()["compiled"], value, *grad)
''').replace("LOSS", LOSS)


def test_out_of_core_run_keeps_the_drivers_peak_memory_bounded(tmp_path):
    # X: 230 MB in 48 chunks of 5 MB (SYMGRAD_FULL=1: 800 MB in 40 chunks of 20 MB)
    n, d, chunk = (4_000_000, 25, 100_000) if FULL else (1_200_000, 25, 25_000)
    rng = rng_for("out of core")
    w_true = rng.normal(size=d)
    X = np.memmap(tmp_path / "X.f64", dtype=np.float64, mode="w+", shape=(n, d))
    y = np.memmap(tmp_path / "y.f64", dtype=np.float64, mode="w+", shape=(n,))
    sums, scale = np.zeros(d), 1.0 / n
    for start in range(0, n, 500_000):
        block = X[start:start + 500_000]
        rng.random(out=block)  # uniform numbers are several times faster to draw than normal
        block -= 0.5
        labels = (block @ w_true > 0) * 1.0
        y[start:start + 500_000] = labels
        sums += block.T @ (0.5 - labels) * scale  # the gradient at w = 0, in memory by parts
    X.flush()
    y.flush()
    del X, y, block
    script = tmp_path / "run.py"
    script.write_text(RUN)
    # compile the chunk kernel into the disk cache here (the run inherits the cache dir),
    # so that the measured run only loads it: the same function, the same number of columns
    namespace = {"np": np}
    exec(LOSS, namespace)
    small = np.zeros((600, d))
    sg.value_and_grad(namespace["loss"])(np.zeros(d), da.from_array(small, chunks=(300, d)),
                                         da.from_array(small[:, 0], chunks=300))

    def run(*sizes):
        # Through a small launcher: Linux carries a process's peak RSS over fork and exec,
        # so a child of this (large) test process would report at least our own size.
        # The launcher's child starts from the launcher's few megabytes.
        launcher = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"
        out = subprocess.run([sys.executable, "-c", launcher, sys.executable, str(script),
                              str(tmp_path / "X.f64"), str(tmp_path / "y.f64"),
                              *map(str, sizes)],
                             capture_output=True, text=True, timeout=300, env=ENV)
        assert out.returncode == 0, out.stderr
        return [float(x) for x in out.stdout.split()]

    before, after, compiled, value, *grad = run(n, d, chunk)
    size_mb = (n * d * 8) / 2**20
    print(f"out of core: {size_mb:.0f} MB of X in chunks of {chunk * d * 8 / 2**20:.0f} MB; "
          f"driver peak RSS {before:.0f} MB before the run, {after:.0f} MB after it")
    assert compiled == 0  # loaded from the disk cache: no compiler in the peak
    assert value == pytest.approx(np.log(2.0))
    assert_same(grad, sums)
    if FULL:  # the whole run, imports included, below half of X
        assert after < size_mb / 2, (before, after, size_mb)
    assert after - before < size_mb / 5, (before, after, size_mb)
    (Path(tmp_path) / "X.f64").unlink()


# -- the example, and what importing symgrad costs ----------------------------------------


def test_example_fits_a_logistic_regression_with_lbfgs():
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "examples" / "dask_logistic_regression.py"
    spec = importlib.util.spec_from_file_location("example_dask_logistic_regression", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    result = example.main(n=30_000, d=5, chunk=7_000, verbose=False)  # asserts its own fit
    assert result["checked_in_memory"] and result["grad_norm"] < 1e-6
    assert result["cosine"] > 0.99


def test_importing_symgrad_does_not_import_dask():
    code = "import sys, symgrad; print(sorted(m for m in sys.modules if m.startswith('dask')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=ENV)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
