"""The on-disk kernel cache, across processes: warm loads, corruption, races."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from symgrad.codegen import KernelSource
from symgrad.compile import publish

CHILD = """
import json, numpy as np, symgrad as sg
from symgrad import compile
g = sg.grad(lambda x: np.sum(np.sin(x) * x))
out = g(np.arange(3.0))
print(json.dumps({"grad": out.tolist(), **compile.compile_stats()}))
"""
EXPECTED = (np.sin(np.arange(3.0)) + np.arange(3.0) * np.cos(np.arange(3.0))).tolist()


def run_child(cache: Path) -> dict:
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache)}
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_fresh_process_loads_the_kernel_from_disk(tmp_path):
    first = run_child(tmp_path)
    assert first["compiled"] == 1 and first["loaded_from_disk"] == 0
    second = run_child(tmp_path)
    assert second["compiled"] == 0 and second["loaded_from_disk"] == 1, "warm start: no compile"
    assert first["grad"] == second["grad"]
    np.testing.assert_allclose(second["grad"], EXPECTED, rtol=1e-15)
    assert len(list((tmp_path / "kernels").glob("k_*.py"))) == 1


def test_a_garbled_source_file_is_quarantined_and_rebuilt(tmp_path):
    run_child(tmp_path)
    (source,) = (tmp_path / "kernels").glob("k_*.py")
    source.write_text(source.read_text()[:80])  # truncated
    result = run_child(tmp_path)
    np.testing.assert_allclose(result["grad"], EXPECTED, rtol=1e-15)
    assert list((tmp_path / "kernels").glob("k_*.py.*.quarantined"))


def test_a_garbled_numba_cache_is_quarantined_and_recompiled(tmp_path):
    run_child(tmp_path)
    index = list((tmp_path / "kernels" / "__pycache__").glob("*.nbi"))
    assert index, "Numba wrote its index next to the kernel source"
    for f in index:
        f.write_bytes(b"\x80\x04garbage" * 7)
    result = run_child(tmp_path)
    np.testing.assert_allclose(result["grad"], EXPECTED, rtol=1e-15)
    assert result["compiled"] == 1
    assert list((tmp_path / "kernels" / "__pycache__").glob("*.quarantined"))
    assert run_child(tmp_path)["compiled"] == 0, "the rebuilt cache is used again"


def test_two_processes_compiling_the_same_kernel_both_succeed(tmp_path):
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path)}
    children = [subprocess.Popen([sys.executable, "-c", CHILD], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        np.testing.assert_allclose(json.loads(out.splitlines()[-1])["grad"], EXPECTED, rtol=1e-15)
    assert run_child(tmp_path)["compiled"] == 0


def test_publish_never_rewrites_an_intact_file(tmp_path):
    source = KernelSource("abc123", "f", "# kernel\n")
    path = publish(source, tmp_path)
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp - 10**9, stamp - 10**9))  # as if written a second ago
    assert publish(source, tmp_path) == path
    assert path.stat().st_mtime_ns == stamp - 10**9, "Numba's cache is keyed on the mtime"
    assert path.read_text() == "# kernel\n"
    assert not list(tmp_path.glob(".*.tmp")), "no temporary files are left behind"


def test_cache_dir_is_configurable(tmp_path, monkeypatch):
    from symgrad.compile import cache_dir

    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cache_dir() == tmp_path / "elsewhere" / "kernels" and cache_dir().is_dir()
