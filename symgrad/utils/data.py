"""``torch.utils.data``: ``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``,
``random_split``, ``DataLoader`` and ``default_collate``, in the main process.

``DataLoader`` batches a map-style dataset (``batch_size``, ``drop_last``, a
``collate_fn``; the default one stacks tensors, makes float and int numbers
float64 and int64 tensors, and recurses into tuples (made lists), lists and
dicts, as PyTorch's) or iterates an ``IterableDataset``. ``shuffle=True`` draws a new
permutation each epoch: from ``generator`` if given, else from a seed drawn from
the default generator, so ``torch.manual_seed`` makes the order reproducible, as in
PyTorch. The permutations are numpy's (PCG64, like every random draw of symgrad's:
see :mod:`symgrad.eager.random`), not PyTorch's numbers; a program compared with
PyTorch step by step uses ``shuffle=False`` or passes its own ``sampler`` of indices.
``num_workers > 0`` loads in worker processes (:mod:`.data_workers`), the same batches in
the same order.

    >>> import symgrad as torch
    >>> from symgrad.utils.data import DataLoader, TensorDataset
    >>> data = TensorDataset(torch.arange(5.0), torch.arange(5))
    >>> [tuple(y.tolist()) for _, y in DataLoader(data, batch_size=2)]
    [(0, 1), (2, 3), (4,)]
"""

from __future__ import annotations

import bisect
import copy
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from ..eager import dtypes as dt
from ..eager.functions import stack
from ..eager.random import Generator, numpy_generator
from ..eager.tensor import Tensor
from ..eager.tensor_ops import tensor
from .data_workers import Workers, base_seed, get_worker_info

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "random_split", "DataLoader", "default_collate", "Sampler", "SequentialSampler",
           "RandomSampler", "BatchSampler", "default_convert", "SubsetRandomSampler",
           "WeightedRandomSampler", "get_worker_info"]


class Dataset:
    """A map-style dataset: ``__getitem__(index)`` and ``__len__``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is iterated (``__iter__``), not indexed."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; the tensors share their first size."""

    def __init__(self, *tensors: Tensor):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")  # (PyTorch's type)
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Any, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The datasets one after another."""

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]).tolist())

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[k][idx - (self.cumulative_sizes[k - 1] if k else 0)]


def _permutation(n: int, generator: Generator | None) -> list[int]:
    return numpy_generator(generator).permutation(n).tolist()


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping ``Subset``s of the given lengths (or
    fractions of its length, the remainder dealt round-robin, as PyTorch), after one
    permutation from ``generator`` (the default generator if None)."""
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _permutation(n, generator)
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out


class Sampler:
    """Yields dataset indices."""

    def __init__(self, data_source: Any = None):
        pass


class SequentialSampler(Sampler):
    def __init__(self, data_source: Any):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _stream(generator: Generator | None) -> np.random.Generator:
    """``generator``'s numbers, else a generator seeded from the default one (PyTorch's
    scheme, numpy's numbers)."""
    if generator is not None:
        return numpy_generator(generator)
    return np.random.default_rng(int(numpy_generator(None).integers(0, 2 ** 63)))


class RandomSampler(Sampler):
    """A new permutation at each iteration (or ``num_samples`` indices, drawn with
    ``replacement`` or as repeated permutations), from ``generator`` or a seed drawn from
    the default generator."""

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, rng = len(self.data_source), _stream(self.generator)
        if self.replacement:
            return iter(rng.integers(0, n, self.num_samples).tolist())
        order = [rng.permutation(n).tolist() for _ in range(-(-self.num_samples // n))]
        return iter([i for block in order for i in block][:self.num_samples])

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The ``indices`` in a new random order at each iteration."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None):
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        return iter([self.indices[i] for i in
                     numpy_generator(self.generator).permutation(len(self.indices))])

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) \
                or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        w = np.asarray(weights._value if isinstance(weights, Tensor) else weights, float)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        if not replacement and num_samples > len(w):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        self.weights, self.num_samples = tensor(w), num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self) -> Iterator[int]:
        w, rng = self.weights._value, numpy_generator(self.generator)
        if self.replacement:
            picks = rng.choice(len(w), self.num_samples, p=w / w.sum())
        else:  # PyTorch's multinomial: the largest w / Exp(1) first (zero weights last)
            picks = np.argsort(-(w / rng.exponential(size=len(w))), kind="stable")
        return iter(picks[:self.num_samples].tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def default_collate(batch: Sequence[Any]) -> Any:
    """PyTorch's default collation: tensors stacked; numpy arrays made tensors and
    stacked; Python floats a float64 tensor, ints an int64 tensor, bools a bool tensor;
    strings kept in a list; mappings and sequences collated field by field (a tuple
    becomes a list, a named tuple stays one, as in PyTorch)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSU":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found {elem.dtype}")
        return stack([tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic):
        return tensor(np.array(batch))
    if isinstance(elem, bool):
        return tensor(list(batch), dtype=dt.bool)
    if isinstance(elem, float):
        return tensor(list(batch), dtype=dt.float64)
    if isinstance(elem, int):
        return tensor(list(batch), dtype=dt.int64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        return _same_mapping(elem, {key: default_collate([d[key] for d in batch])
                                    for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else type(elem)(columns)  # (as PyTorch)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem)}")


def _same_mapping(like: Mapping, items: dict) -> Any:
    """``items`` in ``like``'s mapping type (an ``OrderedDict`` stays one), as PyTorch's:
    a copy updated if it is mutable, else built from a dict, else a plain dict."""
    if isinstance(like, MutableMapping):
        clone = copy.copy(like)
        clone.update(items)
        return clone
    try:
        return type(like)(items)
    except TypeError:
        return items


def default_convert(data: Any) -> Any:
    """Without batching (``batch_size=None``): numpy arrays and scalars made tensors,
    tuples made lists, everything else kept, recursively (PyTorch's)."""
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_,
                                                                            np.bytes_)):
        return data if data.dtype.kind in "OSU" else tensor(data)
    if isinstance(data, Mapping):
        return _same_mapping(data, {key: default_convert(value)
                                    for key, value in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return [default_convert(d) for d in data]
    return data


class DataLoader:
    """Batches of ``dataset``: ``batch_size`` (None: samples one by one, uncollated),
    ``shuffle``, ``sampler``/``batch_sampler``, ``drop_last``, ``collate_fn`` and
    ``generator``, as PyTorch's in one process."""

    def __init__(self, dataset: Dataset, batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Iterable[int] | None = None,
                 batch_sampler: Iterable[list[int]] | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Any = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None,
                 *, prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers == 0 and persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.num_workers, self.generator = num_workers, generator
        self.prefetch_factor = 2 if num_workers and prefetch_factor is None else prefetch_factor
        self.persistent_workers, self.worker_init_fn = persistent_workers, worker_init_fn
        self.timeout, self.multiprocessing_context = timeout, multiprocessing_context
        self._workers: Workers | None = None
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, "
                             "sampler or batch_sampler option")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = self.batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self._auto_collation = batch_sampler is not None or (self._iterable and
                                                             batch_size is not None)
        self.collate_fn = collate_fn or (default_collate if self._auto_collation
                                         else default_convert)

    def __iter__(self) -> Iterator[Any]:
        if not self.num_workers:
            return self._single_process()
        return self._from_workers()

    def _single_process(self) -> Iterator[Any]:
        base_seed(self)  # drawn as with workers: the same shuffle (PyTorch's)
        if self._iterable:
            yield from self._single_process_batches()
            return
        yield from (self._fetch(task) for task in self._index_batches())

    def _from_workers(self) -> Iterator[Any]:
        workers = self._workers or Workers(self)
        if self.persistent_workers:
            self._workers = workers
        try:
            yield from workers.epoch(self)
        finally:
            if not self.persistent_workers:
                workers.shutdown()

    def __del__(self) -> None:
        if getattr(self, "_workers", None) is not None:
            self._workers.shutdown()  # type: ignore[union-attr]

    def _single_process_batches(self) -> Iterator[Any]:
        """An IterableDataset's batches (in the process that runs it)."""
        if self.batch_size is None:
            yield from (self.collate_fn(x) for x in self.dataset)  # type: ignore[attr-defined]
            return
        batches = BatchSampler(iter(self.dataset), self.batch_size,  # type: ignore
                               self.drop_last)
        yield from (self.collate_fn(b) for b in batches)

    def _index_batches(self) -> Iterator[Any]:
        """A map-style dataset's tasks: each batch's indices (an index without batching)."""
        return iter(self.batch_sampler if self.batch_sampler is not None
                    else self.sampler)  # type: ignore[arg-type]

    def _fetch(self, task: Any) -> Any:
        if self.batch_sampler is not None:
            return self.collate_fn([self.dataset[i] for i in task])
        return self.collate_fn(self.dataset[task])

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]
