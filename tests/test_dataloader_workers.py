"""``DataLoader(num_workers>0)`` (symgrad/utils/data_workers.py) against real PyTorch: the
same batches in the same order as ``num_workers=0``, an IterableDataset sharded with
``get_worker_info``, ``worker_init_fn``, ``persistent_workers``, a worker's error
re-raised with its traceback, and PyTorch's argument errors."""

from __future__ import annotations

import os

import pytest

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402

LIBS = (symgrad, torch_real)


def _batches(loader):
    return [[t.tolist() for t in b] if isinstance(b, list) else b.tolist() for b in loader]


def test_map_style_batches_in_order_and_worker_info():
    def init(worker_id):  # runs in the worker, before any batch; its info is there
        info = worker_info()
        assert info.id == worker_id and info.num_workers == 2 and os.getpid() != parent
        assert info.dataset is not None

    parent = os.getpid()
    got = {}
    for L in LIBS:
        worker_info = L.utils.data.get_worker_info
        ds = L.utils.data.TensorDataset(L.arange(11.0), L.arange(11))
        loaders = [L.utils.data.DataLoader(ds, batch_size=3, num_workers=n, prefetch_factor=p,
                                           worker_init_fn=init if n else None)
                   for n, p in ((0, None), (2, 1), (2, 4))]
        got[L] = [_batches(d) for d in loaders]
        assert got[L][0] == got[L][1] == got[L][2]
        assert worker_info() is None
    assert got[symgrad] == got[torch_real]


def test_shuffled_batches_and_the_generator_after_them_do_not_depend_on_num_workers():
    """PyTorch draws the workers' base seed from the generator at every epoch's start, with
    or without workers, so a seeded shuffle is the same either way; symgrad drew it with
    workers only, and num_workers=2 shuffled the epoch otherwise than num_workers=0."""
    for L in LIBS:
        runs = []
        for n in (0, 2):
            L.manual_seed(0)
            ds = L.utils.data.TensorDataset(L.arange(13.0))
            runs.append((_batches(L.utils.data.DataLoader(ds, batch_size=4, shuffle=True,
                                                          num_workers=n)),
                         L.rand(1).item()))
        assert runs[0] == runs[1], L.__name__


def test_iterable_dataset_sharded_by_worker_and_persistent_workers():
    got = {}
    for L in LIBS:
        class Shards(L.utils.data.IterableDataset):
            def __iter__(self, L=L):
                info = L.utils.data.get_worker_info()
                return iter(range(info.id, 11, info.num_workers))

        loader = L.utils.data.DataLoader(Shards(), batch_size=2, num_workers=2,
                                         persistent_workers=True)
        got[L] = [_batches(loader), _batches(loader)]  # two epochs, the same processes
    assert got[symgrad] == got[torch_real]
    assert got[symgrad][0] == got[symgrad][1]


def test_error_in_a_worker_is_raised_with_its_traceback():
    messages = []
    for L in LIBS:
        class Broken(L.utils.data.TensorDataset):
            def __getitem__(self, i):
                if i == 5:
                    raise KeyError(f"no item {i}")
                return super().__getitem__(i)

        loader = L.utils.data.DataLoader(Broken(L.arange(8.0)), batch_size=2, num_workers=2)
        with pytest.raises(KeyError) as e:
            list(loader)
        messages.append(str(e.value))
    for m in messages:
        assert m.startswith("Caught KeyError in DataLoader worker process 0.\nOriginal "
                            "Traceback (most recent call last):\n")
        assert "in __getitem__" in m and m.endswith("KeyError: 'no item 5'\n")


@pytest.mark.parametrize("kwargs", [{"num_workers": -1}, {"prefetch_factor": 2},
                                    {"persistent_workers": True}])
def test_argument_errors_equal_pytorchs(kwargs):
    messages = []
    for L in LIBS:
        with pytest.raises(ValueError) as e:
            L.utils.data.DataLoader(L.utils.data.TensorDataset(L.arange(3.0)), **kwargs)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_an_epoch_left_early_does_not_leak_into_the_next():
    ds = symgrad.utils.data.TensorDataset(symgrad.arange(12.0))
    loader = symgrad.utils.data.DataLoader(ds, batch_size=2, num_workers=2,
                                           persistent_workers=True, prefetch_factor=3)
    for k, _ in enumerate(loader):
        if k == 1:
            break
    assert _batches(loader) == _batches(symgrad.utils.data.DataLoader(ds, batch_size=2))
