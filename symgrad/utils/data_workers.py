"""``DataLoader(num_workers>0)``: batches loaded by worker processes, as PyTorch's.

Each worker is a process (``fork`` where the platform has it, else the
``multiprocessing_context`` given or the platform's default) holding a copy of the
dataset, made when the workers start. The main process sends each worker the indices
of a batch (round-robin, ``prefetch_factor`` batches ahead per worker), the worker
fetches and collates it and sends it back, and the loader yields the batches in the
sampler's order: the same batches, in the same order, as ``num_workers=0``. An
``IterableDataset`` is iterated by every worker on its own copy (shard it with
:func:`get_worker_info`, as in PyTorch); their batches come round-robin until each is
exhausted. In a worker, :func:`get_worker_info` gives its ``id``, ``num_workers``,
``seed`` and ``dataset``; ``worker_init_fn(worker_id)`` runs first; its random
generators (``symgrad.manual_seed``, Python's ``random``) are seeded with
``base_seed + id``, ``base_seed`` drawn from the loader's generator when the workers
start (each epoch, or once with ``persistent_workers``; the numbers are numpy's, not
PyTorch's). An error in a worker is raised in the main process
as the same exception type, with the worker's traceback in its message. With
``persistent_workers=True`` the processes serve every epoch; otherwise they end with
the epoch (or when the iterator is dropped).

    >>> import symgrad as torch
    >>> from symgrad.utils.data import DataLoader, TensorDataset
    >>> data = TensorDataset(torch.arange(6.0))
    >>> [b[0].tolist() for b in DataLoader(data, batch_size=2, num_workers=2)]
    [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
"""

from __future__ import annotations

import multiprocessing
import queue
import random
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..eager import random as sg_random

#: this process's WorkerInfo (None in the main process)
_INFO: WorkerInfo | None = None


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` tells a worker (PyTorch's fields)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """The worker's :class:`WorkerInfo` in a DataLoader worker process, None elsewhere."""
    return _INFO


class _Failure:
    """An exception of a worker, carried to the main process (PyTorch's
    ``ExceptionWrapper``): its type and the worker's traceback as text."""

    def __init__(self, where: str):
        self.where, self.type = where, sys.exc_info()[0]
        self.text = traceback.format_exc()

    def reraise(self) -> None:
        message = f"Caught {self.type.__name__} {self.where}.\nOriginal {self.text}"
        if self.type is KeyError:  # (KeyError's str is its argument's repr: the text kept)
            message = _KeyErrorMessage(message)
        try:
            error = self.type(message)
        except Exception:  # (an exception type that needs other arguments)
            error = RuntimeError(message)
        raise error


class _KeyErrorMessage(str):
    def __repr__(self) -> str:
        return self


_EXHAUSTED = "exhausted"  # an IterableDataset's worker ran out


#: the loader whose workers are being forked (a child reads it from its copy of memory: a
#: Process holding the loader in its arguments would make a cycle that delays shutdown)
_FORKING: Any = None


def _worker(loader: Any, worker_id: int, seed: int, tasks: Any, results: Any) -> None:
    """A worker process: seeds, ``worker_init_fn``, then a batch per task until None."""
    global _INFO
    loader = _FORKING if loader is None else loader
    results.cancel_join_thread()  # (exit without waiting for results nobody reads)
    _INFO = WorkerInfo(worker_id, loader.num_workers, seed, loader.dataset)
    sg_random.manual_seed(seed % 2 ** 63)
    random.seed(seed)
    init_failed = None
    if loader.worker_init_fn is not None:
        try:
            loader.worker_init_fn(worker_id)
        except Exception:
            init_failed = _Failure(f"in DataLoader worker process {worker_id}")
    epoch_iterator = None
    while True:
        task = tasks.get()
        if task is None:
            return
        kind, send_idx, payload = task
        if kind == "epoch":  # a new epoch: a new iterator of an IterableDataset
            epoch_iterator = None
            continue
        if init_failed is not None:
            results.put((send_idx, init_failed))
            continue
        try:
            if loader._iterable:
                if epoch_iterator is None:
                    epoch_iterator = loader._single_process_batches()
                data: Any = next(epoch_iterator, _EXHAUSTED)
            else:
                data = loader._fetch(payload)
        except Exception:
            data = _Failure(f"in DataLoader worker process {worker_id}")
        results.put((send_idx, data))


def _context(loader: Any) -> Any:
    if loader.multiprocessing_context is not None:
        ctx = loader.multiprocessing_context
        return multiprocessing.get_context(ctx) if isinstance(ctx, str) else ctx
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def base_seed(loader: Any) -> int:
    """The workers' base seed, drawn from the loader's generator at the start of an epoch
    with or without workers, as PyTorch's ``_BaseDataLoaderIter`` draws it, so that the
    sampler's numbers after it are the same either way (drawn only with workers, it
    shuffled the epoch otherwise than ``num_workers=0``)."""
    return int(sg_random.numpy_generator(loader.generator).integers(0, 2 ** 62))


class Workers:
    """The worker processes of a loader (one epoch's, or kept: ``persistent_workers``)."""

    def __init__(self, loader: Any):
        global _FORKING
        ctx = _context(loader)
        self.timeout, self.epochs = loader.timeout, 0
        self.results = ctx.Queue()
        self.tasks = [ctx.Queue() for _ in range(loader.num_workers)]
        base = base_seed(loader)
        fork = ctx.get_start_method() == "fork"
        self.processes = [ctx.Process(target=_worker, daemon=True, args=(
            None if fork else loader, k, base + k, self.tasks[k], self.results))
            for k in range(loader.num_workers)]
        _FORKING = loader
        try:
            for p in self.processes:
                p.start()
        finally:
            _FORKING = None

    def epoch(self, loader: Any) -> Iterator[Any]:
        """This epoch's batches, in order."""
        n = loader.num_workers
        self.epochs += 1  # (results of an epoch left early are told apart and dropped)
        for q in self.tasks:
            q.put(("epoch", -1, None))
        ahead = loader.prefetch_factor * n
        if loader._iterable:
            yield from self._iterable_epoch(n, ahead)
            return
        batches = enumerate(loader._index_batches())
        pending: dict[int, Any] = {}
        sent = received = 0
        for idx, indices in batches:  # the first ``ahead`` tasks, round-robin
            self.tasks[idx % n].put(("batch", (self.epochs, idx), indices))
            sent += 1
            if sent >= ahead:
                break
        while received < sent:
            while received not in pending:
                k, data = self._get()
                pending[k] = data
            data = pending.pop(received)
            received += 1
            nxt = next(batches, None)
            if nxt is not None:
                self.tasks[nxt[0] % n].put(("batch", (self.epochs, nxt[0]), nxt[1]))
                sent += 1
            if isinstance(data, _Failure):
                data.reraise()
            yield data

    def _iterable_epoch(self, n: int, ahead: int) -> Iterator[Any]:
        live = list(range(n))
        sent: list[int] = []  # the worker of each task sent, in order
        pending: dict[int, Any] = {}
        turn = 0

        def send() -> None:
            nonlocal turn
            if not live:
                return
            k = live[turn % len(live)]
            turn += 1
            self.tasks[k].put(("batch", (self.epochs, len(sent)), None))
            sent.append(k)
        for _ in range(ahead):
            send()
        done = 0
        while done < len(sent):
            while done not in pending:
                idx, data = self._get()
                pending[idx] = data
            data, k = pending.pop(done), sent[done]
            done += 1
            if isinstance(data, str) and data == _EXHAUSTED:
                if k in live:
                    live.remove(k)
                continue
            if k in live:
                send()
            if isinstance(data, _Failure):
                data.reraise()
            yield data

    def _get(self) -> tuple[int, Any]:
        """The next result of this epoch: (its batch's position, the batch)."""
        timeout = self.timeout or None
        while True:
            try:
                (epoch, idx), data = self.results.get(timeout=timeout or 5.0)
                if epoch == self.epochs:
                    return idx, data
            except queue.Empty:
                dead = [k for k, p in enumerate(self.processes) if not p.is_alive()]
                if dead:
                    raise RuntimeError(f"DataLoader worker (pid(s) "
                                       f"{', '.join(str(self.processes[k].pid) for k in dead)}"
                                       ") exited unexpectedly") from None
                if timeout is not None:
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds") \
                        from None

    def shutdown(self) -> None:
        for q in self.tasks:
            q.put(None)
        for p in self.processes:
            p.join(timeout=1)
            if p.is_alive():
                p.terminate()
