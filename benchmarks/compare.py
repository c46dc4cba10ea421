"""Two commits of symgrad on run.py's quick problems, timed in turns: ``run.py --compare REV``.

The commit ``REV`` is checked out with ``git worktree add --detach`` in a temporary
directory. Two worker processes start, one importing symgrad from that tree and one
from this one (``PYTHONPATH``; each prints where its symgrad came from), each with its
own new, empty kernel cache directory and the same environment otherwise. Both run
*this* tree's problem definitions (benchmarks/run.py), so only symgrad differs.

Each worker first calls each problem's gradient once (the compile, timed as
``first call``; ``SYMGRAD_TIERED=0``, so it waits for the kernel; the two workers in
turns, alternating which goes first) and checks it against the handwritten numpy
gradient. Then, for ``rounds`` rounds, the parent asks for one
timing of each problem from one worker and then from the other, alternating which goes
first; only one worker runs at a time. A timing is the median over batches of calls of
about 2 ms (garbage collection off), as run.py's. The table shows each side's median
over the rounds and new/old: above 1 is slower. A ratio is noise unless it stays away
from 1 across runs; rerun to see.

    python benchmarks/run.py --quick --compare 89f36fe --rounds 7
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def worker() -> None:
    """Answer lines on stdin: ``first <problem>`` (its first call, timed, and the check)
    or ``time <problem> <budget>``; one JSON line out per request (``names`` first)."""
    sys.path.insert(0, str(HERE))
    import numpy as np
    import run as R  # this tree's problems; `symgrad` is whichever PYTHONPATH names

    import symgrad as sg

    problems = {p.name: p for p in R.PROBLEMS}
    grads: dict = {}
    print(json.dumps({"symgrad": sg.__file__, "names": list(problems)}), flush=True)
    for line in sys.stdin:
        request, name, *rest = line.split()
        if request == "first":
            p = problems[name]
            args = p.make_args(p.quick_n, np.random.default_rng(0))
            fn = R.symgrad_impl(p, args)
            start = R.time.perf_counter()
            got = fn()
            seconds = R.time.perf_counter() - start
            R.check_gradients(p, "symgrad", got, p.numpy_grad(*args))
            grads[name] = fn
        else:
            seconds = R.per_call({"grad": grads[name]}, float(rest[0]), rounds=1)["grad"]
        print(json.dumps(seconds), flush=True)


def _start(tree: Path, cache: Path) -> subprocess.Popen:
    # SYMGRAD_TIERED=0: the first call compiles (no interpreter answering meanwhile), so
    # every timing is of the compiled kernel
    env = {**os.environ, "PYTHONPATH": str(tree), "SYMGRAD_CACHE_DIR": str(cache),
           "SYMGRAD_TIERED": "0"}
    proc = subprocess.Popen([sys.executable, __file__, "--worker"], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            cwd=tempfile.gettempdir())
    hello = _ask(proc, None)
    if not Path(hello["symgrad"]).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"the worker for {tree} imported symgrad from {hello['symgrad']}")
    proc.names = hello["names"]  # type: ignore[attr-defined]
    return proc


def _ask(proc: subprocess.Popen, request: str | None) -> object:
    if request is not None:
        proc.stdin.write(request + "\n")
        proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"a worker stopped (request {request!r}); its error is above")
    return json.loads(line)


def compare(rev: str, rounds: int = 5, budget: float = 0.2) -> str:
    """The table of new/old times of the quick problems, ``rev`` against this tree."""
    with tempfile.TemporaryDirectory(prefix="symgrad-compare-") as tmp:
        old_tree = Path(tmp) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet",
                        str(old_tree), rev], check=True)
        commit = subprocess.run(["git", "-C", str(old_tree), "rev-parse", "--short", "HEAD"],
                                check=True, capture_output=True, text=True).stdout.strip()
        procs = {}
        try:
            for side, tree in (("old", old_tree), ("new", ROOT)):
                cache = Path(tmp) / f"cache-{side}"
                cache.mkdir()
                procs[side] = _start(tree, cache)
            names = procs["new"].names
            first: dict = {side: {} for side in procs}
            for k, name in enumerate(names):  # the compiles in turns too
                for side in ("old", "new") if k % 2 == 0 else ("new", "old"):
                    first[side][name] = _ask(procs[side], f"first {name}")
            times: dict = {side: {name: [] for name in names} for side in procs}
            for k in range(rounds):
                order = ("old", "new") if k % 2 == 0 else ("new", "old")
                for name in names:
                    for side in order:
                        times[side][name].append(_ask(procs[side], f"time {name} {budget}"))
        finally:
            for p in procs.values():
                p.stdin.close()
                p.wait(timeout=60)
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(old_tree)], check=False)
    rows = [f"old = {rev} ({commit}), new = this tree; {rounds} rounds, medians; "
            "first call = compile, empty caches",
            f"{'problem':22} {'old':>10} {'new':>10} {'new/old':>8}   "
            f"{'first old':>9} {'first new':>9}"]
    for name in names:
        old, new = (statistics.median(times[s][name]) for s in ("old", "new"))
        rows.append(f"{name:22} {old * 1e6:8.1f}us {new * 1e6:8.1f}us {new / old:8.2f}   "
                    f"{first['old'][name]:8.2f}s {first['new'][name]:8.2f}s")
    return "\n".join(rows)


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker()
