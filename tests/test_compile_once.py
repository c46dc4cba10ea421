"""Each kernel signature compiled once per machine, off the critical path (issue 26).

Counted, not timed (timing lives in ``benchmarks/first_call.py``): compiles per
process (``sg.compile_stats()``), summed over processes sharing one empty cache.
Oracles: numpy's own formula for the values; the counts for the compiles. The
subprocesses use small kernels and short timeouts; the machine code of each
kernel is compiled once per test (a fresh cache directory each).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import symgrad as sg
from symgrad.backend.numba import worker

from oracle import assert_close

X = np.linspace(0.1, 0.5, 5)
C = np.arange(1.0, 6.0)

#: threads of one process, each with a fresh lambda of one body: one kernel, one signature
THREADS = """
import json, sys, threading, numpy as np, symgrad as sg
x, out = np.linspace(0.1, 0.5, 5), []
def call():
    out.append(sg.grad(lambda x: np.sum(np.sin(x) * x))(x).tolist())
threads = [threading.Thread(target=call) for _ in range(int(sys.argv[1]))]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"out": out, **sg.compile_stats()}))
"""
EXPECTED = (np.sin(X) + X * np.cos(X)).tolist()


def env(cache: Path, tiered: bool) -> dict:
    e = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache), "SYMGRAD_TIERED": str(int(tiered))}
    e.pop("NUMBA_CACHE_DIR", None)
    return e


def start(code: str, cache: Path, *args: str, tiered: bool = False) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env(cache, tiered),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(process: subprocess.Popen, timeout: float = 300) -> dict:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()  # and its pool's children see their parent gone
        raise
    assert process.returncode == 0, err
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def test_threads_times_processes_on_one_empty_cache_compile_once(tmp_path):
    """3 processes x 4 threads, each thread a fresh lambda: one compile in all, then a
    fresh process loads the kernel from disk and compiles nothing."""
    results = [result(p) for p in [start(THREADS, tmp_path, "4") for _ in range(3)]]
    for r in results:
        for out in r["out"]:
            np.testing.assert_allclose(out, EXPECTED, rtol=1e-14)
    assert sum(r["compiled"] for r in results) == 1, [r["compiled"] for r in results]
    assert sum(r["loaded_from_disk"] for r in results) == 2
    warm = result(start(THREADS, tmp_path, "1"))
    assert (warm["compiled"], warm["loaded_from_disk"]) == (0, 1)


@pytest.fixture
def tiered(monkeypatch):
    monkeypatch.setattr(sg.config, "tiered", True)
    monkeypatch.setattr(sg.config, "tiered_budget", 30.0)


def test_the_worker_compiles_the_signature_real_calls_use(tiered):
    """A closure over a constant (read-only, frozen) array: the compile worker compiles
    the read-only signature, and this process then only loads it (no second compile)."""
    # a kernel no test (and no earlier run on this cache) compiled: a captured number is
    # a kernel argument, but an integer exponent is part of the kernel (x**k underflows
    # to 0 on X, so the Hessian is sin's alone)
    k = int(np.random.default_rng().integers(10**5, 10**9))
    h = sg.hessian(lambda x: np.sum(np.sin(x) * C + x ** k))
    before = sg.compile_stats()
    first = h(X)
    assert sg.compile_stats()["interpreted_calls"] == before["interpreted_calls"] + 1
    # the worker takes a second to start: the job is still in flight, and said so
    assert sg.compile_stats()["compiling"] == before["compiling"] + 1
    assert "1 kernel still compiling in the background" in sg.compile_note()
    assert worker.wait(timeout=300)
    assert sg.compile_stats()["compiling"] == before["compiling"]
    second = h(X)
    after = sg.compile_stats()
    assert after["compiled_in_workers"] == before["compiled_in_workers"] + 1
    assert after["compiled"] == before["compiled"] + 1, "compiled in the worker only"
    assert after["loaded_from_disk"] == before["loaded_from_disk"] + 1
    want = np.diag(-np.sin(X) * C)
    assert_close(first, want, rtol=1e-14, atol=1e-300)
    assert_close(second, want, rtol=1e-14, atol=1e-300)


def test_a_kernel_calling_lapack_compiles_in_the_worker(tiered):
    """Numba's linear algebra imports scipy: the worker's ``sys.path`` must not let
    ``symgrad/scipy`` stand for it (it did: every kernel with a matrix product or a
    determinant failed there, and compiled on the calling thread instead)."""
    M = np.random.default_rng().random((3, 5)) + np.eye(3, 5)
    k = int(np.random.default_rng().integers(10**5, 10**9))  # a kernel no run compiled
    g = sg.grad(lambda x: np.linalg.slogdet(M @ np.diag(np.exp(x)) @ M.T)[1]
                + np.sum(x ** k))  # x**k underflows to 0 on X
    before = sg.compile_stats()
    first = g(X)
    assert worker.wait(timeout=300)
    second = g(X)
    after = sg.compile_stats()
    assert after["compiled_in_workers"] == before["compiled_in_workers"] + 1
    assert after["compiled"] == before["compiled"] + 1, "compiled in the worker only"
    B = M * np.exp(X)  # M diag(e^x); d/dx_k log det(B Mᵀ) = e^x_k (Mᵀ (B Mᵀ)⁻¹ M)_kk
    want = np.exp(X) * np.diag(M.T @ np.linalg.inv(B @ M.T) @ M)
    assert_close(first, want, rtol=1e-12, atol=0)
    assert_close(second, want, rtol=1e-12, atol=0)


def test_the_tensor_apis_hessian_compiles_in_the_worker(tiered):
    """``autograd.functional.hessian`` (Tensor API): its backward kernels compile in the
    worker while this thread interprets, and are then loaded, never compiled here."""
    from symgrad.autograd.functional import hessian

    p = 3 + np.random.default_rng().random() * 1e-3  # an exponent stays in the kernel:
    f = lambda x: (x.sin() * x.exp()).sum() + (x ** p).sum()  # kernels no test compiled
    before = sg.compile_stats()
    early = [hessian(f, sg.tensor(X)).numpy() for _ in range(3)]
    assert sg.compile_stats()["interpreted_calls"] > before["interpreted_calls"]
    assert worker.wait(timeout=300)
    late = [hessian(f, sg.tensor(X)).numpy() for _ in range(2)]
    after = sg.compile_stats()
    assert after["compiled_in_workers"] > before["compiled_in_workers"]
    assert after["compiled"] - before["compiled"] == (after["compiled_in_workers"]
                                                      - before["compiled_in_workers"])
    assert after["loaded_from_disk"] > before["loaded_from_disk"]
    want = np.diag(2 * np.cos(X) * np.exp(X) + p * (p - 1) * X ** (p - 2))
    for got in early + late:
        assert_close(got, want, rtol=1e-13, atol=1e-13)


WARM_FIRST = """
import json, threading, numpy as np, symgrad as sg
g, x = sg.grad(lambda x: np.sum(np.sin(x) * x)), np.linspace(0.1, 0.5, 5)
outs = [g(x).tolist()]
first = sg.compile_stats()
outs.append(g(x).tolist())
main = threading.main_thread()
joined = [t.name for t in threading.enumerate() if not t.daemon and t is not main]
print(json.dumps({"out": outs, "first": first, "joined": joined, **sg.compile_stats()}))
"""


def test_a_processs_first_load_from_disk_is_the_first_calls_answer(tmp_path):
    """On a warm cache, a process's first call loads its kernel (Numba's set-up, 0.4 s or
    more) and runs it, not the interpreter: the tiers round differently, so interpreting
    while the kernel loads made a warm run's bits depend on when the load finished (a
    LeNet script's parameters after 12 steps differed from tiering off in 18,114 places)."""
    filled = result(start(THREADS, tmp_path, "1"))  # fills the cache, tiering off
    got = result(start(WARM_FIRST, tmp_path, tiered=True))
    assert got["first"]["interpreted_calls"] == 0 and got["first"]["loaded_from_disk"] == 1
    assert got["compiled"] == 0 and got["joined"] == []
    assert got["out"] == filled["out"] * 2  # the kernel's bits, as tiering off gives them
    assert_close(np.array(got["out"][0]), np.array(EXPECTED), rtol=1e-14, atol=0)


EXITS = """
import json, sys, threading, time, numpy as np, symgrad as sg
x = np.linspace(0.1, 0.5, 5)
print(json.dumps({"out": sg.grad(lambda x: np.sum(np.tanh(x) * x))(x).tolist(),
                  **sg.compile_stats()}), flush=True)
if sys.argv[1] == "sleep":
    time.sleep(60)
print("threads Python joins at exit:", [t.name for t in threading.enumerate()
                                         if not t.daemon and t is not threading.main_thread()])
print(time.time(), flush=True)
"""


def test_a_process_ends_at_once_while_its_kernel_compiles(tmp_path):
    """Tiered, on an empty cache: the first answer is the interpreter's, the process ends
    without waiting for the compile, and the compile finishes detached: a later
    compile-first process finds it on disk (0 compiles)."""
    child = start(EXITS, tmp_path, "end", tiered=True)
    out, err = child.communicate(timeout=120)
    ended = time.time()
    assert child.returncode == 0, err
    first, threads, last = out.splitlines()
    first = json.loads(first)
    assert threads.endswith(": []"), threads  # the compile is in the worker, nothing joins it
    assert first["interpreted_calls"] == 1 and first["compiled"] == 0
    np.testing.assert_allclose(first["out"], np.tanh(X) + X / np.cosh(X) ** 2, rtol=1e-14)
    # 1 s on an idle machine (benchmarks/first_call.py); generous under a loaded CI
    assert ended - float(last) < 10, "the process waited for its compile at exit"
    assert "Exception ignored" not in err
    index = tmp_path / "kernels" / "__pycache__"
    deadline = time.monotonic() + 300
    while not list(index.glob("*.nbi")) and time.monotonic() < deadline:
        time.sleep(0.2)
    later = result(start(EXITS, tmp_path, "end", tiered=False))
    assert (later["compiled"], later["loaded_from_disk"]) == (0, 1)
    assert later["out"] == pytest.approx(first["out"], rel=1e-14)


def test_the_worker_leaves_what_numba_made_to_the_system_at_its_end(tmp_path):
    """At end-of-file the compile worker freezes what is alive before it exits, so that
    CPython's exit collections do not spend 0.37 s of CPU on it (symgrad.core.teardown)
    beside the user's next process."""
    code = ("import atexit, gc, os; atexit.register(lambda: os.write(2, "
            "f'frozen={gc.get_freeze_count()}'.encode())); "
            "from symgrad.backend.numba.worker import main; main()")
    done = subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120,
                          env=env(tmp_path, tiered=True))
    assert done.returncode == 0, done.stderr
    assert int(done.stderr.rsplit("frozen=", 1)[1]) > 1000, done.stderr


def test_ctrl_c_while_a_kernel_compiles_ends_the_process_at_once(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", EXITS, "sleep"], text=True,
                             env=env(tmp_path, True), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert json.loads(child.stdout.readline())["interpreted_calls"] == 1
    child.send_signal(signal.SIGINT)  # the compile is in flight in the worker
    _, err = child.communicate(timeout=60)
    assert child.returncode in (130, -signal.SIGINT)
    assert "Exception ignored" not in err and "threading" not in err, err


FORK = """
import json, multiprocessing as mp, numpy as np, symgrad as sg
g = sg.grad(lambda x: np.sum(np.sinh(x) * x))
x = np.linspace(0.1, 0.5, 5)
first = g(x)  # interpreted; the compile is in flight
def work(k):
    return g(x * k).tolist()
with mp.get_context("fork").Pool(2) as pool:
    outs = pool.map(work, [1.0, 2.0, 3.0])
print(json.dumps({"first": first.tolist(), "outs": outs}))
"""


def test_a_fork_while_a_kernel_compiles_or_loads_works(tmp_path):
    """A fork pool right after a first call: while the worker compiles (empty cache),
    then, on the filled cache, right after the first call loaded the kernel from disk
    (the call itself loads it: a child must not be born holding a lock of that load)."""
    f = lambda x: np.sinh(x) + x * np.cosh(x)  # noqa: E731
    for tiered in (True, False, True):  # compile in the worker; fill the cache; load
        got = result(start(FORK, tmp_path, tiered=tiered), timeout=300)
        np.testing.assert_allclose(got["first"], f(X), rtol=1e-14)
        for k, out in zip([1.0, 2.0, 3.0], got["outs"]):
            np.testing.assert_allclose(out, f(X * k), rtol=1e-14)


def test_a_worker_that_retires_is_replaced(tiered, monkeypatch):
    """A worker ends after SYMGRAD_WORKER_MAX_JOBS jobs (Numba never frees machine code);
    the next job starts a new one and nothing is lost or compiled twice."""
    monkeypatch.setenv("SYMGRAD_WORKER_MAX_JOBS", "1")
    monkeypatch.setattr(worker, "POOL", worker.Pool())
    scale = 1 + np.random.default_rng().random()
    fs = [sg.jit(lambda x, k=k: np.sin(x) * (scale + k)) for k in (0.5, 1.5)]  # two kernels
    before = sg.compile_stats()
    firsts = [f(X) for f in fs]
    assert worker.wait(timeout=300)
    seconds = [f(X) for f in fs]
    after = sg.compile_stats()
    assert after["compiled_in_workers"] - before["compiled_in_workers"] == 2
    assert after["compiled"] - before["compiled"] == 2
    for k, a, b in zip((0.5, 1.5), firsts, seconds):
        assert_close(a, np.sin(X) * (scale + k), rtol=1e-15, atol=0)
        assert_close(b, np.sin(X) * (scale + k), rtol=1e-14, atol=0)



def test_the_command_says_when_its_kernel_compiles_in_the_background(tmp_path):
    """``symgrad grad ... --jit`` on an empty cache, tiered: the answer is the
    interpreter's, and one stderr line says the kernel compiles in the background (or,
    had the worker been quicker than the command, that it compiled)."""
    done = subprocess.run([sys.executable, "-m", "symgrad", "grad", "sum(sin(x)*x)", "--shape",
                           "x=3", "--at", "x=1,2,3", "--jit", "--format", "json"],
                          env=env(tmp_path, True), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    x = np.array([1.0, 2.0, 3.0])
    assert_close(np.array(json.loads(done.stdout)["grad"]["x"]), np.sin(x) + x * np.cos(x),
                 rtol=1e-14, atol=0)
    (line,) = done.stderr.splitlines()
    assert line.startswith(("symgrad: 1 kernel still compiling in the background",
                            "symgrad: 1 kernel compiled")), line


def test_a_split_graphs_pieces_compile_in_the_worker(tiered):
    """A chain of kernels (a graph split into pieces): each piece is compiled in the
    compile worker for the arguments it gets, then loaded; nothing compiles here."""
    from symgrad.backend.program import build

    cs = 0.5 + np.random.default_rng().random(12) * 1e-3
    # kernels no test (and no earlier run on this cache) compiled: an integer exponent is
    # part of the kernel (x0**k underflows to 0 on X)
    k = int(np.random.default_rng().integers(10**5, 10**9))

    def f(x):
        x0 = x
        for c in cs:
            x = np.sin(x) * c + x
        return np.sum(np.cos(x) * x + x0 ** k)

    g = sg.grad(f, backend="numpy")
    graph = g.graph(X)
    program = build(graph, "f", "a split chain", max_eqns=30, tiered=True)
    assert len(program.pieces) >= 3
    before = sg.compile_stats()
    first = program.kernel(X, *program.consts)
    assert sg.compile_stats()["interpreted_calls"] == before["interpreted_calls"] + 1
    assert program.kernel.wait(timeout=600)
    second = program.kernel(X, *program.consts)
    after = sg.compile_stats()
    workers = after["compiled_in_workers"] - before["compiled_in_workers"]
    assert workers >= 1 and after["compiled"] - before["compiled"] == workers
    # (each piece loaded: those compiled now, and those of a reused cache's earlier run)
    assert after["loaded_from_disk"] - before["loaded_from_disk"] >= workers
    want = g(X)
    assert_close(first[0], want, rtol=1e-14, atol=0)
    assert_close(second[0], want, rtol=1e-13, atol=0)
