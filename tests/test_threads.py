"""Parallel kernels (symgrad/backend/numba/threads.py): large loops as a prange over fixed chunks.

Oracles: the numpy interpreter (the same adjoint, computed by numpy) and the
serial kernel; determinism: the same bits at 1 and at 2 threads. The threshold
is lowered with ``SYMGRAD_PARALLEL_MIN`` so that small arrays take the parallel
path (the kernels compile fast enough for CI).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import symgrad as sg
from symgrad.backend.numba import threads


def broadcast(A, u, v):  # sums over both axes: one owned by the chunks, one combined
    return np.mean(np.tanh(A * u[:, None] + v) ** 2)


def sinexp(x):  # a scalar sum over the chunked axis, and sin's range check
    return np.sum(np.sin(x) * np.exp(-x * x))


def rowsums(A, u):  # the gradient in u sums over the inner axis only
    return np.sum(np.tanh(A * u[:, None]) ** 2)


@pytest.fixture
def low_threshold(monkeypatch):
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "256")


def _args(rng):
    return rng.standard_normal((40, 30)), rng.uniform(0.5, 1.5, 40), rng.uniform(-1, 1, 30)


def test_parallel_kernels_agree_with_numpy_and_do_not_depend_on_the_thread_count(low_threshold):
    rng = np.random.default_rng(0)
    A, u, v = _args(rng)
    g = sg.value_and_grad(broadcast, argnums=(1, 2))
    source = g.source(A, u, v)
    assert "prange(" in source and "parallel={" in source
    want = sg.value_and_grad(broadcast, argnums=(1, 2), backend="numpy")(A, u, v)
    runs = []
    for k in (1, min(2, sg.max_threads())):
        sg.set_num_threads(k)
        runs.append(g(A, u, v))
    sg.set_num_threads(None)
    value, (du, dv) = runs[0]
    np.testing.assert_allclose(value, want[0], rtol=1e-13)
    np.testing.assert_allclose(du, want[1][0], rtol=1e-12, atol=1e-18)
    np.testing.assert_allclose(dv, want[1][1], rtol=1e-12, atol=1e-18)
    assert runs[0][0] == runs[1][0]  # the same bits
    for a, b in zip(runs[0][1], runs[1][1]):
        assert np.array_equal(a, b)


def test_a_scalar_sum_and_the_libm_rerun_in_a_parallel_loop(low_threshold):
    x = np.linspace(-2.5, 3, 1001)  # not symmetric: the sum is not 0 (relative errors)
    g = sg.value_and_grad(sinexp)
    assert "prange(" in g.source(x)
    value, grad = g(x)
    want_value, want_grad = sg.value_and_grad(sinexp, backend="numpy")(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-13)  # a sum of ±terms
    np.testing.assert_allclose(grad, want_grad, rtol=1e-13, atol=1e-16)
    big = x.copy()
    big[500] = 1e7  # beyond vecmath's range for sin: the loop runs again with libm
    value, grad = g(big)
    want_value, want_grad = sg.value_and_grad(sinexp, backend="numpy")(big)
    np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-13)  # a sum of ±terms
    np.testing.assert_allclose(grad, want_grad, rtol=1e-13, atol=1e-16)


def test_small_loops_stay_serial_and_the_two_kernels_are_cached_apart(monkeypatch):
    x = np.linspace(-1, 1, 300)
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "off")
    serial = sg.grad(sinexp).source(x)
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "100")
    parallel = sg.grad(sinexp).source(x)
    assert "prange" not in serial and "prange(" in parallel
    assert serial.split("\n", 1)[0] != parallel.split("\n", 1)[0]  # different keys
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "1000")
    assert "prange" not in sg.grad(sinexp).source(x)  # 300 elements: under the threshold


def test_the_threshold_setting_is_checked(monkeypatch):
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "lots")
    with pytest.raises(ValueError, match="SYMGRAD_PARALLEL_MIN"):
        threads.parallel_min()
    monkeypatch.delenv("SYMGRAD_PARALLEL_MIN")
    assert threads.parallel_min() == threads.PARALLEL_MIN


def stats(x):  # three outputs of one kernel: mean is a whole-array call, var/std fused sums
    return np.mean(x), np.var(x), np.std(x)


def std_and_softmax(x):  # std's gradient reads np.mean(x); a softmax's sums and max
    e = np.exp(x - np.max(x))
    return np.std(x) + np.sum(e / np.sum(e) * x)


def _same_bits_at_1_and_2_threads(f, *args):
    runs = []
    try:
        for k in (1, 2):
            sg.set_num_threads(k)
            runs.append(f(*args))
    finally:
        sg.set_num_threads(None)
    leaves = [_leaves(r) for r in runs]
    assert len(leaves[0]) == len(leaves[1])
    for a, b in zip(*leaves):
        assert a.shape == b.shape and np.array_equal(a, b), np.sum(a != b)
    return runs[0]


def _leaves(tree):
    if isinstance(tree, tuple):
        return [leaf for part in tree for leaf in _leaves(part)]
    return [np.asarray(tree)]


@pytest.mark.skipif(sg.max_threads() < 2, reason="needs 2 threads to compare with 1")
def test_fused_kernels_have_the_same_bits_at_1_and_2_threads(low_threshold):
    """Issue 25: every loop of these kernels spans many chunks (odd and prime sizes); a
    whole-array ``np.mean`` in a parallel kernel was split among the threads by Numba
    (106 ulp between 1 and 2 threads; std's gradient differed in 164,284 of 300,001)."""
    rng = np.random.default_rng(5)
    jitted = sg.jit(stats)
    grad = sg.grad(std_and_softmax)
    for n in (300_001, 100_003):  # 100,003 is prime; one kernel for both sizes
        x = rng.standard_normal(n) + 0.25
        assert "prange(" in jitted.source(x)
        got = _same_bits_at_1_and_2_threads(jitted, x)
        np.testing.assert_allclose(got, [np.mean(x), np.var(x), np.std(x)], rtol=1e-12)
        g = _same_bits_at_1_and_2_threads(grad, x)
        p = np.exp(x - x.max()) / np.sum(np.exp(x - x.max()))
        want = (x - np.mean(x)) / (n * np.std(x)) + p * (1 + x - np.sum(p * x))  # by hand
        np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    A = rng.standard_normal((1009, 331))  # 331 columns: 98 rows a chunk, 11 chunks
    u, v = rng.uniform(0.5, 1.5, 1009), rng.uniform(-1, 1, 331)
    both = sg.value_and_grad(broadcast, argnums=(1, 2))  # the kernel of the first test
    assert "prange(" in both.source(A, u, v)
    value, (du, dv) = _same_bits_at_1_and_2_threads(both, A, u, v)
    want = sg.value_and_grad(broadcast, argnums=(1, 2), backend="numpy")(A, u, v)
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    np.testing.assert_allclose(du, want[1][0], rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(dv, want[1][1], rtol=1e-9, atol=1e-15)


def test_the_adaptive_choice_keeps_the_faster_variant_and_checks_again(monkeypatch):
    """threads.Adaptive with stand-ins whose speed we set: it times both after WARMUP
    calls, keeps the faster, rechecks the other once per (growing) interval, and a
    recheck that disagrees starts a full probe before the choice flips."""
    monkeypatch.setattr(threads, "_PINNED", [None])
    delay = {"parallel": 0.002, "serial": 0.0}
    calls: list[str] = []

    def make(which):
        def fn(x):
            calls.append(which)
            end = time.perf_counter() + delay[which]
            while time.perf_counter() < end:
                pass
            return x + 1.0
        return fn

    made = []
    kernel = threads.Adaptive(make("parallel"), lambda: made.append(1) or make("serial"))
    x = np.zeros(10)
    for _ in range(threads.WARMUP - 1):
        assert kernel(x)[0] == 1.0
    assert not made and set(calls) == {"parallel"}  # no twin before the warm-up ends
    for _ in range(2 * threads.PROBE + 1):  # + 1: the twin's first call is not timed
        kernel(x)
    assert made == [1] and kernel.choices() == {x.size.bit_length(): "serial"}
    calls.clear()
    for _ in range(3 * threads.MIN_INTERVAL):
        kernel(x)
    assert 1 <= calls.count("parallel") <= 2  # rechecked, once per interval
    delay.update(parallel=0.0, serial=0.002)  # the load moved: the parallel one is faster
    for _ in range(8 * threads.MAX_INTERVAL):
        kernel(x)
        if kernel.choices()[x.size.bit_length()] == "parallel":
            break
    assert kernel.choices()[x.size.bit_length()] == "parallel"
    threads.set_num_threads(1)  # pinned: the twin, whatever was measured
    calls.clear()
    kernel(x)
    assert calls == ["serial"]
    threads.set_num_threads(None)



@pytest.mark.parametrize("parallel, serial, want", [
    ([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], "parallel"),
    ([1.0, 1.0, 9.0], [2.0, 2.0, 2.0], "parallel"),  # one call preempted: the median
    ([2.0, 2.0, 2.0], [1.0, 1.0, 30.0], "serial"),    # keeps the twin (the mean would not)
    ([0.95, 0.95, 0.95], [1.0, 1.0, 1.0], "serial"),  # not faster by GAIN: the twin
    ([0.85, 0.85, 0.85], [1.0, 1.0, 1.0], "parallel"),
])
def test_the_adaptive_choice_is_by_median_and_the_parallel_kernel_must_gain(
        parallel, serial, want):
    state = threads._State()
    state.times = {"parallel": parallel, "serial": serial}
    threads.Adaptive._decide(state)
    assert state.choice == want and state.need == 1

def test_the_serial_twin_is_the_same_loops_without_parallel(low_threshold):
    """A loop that sums over its rows keeps the chunks in the twin (``prange`` is ``range``
    there); a loop without such sums is one flat loop. Either way the same bits as the
    parallel kernel at 1 and 2 threads, the libm rerun of an argument out of range too."""
    from symgrad.backend.numba import codegen

    x = np.linspace(-1, 1, 1000)
    spec, _ = sg.value_and_grad(sinexp)._prepare((x,), None, {})
    twin = codegen.serial_twin(spec.source)
    assert spec.source.parallel and not twin.parallel and twin.key != spec.source.key
    assert "parallel=" not in twin.text and "prange(" in twin.text  # prange is range there
    assert twin.text.split("\n", 1)[1].replace(codegen.NJIT_FLAGS, "") == \
        spec.source.text.split("\n", 1)[1].replace(codegen.PARALLEL_FLAGS, "")
    g = sg.grad(sinexp)
    spec, _ = g._prepare((x,), None, {})
    twin = codegen.serial_twin(spec.source)
    assert "prange(" in spec.source.text and "prange" not in twin.text
    assert "for i0 in range(n0):" in twin.text and "parallel=" not in twin.text
    big = x.copy()
    big[500] = 1e7  # beyond vecmath's range for sin
    for arg in (x, big):
        runs = []
        for k in (1, min(2, sg.max_threads())):  # 1: pinned to the twin
            sg.set_num_threads(k)
            runs.append(g(arg))
        sg.set_num_threads(None)
        assert np.array_equal(runs[0], runs[1])  # the same bits
        np.testing.assert_allclose(runs[0], sg.grad(sinexp, backend="numpy")(arg),
                                   rtol=1e-13, atol=1e-16)
    # sums over the inner axis only (each row's own, the vectorized terms in a scratch row)
    A, u, _ = _args(np.random.default_rng(1))
    g = sg.grad(rowsums, argnums=1)
    spec, _ = g._prepare((A, u), None, {})
    twin = codegen.serial_twin(spec.source)
    assert "prange(" in spec.source.text and "prange" not in twin.text
    runs = []
    for k in (1, min(2, sg.max_threads())):
        sg.set_num_threads(k)
        runs.append(g(A, u))
    sg.set_num_threads(None)
    assert np.array_equal(runs[0], runs[1])
    np.testing.assert_allclose(runs[0], sg.grad(rowsums, argnums=1, backend="numpy")(A, u),
                               rtol=1e-12, atol=1e-15)



def test_a_chunk_of_the_parallel_kernel_costs_what_the_serial_loop_costs(low_threshold):
    """The chunk's rows are indexed from a first row LLVM knows is not negative: without
    it, Numba's wraparound of negative indices stayed in the parallel kernel's loop and
    the seed gradient's kernel on one thread took 8x its serial twin's time (issue 31)."""
    from symgrad.backend.numba import codegen
    from symgrad.backend.numba.compile import load

    x = np.random.default_rng(2).uniform(-1, 1, 1 << 16)
    spec, _ = sg.grad(lambda x: np.mean(3 * (x + 2) ** 2))._prepare((x,), None, {})
    assert spec.source.parallel
    kernels = {"parallel": load(spec.source).function,
               "serial": load(codegen.serial_twin(spec.source)).function}
    best = {k: np.inf for k in kernels}
    sg.set_num_threads(1)  # the parallel kernel's own code, on one thread
    try:
        for _ in range(15):
            for k, fn in kernels.items():
                start = time.perf_counter()
                for _ in range(5):
                    fn(x)
                best[k] = min(best[k], time.perf_counter() - start)
    finally:
        sg.set_num_threads(None)
    assert np.array_equal(kernels["parallel"](x)[0], kernels["serial"](x)[0])
    assert best["parallel"] < 2.5 * best["serial"], best

# a parallel kernel compiled first (the hook in compile.py; sinexp's, which the tests above
# leave in the disk cache), or the thread count read first
_COMPILE = ("import os, numpy as np, numba, symgrad as sg\n"
            "def sinexp(x):\n    return np.sum(np.sin(x) * np.exp(-x * x))\n"
            "sg.value_and_grad(sinexp)(np.linspace(-2.5, 3, 1001))\n"
            "print(numba.threading_layer(), 'OMP_WAIT_POLICY' in os.environ)")
_COUNT = ("import os, numba, symgrad as sg; sg.get_num_threads(); "
          "print(numba.threading_layer(), 'OMP_WAIT_POLICY' in os.environ)")


def _openmp(program: str, **env: str) -> tuple[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True, timeout=300,
                          env={**clean, "OMP_DISPLAY_ENV": "VERBOSE", "SYMGRAD_PARALLEL_MIN": "256",
                               **env})
    layer, kept = done.stdout.split()
    if layer != "omp":
        pytest.skip(f"Numba's threading layer is {layer}, not OpenMP: no wait policy to set")
    return kept, done.stderr


def test_idle_openmp_workers_sleep_unless_the_environment_chooses():
    """libgomp's workers spin (300000 rounds) after each parallel region by default, which
    burnt 2-8 ms of CPU per call under load; symgrad starts the layer with passive waits
    (spin count 0), the environment restored, and keeps a policy the user set."""
    kept, err = _openmp(_COMPILE)
    assert "GOMP_SPINCOUNT = '0'" in err and kept == "False"
    kept, err = _openmp(_COUNT, OMP_WAIT_POLICY="ACTIVE")
    assert "OMP_WAIT_POLICY = 'ACTIVE'" in err and "GOMP_SPINCOUNT = '0'" not in err
    assert kept == "True"


def test_the_twin_waits_for_its_ready_check_and_the_parallel_kernel_answers_meanwhile(
        monkeypatch):
    """Until ``twin_ready`` (tiered.twin_compiled: the twin compiled in the worker, with tiered
    execution) says so, the probe runs the parallel kernel and the twin is not made:
    its compile never stops a call (it stopped a warm LeNet step for 22-43 s)."""
    monkeypatch.setattr(threads, "_PINNED", [None])
    calls, made, asked = [], [], []

    def make(which):
        return lambda x: calls.append(which) or x + 1.0

    ready = [False]
    kernel = threads.Adaptive(make("parallel"), lambda: made.append(1) or make("serial"),
                              lambda args: asked.append(args[0].size) or ready[0])
    x = np.zeros(10)
    for _ in range(threads.WARMUP + 5):
        assert kernel(x)[0] == 1.0
    assert not made and set(calls) == {"parallel"} and asked == [10] * 6
    ready[0] = True
    for _ in range(2 * threads.PROBE + 1):
        kernel(x)
    assert made == [1] and "serial" in calls and len(asked) == 7  # asked until it was


def test_a_warm_parallel_kernels_twin_compiles_in_the_worker(low_threshold, monkeypatch):
    from symgrad.backend.numba import worker

    def here(stats):  # compiles on this process's threads
        return stats["compiled"] - stats["compiled_in_workers"]

    monkeypatch.setattr(threads, "_PINNED", [None])
    scale = 1.0 + int.from_bytes(os.urandom(4), "little") / 2**40  # a kernel of its own
    f = eval(f"lambda x: np.sum(np.sin(x * {scale!r}))", {"np": np})
    x = np.linspace(-2.0, 2.0, 600)
    g = sg.grad(f)
    want = g(x)  # compiled first (the suite's default), the parallel kernel
    monkeypatch.setattr(sg.config, "tiered", True)
    before = sg.compile_stats()
    for _ in range(threads.WARMUP + 2):  # the probe wants the twin: the worker compiles it
        assert np.array_equal(g(x), want)
    assert here(sg.compile_stats()) == here(before)
    assert worker.wait(timeout=600)
    for _ in range(2 * threads.PROBE + 2):  # the twin, loaded from disk: the same bits
        assert np.array_equal(g(x), want)
    after = sg.compile_stats()
    assert here(after) == here(before)
    assert after["compiled_in_workers"] == before["compiled_in_workers"] + 1
    assert after["loaded_from_disk"] == before["loaded_from_disk"] + 1


def test_set_num_threads_bounds_numpys_and_scipys_openblas_as_pytorchs_bounds_mkl():
    """``torch.set_num_threads(1)`` runs PyTorch's products on one thread; symgrad's runs
    the products of numpy's and scipy's bundled OpenBLAS on one (their own getters say
    so), and ``None`` gives back the counts they had."""
    import ctypes
    import glob
    import os

    from symgrad.backend import blas

    if blas._library() is None:
        pytest.skip("numpy has no bundled scipy-openblas here (another BLAS is left alone)")
    numpy_libs = os.path.dirname(np.__file__) + ".libs"
    get = ctypes.CDLL(glob.glob(os.path.join(numpy_libs, "*scipy_openblas64_*"))[0]
                      ).scipy_openblas_get_num_threads64_
    before = get()
    found = blas.threads()
    assert len(found) == 2 and found[0] == before  # (numpy's and scipy's)
    try:
        sg.set_num_threads(1)
        assert get() == 1 and blas.threads() == [1, 1]
    finally:
        sg.set_num_threads(None)
    assert get() == before and blas.threads() == found
