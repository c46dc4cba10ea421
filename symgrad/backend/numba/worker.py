"""Compiles off the critical path: a worker process that compiles into the kernel cache.

Tiered execution (:mod:`.tiered`) answers first calls on the numpy interpreter
while the kernel compiles. The compile runs here, in one worker process per
user process, as PyTorch Inductor's async compile does: the worker imports the
kernel's module from the cache directory and compiles the exact signature the
real call uses (the Numba types of its arguments, read-only constants
included, sent as pickled types: no argument, no copy of one, crosses over)
with ``cache=True``, so the machine code lands on disk, published atomically
with its sha256 manifest (:mod:`.integrity`), under the kernel's lock
(:mod:`.keylock`). The user's process then loads it from disk on its next
call (milliseconds: machine code, no compile).

Why a process and not a thread: Numba's compiler is Python and holds the GIL
(measured on 2 cores: a 1.3 s compile in a thread slows the interpreter's
answers beside it about 2x), and a thread either keeps the process alive at exit
(Python joins non-daemon threads: 414 s after the last statement in issue 26) or
is frozen halfway (daemon). The worker holds neither the user's GIL nor the
process: it runs in a session of its own (a Ctrl-C at the terminal does not reach
it), nothing joins it, and when the user's process ends it sees end-of-file,
finishes the one compile in hand (so the next process finds it on disk) and
exits; kernels still queued are dropped and compiled by the next process that
wants them. Starting it costs about 1 s of the worker's own time (Python, numpy,
Numba and symgrad imported), paid once per process and off the critical path.

Bounded: one worker, one compile in flight at a time, each (kernel, signature)
queued once however many calls want it. A process forked from this one (a
``multiprocessing`` pool with the fork start method) starts with no worker and
no queue (``os.register_at_fork``); its calls compile for themselves or start
a worker of their own. A worker that dies (a crash in LLVM) fails its job: the
call then compiles in the user's process, as with ``sg.config.tiered = False``.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from .stats import LOG, count, in_flight

_HEADER = struct.Struct(">Q")
#: the directory holding the ``symgrad`` package, first on the worker's path (never the
#: package's own directory: its ``scipy`` subpackage would shadow scipy there)
_PACKAGE_ROOT = Path(__file__).resolve().parents[3]
MAX_RESTARTS = 3  # workers that died in one process before it stops starting them
#: jobs a worker takes before it ends (and the next job starts a new one): Numba keeps
#: the machine code of every kernel it compiled until its process ends
MAX_JOBS = int(os.environ.get("SYMGRAD_WORKER_MAX_JOBS") or 200)


class Job:
    """One (kernel, signature) to compile: "queued", "running", "done" or "failed"."""

    def __init__(self, kernel: Any, signature: tuple):
        self.kernel = kernel
        self.signature = signature
        self.state = "queued"
        self.started = 0.0
        self.compiles = True  # False: a load from disk (:mod:`.tiered`'s background thread)

    def done(self) -> bool:
        return self.state in ("done", "failed")

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job is done or failed (polling: safe in a forked child);
        whether it is done."""
        end = None if timeout is None else time.monotonic() + timeout
        while not self.done() and (end is None or time.monotonic() < end):
            time.sleep(0.01)
        return self.state == "done"


class _Detached(subprocess.Popen):
    def __del__(self) -> None:  # never warn about (or wait for) a worker left running
        pass


class Pool:
    """The worker process of this process and its queue of jobs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, tuple], Job] = {}
        self._queue: deque[Job] = deque()
        self._running: Job | None = None
        self._process: _Detached | None = None
        self._deaths = 0

    def submit(self, kernel: Any, signature: tuple) -> Job:
        """The job compiling ``signature`` of ``kernel`` (a :class:`.compile.Kernel`
        with a file in the cache), queued once."""
        key = (kernel.source.key, signature)
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.state == "failed":
                job = self._jobs[key] = Job(kernel, signature)
                self._queue.append(job)
                self._pump()
        return job

    def _pump(self) -> None:
        """Send the next queued job to the worker if it is idle (under ``_lock``)."""
        while self._running is None and self._queue:
            job = self._queue.popleft()
            process = self._process or self._start()
            if process is None:
                self._finish(job, "failed")
                continue
            kernel = job.kernel
            message = pickle.dumps({
                "key": kernel.source.key, "function": kernel.source.function,
                "text": kernel.source.text, "parallel": kernel.source.parallel,
                "signature": job.signature}, protocol=pickle.HIGHEST_PROTOCOL)
            try:
                process.stdin.write(_HEADER.pack(len(message)) + message)
                process.stdin.flush()
            except (OSError, ValueError):  # the worker died
                self._died()
                self._finish(job, "failed")
                continue
            job.state, job.started, self._running = "running", time.perf_counter(), job
            from ...core.config import config
            if config.log_compiles:
                LOG.warning("symgrad: compiling k_%s (%s) in a worker process...",
                            kernel.source.key, kernel.what)

    def _start(self) -> _Detached | None:
        if self._deaths >= MAX_RESTARTS:
            return None
        kernels_dir = _cache_base()
        if kernels_dir is None:
            return None
        root = str(_PACKAGE_ROOT)
        code = (f"import sys; sys.path.insert(0, {root!r}); "
                "from symgrad.backend.numba.worker import main; main()")
        env = {**os.environ, "SYMGRAD_CACHE_DIR": str(kernels_dir.parent),
               "SYMGRAD_LOG_COMPILES": "0"}
        try:
            process = _Detached([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                start_new_session=True)
        except OSError:
            self._deaths = MAX_RESTARTS
            return None
        self._process = process
        threading.Thread(target=self._read, args=(process,), name="symgrad-compile-replies",
                         daemon=True).start()
        return process

    def _read(self, process: _Detached) -> None:
        """Replies of ``process``, one per job sent, until it ends (a daemon thread)."""
        stream = process.stdout
        while True:
            reply = _receive(stream)
            with self._lock:
                if reply is None:  # the worker ended (retired after MAX_JOBS) or crashed
                    if self._process is process:  # not retired: its job, if any, failed
                        job, self._running = self._running, None
                        self._ended(process, crashed=job is not None)
                        if job is not None:
                            self._finish(job, "failed")
                        self._pump()
                    break
                job, self._running = self._running, None
                if job is not None:
                    self._finish(job, "done" if reply.get("ok") else "failed", reply)
                if reply.get("last") and self._process is process:
                    self._process = None  # it ends now: the next job starts a new one
                self._pump()
        try:
            process.wait(timeout=5)  # reap it
        except (OSError, subprocess.TimeoutExpired):
            pass

    def _died(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            self._ended(process, crashed=True)

    def _ended(self, process: _Detached, crashed: bool) -> None:
        if self._process is process:
            self._process = None
        self._deaths += crashed

    def _finish(self, job: Job, state: str, reply: dict | None = None) -> None:
        self._jobs.pop((job.kernel.source.key, job.signature), None)
        if reply is not None and reply.get("how") == "compiled":
            count("compiled_in_workers")
            count("compile_seconds", reply.get("seconds", 0.0))
        job.state = state
        from ...core.config import config
        if config.log_compiles and reply is not None:
            how = {"compiled": "compiled", "loaded": "found on disk", "had": "found on disk"}
            LOG.warning("symgrad: %s k_%s (%s) in a worker process in %.2f s%s",
                        how.get(reply.get("how", ""), "failed to compile"),
                        job.kernel.source.key, job.kernel.what,
                        time.perf_counter() - job.started,
                        "" if reply.get("ok") else f": {reply.get('error', '')}")

    def _forked(self) -> None:
        """In a forked child: the parent's worker and queue are not ours."""
        for job in [*self._jobs.values(), *self._queue]:
            job.state = "failed"  # the calls waiting for them compile for themselves
        process = self._process
        if process is not None:
            for stream in (process.stdin, process.stdout):
                try:
                    os.close(stream.fileno())
                except (OSError, ValueError):
                    pass
        self.__init__()  # type: ignore[misc]


def _cache_base() -> Path | None:
    from .compile import cache_dir

    try:
        return cache_dir()
    except OSError:
        return None


def _receive(stream: Any) -> dict | None:
    header = stream.read(_HEADER.size)
    if not header or len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


POOL = Pool()
in_flight(lambda: len(POOL._jobs))


def submit(kernel: Any, signature: tuple) -> Job:
    """Compile ``signature`` of ``kernel`` in the worker process (see :class:`Pool`)."""
    return POOL.submit(kernel, signature)


def wait(timeout: float | None = None) -> bool:
    """Wait until this process's compile worker has nothing queued or running (tests,
    benchmarks); whether it is idle."""
    end = None if timeout is None else time.monotonic() + timeout
    while POOL._jobs and (end is None or time.monotonic() < end):
        time.sleep(0.01)
    return not POOL._jobs


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: POOL._forked())


def main() -> None:
    """The worker: read jobs from stdin, compile each into the cache, reply on stdout;
    end at end-of-file (the user's process is gone), skipping the exit's collections of
    what Numba left alive (:mod:`symgrad.core.teardown`: 0.37 s of CPU after a compile,
    taken from the user's next process on a busy machine)."""
    from ...core.teardown import skip_teardown

    try:
        _serve()
    finally:
        skip_teardown()


def _serve() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else prints goes to stderr (nowhere), not into the replies
    jobs = sys.stdin.buffer
    from .codegen import KernelSource
    from .compile import load

    for n in range(MAX_JOBS):
        job = _receive(jobs)
        if job is None:
            return
        start = time.perf_counter()
        try:
            kernel = load(KernelSource(job["key"], job["function"], job["text"],
                                       job["parallel"]))
            if kernel.path is None:
                raise OSError("the kernel cache is not usable")
            how = kernel.compile_signature(job["signature"])
            reply = {"ok": True, "how": how}
        except Exception as e:  # noqa: BLE001 -- the user's process compiles and raises it
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        reply["seconds"] = time.perf_counter() - start
        reply["last"] = n + 1 == MAX_JOBS
        data = pickle.dumps(reply)
        try:
            replies.write(_HEADER.pack(len(data)) + data)
            replies.flush()
        except OSError:
            return  # nobody listens: the kernel is on disk for the next process
