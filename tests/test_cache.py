"""The on-disk kernel cache, across processes: warm loads, corruption, races."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from symgrad.backend.numba.codegen import KernelSource
from symgrad.backend.numba.compile import publish

CHILD = """
import json, numpy as np, symgrad as sg
from symgrad.backend.numba import compile
g = sg.grad(lambda x: np.sum(np.sin(x) * x))
out = g(np.arange(3.0))
print(json.dumps({"out": out.tolist(), **compile.compile_stats()}))
"""
EXPECTED = (np.sin(np.arange(3.0)) + np.arange(3.0) * np.cos(np.arange(3.0))).tolist()

JIT_CHILD = """
import json, numpy as np, symgrad as sg
from symgrad.backend.numba import compile
f = sg.jit(lambda x, y: np.tanh(x @ y) * 2.0)
out = f(np.arange(6.0).reshape(2, 3) / 6, np.ones(3))
print(json.dumps({"out": out.tolist(), **compile.compile_stats()}))
"""

BACKWARD_CHILD = """
import json, numpy as np, symgrad as torch
from symgrad.backend.numba import compile
from symgrad.autograd import Variable
x = Variable(torch.from_numpy(np.arange(3.0)), requires_grad=True)
for step in range(3):  # a structure's first backward interprets, its second compiles (the
    (torch.sin(x) * x).sum().backward()  # first step's reads no kept value: another one)
    if step < 2:
        x.grad.data.zero_()
print(json.dumps({"out": x.grad.numpy().tolist(), **compile.compile_stats()}))
"""

#: how each entry point is run in a fresh process, and what it returns
CHILDREN = {
    "grad": (CHILD, EXPECTED),
    "jit": (JIT_CHILD, (np.tanh(np.arange(6.0).reshape(2, 3) / 6 @ np.ones(3)) * 2).tolist()),
    "backward": (BACKWARD_CHILD, EXPECTED),
}


def run_child(cache: Path | None, code: str = CHILD, **extra_env: str) -> dict:
    env = {**os.environ, **extra_env}
    if cache is None:
        env.pop("SYMGRAD_CACHE_DIR", None)
    else:
        env["SYMGRAD_CACHE_DIR"] = str(cache)
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> Path:
    """A cache holding CHILD's kernel and Numba's index and data for it (copy it)."""
    cache = tmp_path_factory.mktemp("warm")
    assert run_child(cache)["compiled"] == 1
    return cache


def copy_of(warm: Path, tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(warm, cache)  # copy2: mtimes kept, as Numba's index expects
    return cache


@pytest.mark.parametrize("entry", CHILDREN)
def test_a_fresh_process_loads_the_kernel_from_disk(entry, tmp_path):
    code, expected = CHILDREN[entry]
    first = run_child(tmp_path, code)
    assert first["compiled"] == 1 and first["loaded_from_disk"] == 0
    second = run_child(tmp_path, code)
    assert second["compiled"] == 0 and second["loaded_from_disk"] == 1, "warm start: no compile"
    assert first["out"] == second["out"]
    np.testing.assert_allclose(second["out"], expected, rtol=1e-15)
    assert len(list((tmp_path / "kernels").glob("k_*.py"))) == 1


def test_a_garbled_source_file_is_quarantined_and_rebuilt(warm_cache, tmp_path):
    cache = copy_of(warm_cache, tmp_path)  # (a copy: one compile per worker, not per test)
    (source,) = (cache / "kernels").glob("k_*.py")
    source.write_text(source.read_text()[:80])  # truncated
    result = run_child(cache)
    np.testing.assert_allclose(result["out"], EXPECTED, rtol=1e-15)
    assert list((cache / "kernels").glob("k_*.py.*.quarantined"))


def test_a_garbled_numba_cache_is_quarantined_and_recompiled(warm_cache, tmp_path):
    cache = copy_of(warm_cache, tmp_path)
    index = list((cache / "kernels" / "__pycache__").glob("*.nbi"))
    assert index, "Numba wrote its index next to the kernel source"
    for f in index:
        f.write_bytes(b"\x80\x04garbage" * 7)
    result = run_child(cache)
    np.testing.assert_allclose(result["out"], EXPECTED, rtol=1e-15)
    assert result["compiled"] == 1
    assert list((cache / "kernels" / "__pycache__").glob("*.quarantined"))
    assert run_child(cache)["compiled"] == 0, "the rebuilt cache is used again"


def test_two_processes_compiling_the_same_kernel_both_succeed(tmp_path):
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path)}
    children = [subprocess.Popen([sys.executable, "-c", CHILD], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        np.testing.assert_allclose(json.loads(out.splitlines()[-1])["out"], EXPECTED, rtol=1e-15)
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
    from symgrad.backend.numba.compile import cache_dir

    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cache_dir() == tmp_path / "elsewhere" / "kernels" and cache_dir().is_dir()


def test_a_copied_cache_is_warm(warm_cache, tmp_path):
    """(What the tests below damage is a working cache.)"""
    assert run_child(copy_of(warm_cache, tmp_path))["compiled"] == 0


def garble(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif how == "garbage":
        path.write_bytes(bytes(range(256)) * 3)
    elif how == "empty":
        path.write_bytes(b"")
    else:
        raise ValueError(how)


@pytest.mark.parametrize(("suffix", "how"), [("nbi", "truncated"), ("nbi", "empty"),
                                              ("nbc", "garbage"), ("nbc", "truncated")])
def test_a_damaged_numba_index_or_data_file_is_recompiled(warm_cache, tmp_path, suffix, how):
    cache = copy_of(warm_cache, tmp_path)
    files = list((cache / "kernels" / "__pycache__").glob(f"*.{suffix}"))
    assert files, f"Numba wrote a .{suffix} file"
    for f in files:
        garble(f, how)
    result = run_child(cache)
    np.testing.assert_allclose(result["out"], EXPECTED, rtol=1e-15)
    assert result["compiled"] == 1, "recompiled, not crashed"
    assert run_child(cache)["compiled"] == 0, "and the rebuilt cache is used again"


@pytest.mark.parametrize("how", ["garbage", "empty", "edited"])
def test_a_damaged_source_file_is_quarantined_and_rebuilt(warm_cache, tmp_path, how):
    cache = copy_of(warm_cache, tmp_path)
    (source,) = (cache / "kernels").glob("k_*.py")
    if how == "edited":  # still valid Python, and still the same length: a wrong kernel
        text = source.read_text()
        assert "np.sin(" in text
        source.write_text(text.replace("np.sin(", "np.cos("))
    else:
        garble(source, how)  # garbage is not UTF-8
    result = run_child(cache)
    np.testing.assert_allclose(result["out"], EXPECTED, rtol=1e-15)
    assert len(list((cache / "kernels").glob("k_*.py.*.quarantined"))) == 1
    assert run_child(cache)["out"] == result["out"]


def test_symgrad_cache_dir_is_honoured_by_a_fresh_process(tmp_path):
    """Kernels go to $SYMGRAD_CACHE_DIR/kernels, else to the user cache dir (XDG here)."""
    xdg = tmp_path / "xdg"
    result = run_child(tmp_path / "chosen", XDG_CACHE_HOME=str(xdg))
    np.testing.assert_allclose(result["out"], EXPECTED, rtol=1e-15)
    assert list((tmp_path / "chosen" / "kernels").glob("k_*.py"))
    assert not xdg.exists(), "nothing is written to the default cache dir"
    result = run_child(None, XDG_CACHE_HOME=str(xdg))
    np.testing.assert_allclose(result["out"], EXPECTED, rtol=1e-15)
    assert list((xdg / "symgrad" / "kernels").glob("k_*.py"))


def test_a_flipped_byte_in_the_machine_code_is_never_trusted(warm_cache, tmp_path):
    """Issue 25 part 7: one flipped byte of a .nbc (anywhere: the pickle's header, the
    machine code, its end) gave wrong numbers, segfaults and LLVM aborts in every later
    process. Each file's sha256 manifest is checked before it is unpickled: the damaged
    entry is set aside and recompiled, in a process that never crashes."""
    cache = copy_of(warm_cache, tmp_path)
    (nbc,) = (cache / "kernels" / "__pycache__").glob("*.nbc")
    original = nbc.read_bytes()
    assert (nbc.parent / (nbc.name + ".sha256")).exists(), "a manifest beside the file"
    offsets = [0, 17, len(original) // 3, len(original) // 2, len(original) - 1]
    for offset in offsets if os.environ.get("SYMGRAD_FULL") else offsets[1::2]:
        for f in (cache / "kernels" / "__pycache__").iterdir():
            f.unlink()
        for f in (warm_cache / "kernels" / "__pycache__").iterdir():
            shutil.copy2(f, cache / "kernels" / "__pycache__" / f.name)
        damaged = bytearray(original)
        damaged[offset] ^= 0x10
        nbc.write_bytes(bytes(damaged))
        result = run_child(cache)
        np.testing.assert_allclose(result["out"], EXPECTED, rtol=1e-15)
        assert result["compiled"] == 1, f"byte {offset}: recompiled"
        assert list(nbc.parent.glob("*.nbc.*.quarantined")), "set aside"


def test_a_cache_file_without_its_manifest_is_recompiled(warm_cache, tmp_path):
    cache = copy_of(warm_cache, tmp_path)
    for manifest in (cache / "kernels" / "__pycache__").glob("*.sha256"):
        manifest.unlink()
    result = run_child(cache)
    np.testing.assert_allclose(result["out"], EXPECTED, rtol=1e-15)
    assert result["compiled"] == 1
    assert run_child(cache)["compiled"] == 0, "and the rebuilt entry carries its manifest"
