"""The kernel cache's defences (issue 14): a cache nobody else can poison, the
verified text is what runs, bounded memory, and failures that degrade to an
in-memory compile with one warning. Each test failed on the cache before them."""

from __future__ import annotations

import errno
import gc
import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import symgrad as sg
from symgrad.backend.numba import cache_files
from symgrad.backend.numba import compile as kernels
from symgrad.backend.numba.codegen import KernelSource
from symgrad.backend.numba.compile import KernelCacheWarning, publish

ROOT = Path(sg.__file__).resolve().parents[1]

#: two kernels (a gradient and a jit), so that "warns once" means something
CHILD = """
import json, numpy as np, symgrad as sg
from symgrad.backend.numba import compile
g = sg.grad(lambda x: np.sum(np.sin(x) * x))
out = g(np.arange(3.0))
h = sg.jit(lambda x: np.cos(x) * 2.0)
other = h(np.arange(3.0))
print(json.dumps({"out": out.tolist(), "other": other.tolist(), **compile.compile_stats()}))
"""
EXPECTED = (np.sin(np.arange(3.0)) + np.arange(3.0) * np.cos(np.arange(3.0))).tolist()
OTHER = (np.cos(np.arange(3.0)) * 2.0).tolist()

#: a child's view of a read-only file system under $READ_ONLY (as root, chmod
#: does not stop writes): every call that would write there fails with EROFS
READ_ONLY = """
import builtins, errno, io, os
_ro = os.path.realpath(os.environ["READ_ONLY"])

def _inside(path):
    if isinstance(path, int):
        return False
    return os.path.realpath(os.fsdecode(path)).startswith(_ro)

def _refuse(path):
    raise OSError(errno.EROFS, "Read-only file system", os.fsdecode(path))

def _paths(real):
    def call(*args, **kwargs):
        for a in args[:2]:
            if isinstance(a, (str, bytes, os.PathLike)) and _inside(a):
                _refuse(a)
        return real(*args, **kwargs)
    return call

for _name in ("mkdir", "link", "replace", "rename", "unlink", "remove", "rmdir", "chmod",
              "symlink"):
    setattr(os, _name, _paths(getattr(os, _name)))

_os_open = os.open
def _open_fd(path, flags, *args, **kwargs):
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    if flags & writes and _inside(path):
        _refuse(path)
    return _os_open(path, flags, *args, **kwargs)
os.open = _open_fd

_io_open = io.open
def _open(file, mode="r", *args, **kwargs):
    if any(c in mode for c in "wax+") and _inside(file):
        _refuse(file)
    return _io_open(file, mode, *args, **kwargs)
io.open = builtins.open = _open
"""


def child(cache: Path | str, code: str = CHILD, umask: int | None = None,
          **extra_env: str | None) -> tuple[dict, str]:
    """Run ``code`` in a fresh process on ``cache``: its JSON line and its stderr."""
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("NUMBA_CACHE_DIR", None)
    for name, value in extra_env.items():  # None: unset
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300, cwd=ROOT, umask=-1 if umask is None else umask)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def assert_right(result: dict) -> None:
    np.testing.assert_allclose(result["out"], EXPECTED, rtol=1e-15)
    np.testing.assert_allclose(result["other"], OTHER, rtol=1e-15)


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> Path:
    """A cache holding CHILD's two kernels and Numba's cache of them (copy it)."""
    cache = tmp_path_factory.mktemp("warm")
    assert child(cache)[0]["compiled"] == 2
    return cache


def copy_of(warm: Path, tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(warm, cache)
    return cache


class _Plant:
    """Unpickling this creates ``marker``: what a planted Numba cache file could do."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def plant(cache: Path, marker: Path) -> list[Path]:
    """Replace each Numba index in ``cache`` by a pickle that creates ``marker``."""
    index = sorted((cache / "kernels" / "__pycache__").glob("*.nbi"))
    assert index
    for f in index:
        f.write_bytes(pickle.dumps(_Plant(marker)))
    return index


def files_under(path: Path) -> list[Path]:
    return list(path.rglob("*"))


# -- a cache nobody else can write to -----------------------------------------------


#: each is a fresh process compiling two kernels: CI checks every directory group-writable
#: and the top one world-writable too; SYMGRAD_FULL=1 every directory both ways
WRITABLE = [(where, mode) for where in ["", "kernels", "kernels/__pycache__"]
            for mode in [0o777, 0o770]
            if os.environ.get("SYMGRAD_FULL") == "1" or mode == 0o770 or where == ""]


@pytest.mark.parametrize(("where", "mode"), WRITABLE)
def test_a_cache_writable_by_others_is_not_loaded(warm, tmp_path, where, mode):
    """A group- or world-writable cache, its kernels or Numba's directory (``WRITABLE``)."""
    cache = copy_of(warm, tmp_path)
    marker = tmp_path / "payload-ran"
    plant(cache, marker)
    os.chmod(cache / where, mode)
    result, err = child(cache)
    assert not marker.exists(), "a pickle from a group-writable cache was loaded"
    assert_right(result)
    assert result["compiled"] == 2 and result["loaded_from_disk"] == 0
    assert err.count("KernelCacheWarning") == 1, err
    assert f"{cache / where if where else cache} is writable by group" in err
    assert "SYMGRAD_CACHE_DIR" in err and "delete that directory" in err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a directory to another user needs root")
@pytest.mark.parametrize("where", ["", "kernels"])
def test_a_cache_owned_by_another_user_is_not_loaded(warm, tmp_path, where):
    cache = copy_of(warm, tmp_path)
    marker = tmp_path / "payload-ran"
    plant(cache, marker)
    os.chown(cache / where, 65534, 65534)  # nobody; still 0700
    result, err = child(cache)
    assert not marker.exists(), "a pickle from another user's cache was loaded"
    assert_right(result)
    assert err.count("KernelCacheWarning") == 1, err
    assert "is owned by uid 65534, not by you" in err


@pytest.mark.parametrize("how", ["group-writable", "another user's"])
def test_a_numba_file_someone_else_could_have_written_is_set_aside(warm, tmp_path, how):
    """A private directory that was not always private: its files are checked too."""
    if how == "another user's" and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    cache = copy_of(warm, tmp_path)
    marker = tmp_path / "payload-ran"
    for f in plant(cache, marker):
        if how == "group-writable":
            os.chmod(f, 0o664)
        else:
            os.chown(f, 65534, 65534)
    result, err = child(cache)
    assert not marker.exists()
    assert_right(result)
    assert result["compiled"] == 2, "set aside and compiled"
    aside = (cache / "kernels" / "__pycache__").glob("*.nbi.*.quarantined")
    assert len([f for f in aside if ".sha256." not in f.name]) == 2  # and their manifests
    assert child(cache)[0]["compiled"] == 0, "the rebuilt cache is used again"


def test_the_cache_is_private_whatever_the_umask(tmp_path):
    cache = tmp_path / "made" / "by" / "symgrad"
    result, err = child(cache, umask=0o002)
    assert_right(result)
    assert "Warning" not in err, err
    made = [tmp_path / "made", tmp_path / "made" / "by", cache, *files_under(cache)]
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in made}
    assert {oct(m) for p, m in modes.items() if p.is_dir()} == {"0o700"}, modes
    assert {oct(m) for p, m in modes.items() if p.is_file()} == {"0o600"}, modes
    assert any(p.suffix == ".nbc" for p in modes), "Numba's files are among them"


# -- what runs is what was checked --------------------------------------------------


def test_no_bytecode_is_written(tmp_path):
    for _ in range(2):
        result, _ = child(tmp_path, PYTHONDONTWRITEBYTECODE=None)
        assert_right(result)
    assert result["compiled"] == 0
    assert not list(tmp_path.rglob("*.pyc")), "a .pyc would run instead of the checked text"


AUDIT = """
import sys
opened = []
sys.addaudithook(lambda event, args: opened.append(args[0]) if event == "open" and
                 isinstance(args[0], str) and "/k_" in args[0] and
                 args[0].endswith((".py", ".pyc")) else None)
""" + CHILD.replace("**compile.compile_stats()", '"opened": opened, **compile.compile_stats()')


def test_a_warm_load_reads_each_kernel_source_once(warm, tmp_path):
    """Verified, then imported from the same bytes: no second read to swap a file between."""
    cache = copy_of(warm, tmp_path)
    result, _ = child(cache, AUDIT)
    assert_right(result)
    assert result["compiled"] == 0
    sources = sorted(str(p) for p in (cache / "kernels").glob("k_*.py"))
    assert sorted(result["opened"]) == sources, "each source opened once, no .pyc"


@pytest.fixture
def fresh(tmp_path, monkeypatch) -> Path:
    """An empty cache for this test, nothing loaded, nothing warned about yet."""
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(kernels, "_LOADED", OrderedDict())
    monkeypatch.setattr(cache_files, "_WARNED", set())
    return tmp_path / "cache"


def tiny(k: float, tag: str = "") -> KernelSource:
    text = ("# a tiny kernel\nimport numpy as np\nfrom numba import njit\n\n\n"
            f"@njit(cache=True)\ndef f(x):\n    return (x + {k!r},)\n")
    return KernelSource(f"tiny{tag}_{k!r}_{uuid.uuid4().hex[:8]}".replace(".", "_"), "f", text)


def test_a_file_swapped_after_the_check_does_not_run(fresh, monkeypatch):
    source = tiny(1.0)
    path = publish(source, kernels.cache_dir())
    read = kernels.read_own

    def read_then_swap(p):
        data = read(p)  # the check sees the right text; then someone replaces the file
        p.write_text(source.text.replace("x + 1.0", "x * 0.0 + 666.0"))
        return data

    monkeypatch.setattr(kernels, "read_own", read_then_swap)
    assert kernels.load(source)(1.0) == (2.0,)
    assert "666" in path.read_text()


# -- Numba's files stay in the cache directory ----------------------------------------


def test_numba_cache_dir_does_not_move_the_kernels_numba_cache(tmp_path):
    elsewhere = tmp_path / "numba-cache"
    cache = tmp_path / "cache"
    assert_right(child(cache, NUMBA_CACHE_DIR=str(elsewhere))[0])
    result, _ = child(cache, NUMBA_CACHE_DIR=str(elsewhere))
    assert result["compiled"] == 0 and result["loaded_from_disk"] == 2
    assert not elsewhere.exists() or not files_under(elsewhere)
    assert len(list((cache / "kernels" / "__pycache__").glob("*.nbi"))) == 2


@pytest.mark.parametrize("state", ["warm", "cold"])
def test_a_read_only_cache(warm, tmp_path, state):
    """Warm: loaded, nothing written. Cold: one warning, compiled in memory. Never
    Numba's fallback to ~/.cache/numba ($XDG_CACHE_HOME here)."""
    cache = copy_of(warm, tmp_path) if state == "warm" else tmp_path / "empty"
    cache.mkdir(exist_ok=True, mode=0o700)
    before = sorted(files_under(cache))
    xdg = tmp_path / "xdg"
    result, err = child(cache, READ_ONLY + CHILD, READ_ONLY=str(cache), XDG_CACHE_HOME=str(xdg))
    assert_right(result)
    if state == "warm":
        assert result["compiled"] == 0 and "Warning" not in err, err
    else:
        assert result["compiled"] == 2
        assert err.count("KernelCacheWarning") == 1 and "Read-only file system" in err, err
    assert sorted(files_under(cache)) == before
    assert not xdg.exists() or not files_under(xdg), "nothing written outside the cache"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes to read-only directories")
def test_a_read_only_directory_really(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o500)
    result, err = child(cache, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert_right(result)
    assert err.count("KernelCacheWarning") == 1, err
    assert not (tmp_path / "xdg").exists()


# -- failures degrade -----------------------------------------------------------------


def f_sin(x):
    return np.sum(np.sin(x) * x)


def f_cos(x):
    return np.sum(np.cos(x) * x)


def check_both_gradients() -> None:
    x = np.arange(3.0)
    np.testing.assert_allclose(sg.grad(f_sin)(x), np.sin(x) + x * np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(sg.grad(f_cos)(x), np.cos(x) - x * np.sin(x), rtol=1e-15)


def ours(caught) -> list:
    return [w for w in caught if w.category is KernelCacheWarning]


def test_a_cache_path_that_is_a_regular_file(fresh, monkeypatch, tmp_path):
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path / "file"))
    with pytest.warns(KernelCacheWarning, match="Not a directory") as caught:
        check_both_gradients()
    assert len(ours(caught)) == 1, "warned once"
    assert (tmp_path / "file").read_text() == "not a directory"


@pytest.mark.parametrize("failing", ["every write", "Numba's files"])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG])
def test_a_full_disk(fresh, monkeypatch, failing, code):
    real = cache_files.write_all

    def full(fd, data):
        if failing == "every write" or data[:1] == b"\x80":  # Numba's files are pickles
            os.write(fd, data[:len(data) // 2])  # part of it, then the disk is full
            raise OSError(code, os.strerror(code))
        real(fd, data)

    monkeypatch.setattr(cache_files, "write_all", full)
    with pytest.warns(KernelCacheWarning, match=os.strerror(code)) as caught:
        check_both_gradients()
    assert len(ours(caught)) == 1, "warned once"
    left = files_under(fresh)
    assert not [p for p in left if ".tmp" in p.name], "no partial file left behind"
    assert not [p for p in left if p.suffix in (".nbi", ".nbc")]
    sources = [p for p in left if p.suffix == ".py"]
    assert len(sources) == (2 if failing == "Numba's files" else 0)


#: a fresh process whose files cannot grow past {limit} bytes: writes fail with EFBIG
FILE_SIZE_LIMIT = """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
"""


@pytest.mark.parametrize("limit", [100, 2048])  # nothing fits; the sources and Numba's index fit
def test_a_file_size_limit_in_a_fresh_process(tmp_path, limit):
    result, err = child(tmp_path, FILE_SIZE_LIMIT.format(limit=limit) + CHILD)
    assert_right(result)
    assert err.count("KernelCacheWarning") == 1 and "File too large" in err, err
    assert not [p for p in files_under(tmp_path) if ".tmp" in p.name]
    assert len(list(tmp_path.rglob("k_*.py"))) == (0 if limit == 100 else 2)


@pytest.mark.parametrize("what", ["dangling symlink", "symlink to a good copy", "directory",
                                  "empty directory", "fifo", "group-writable file"])
def test_something_else_at_a_kernels_path_is_set_aside(tmp_path, what):
    source = KernelSource("abc123", "f", "# kernel\n")
    path = tmp_path / "k_abc123.py"
    if what == "dangling symlink":
        path.symlink_to(tmp_path / "nowhere")
    elif what == "symlink to a good copy":
        (tmp_path / "copy").write_text(source.text)
        path.symlink_to(tmp_path / "copy")
    elif what.endswith("directory"):
        path.mkdir()
        if what == "directory":
            (path / "inside").write_text("x")
    elif what == "fifo":
        os.mkfifo(path)
    else:
        path.write_text(source.text)
        os.chmod(path, 0o664)
    assert publish(source, tmp_path) == path
    assert path.is_file() and not path.is_symlink() and path.read_text() == source.text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(list(tmp_path.glob("k_abc123.py.*.quarantined"))) == 1


def test_a_dangling_symlink_at_a_kernels_path_is_rebuilt(warm, tmp_path):
    cache = copy_of(warm, tmp_path)
    for source in (cache / "kernels").glob("k_*.py"):
        source.unlink()
        source.symlink_to(tmp_path / "nowhere")
    result, err = child(cache)
    assert_right(result)
    assert result["compiled"] == 0, "Numba's cache is keyed on the text, still valid"
    assert len(list((cache / "kernels").glob("k_*.py.*.quarantined"))) == 2


def test_directories_at_the_quarantine_names(warm, tmp_path):
    """(Quarantine names were the file's name and the second: planted ahead, they
    broke every process.) Both the source and Numba's index are damaged here."""
    cache = copy_of(warm, tmp_path)
    damaged = [*(cache / "kernels").glob("k_*.py"),
               *(cache / "kernels" / "__pycache__").glob("*.nbi")]
    now = int(time.time())
    for f in damaged:
        f.write_bytes(b"\x80\x04garbage")
        for t in range(now - 2, now + 120):
            (f.parent / f"{f.name}.{t}.quarantined").mkdir()
            (f.parent / f"{f.name}.{t}.quarantined" / "x").write_text("x")
    result, _ = child(cache)
    assert_right(result)
    assert result["compiled"] == 2
    assert child(cache)[0]["compiled"] == 0


# -- bounded memory ---------------------------------------------------------------------


def test_loaded_kernels_are_bounded(fresh, monkeypatch):
    monkeypatch.setattr(kernels, "MAX_LOADED", 2, raising=False)
    before = kernels.compile_stats()["kernels"]
    a, b, c = tiny(1.0, "lru"), tiny(2.0, "lru"), tiny(3.0, "lru")
    ka = kernels.load(a)
    dispatcher_b = weakref.ref(kernels.load(b).function)
    assert kernels.load(a) is ka  # a is used again: b is now the least recently loaded
    kernels.load(c)
    assert list(kernels._LOADED) == [a.key, c.key]
    assert f"symgrad_kernel_{b.key}" not in sys.modules, "its module is dropped too"
    gc.collect()  # (b never ran: Numba keeps what it compiled, numba/numba#5976)
    assert dispatcher_b() is None, "and nothing of symgrad's keeps it alive"
    assert kernels.load(b)(1.0) == (3.0,)  # b again: a new import; a is dropped
    assert list(kernels._LOADED) == [c.key, b.key]
    assert kernels.compile_stats()["kernels"] - before == 4, "every import is counted"


def test_loading_from_many_threads(fresh, monkeypatch):
    monkeypatch.setattr(kernels, "MAX_LOADED", 5, raising=False)
    sources = [tiny(float(k), "threads") for k in range(12)]
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for k in np.random.default_rng(seed).permutation(len(sources)):
                kernel = kernels.load(sources[k])
                assert kernel.source is sources[k]
                assert kernel(1.0) == (1.0 + k,)
        except BaseException as e:  # noqa: BLE001 -- reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(kernels._LOADED) == 5
    assert not list(fresh.rglob("*.tmp*"))
