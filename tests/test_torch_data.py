"""``symgrad.utils.data`` (``torch.utils.data``) against real PyTorch 2.13: the batches
of ``DataLoader`` without shuffling (values, dtypes, structure) for tensors, numbers,
tuples and dicts, ``drop_last`` and ``len``; ``random_split``'s sizes; and, since
symgrad's permutations are numpy's (not PyTorch's numbers), shuffling checked by what
it must guarantee: a permutation, new each epoch, reproducible from the seed."""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")
from torch_oracle import float64_default  # noqa: E402,F401

import symgrad  # noqa: E402
from symgrad.utils import data  # noqa: E402


def _flat(batch):
    """A batch as nested lists of (array, dtype name) leaves, comparable across libraries."""
    if isinstance(batch, dict):
        return {k: _flat(v) for k, v in batch.items()}
    if isinstance(batch, (tuple, list)):
        return [type(batch).__name__, [_flat(v) for v in batch]]
    if isinstance(batch, (str, int, float)):
        return batch
    return (batch.numpy().tolist(), str(batch.dtype).replace("torch.", ""))


class Pairs:
    """A dataset of mixed samples, written once for either library."""

    def __init__(self, lib, n=7):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = self.lib.arange(3.0) * i
        return {"x": x, "label": i % 3, "weight": 0.5 * i, "pair": (x[:2], [i, True]),
                "name": f"s{i}", "np": np.float32(i)}


@pytest.mark.parametrize("batch_size, drop_last", [(3, False), (3, True), (1, False),
                                                   (None, False), (7, True)])
def test_dataloader_batches_equal_pytorch(batch_size, drop_last):
    got, want = [], []
    for lib, sink, mod in ((symgrad, got, data), (torch_real, want, torch_real.utils.data)):
        loader = mod.DataLoader(Pairs(lib), batch_size=batch_size, drop_last=drop_last)
        sink.append(len(loader))
        sink.extend(_flat(b) for b in loader)
    assert got == want


def test_collate_keeps_the_mapping_type_as_pytorch():
    """An OrderedDict sample (nested too) collates to an OrderedDict, also without
    batching (default_convert), as PyTorch's (symgrad made a plain dict)."""
    import collections
    for batch_size in (2, None):
        got, want = [], []
        for sink, mod in ((got, data), (want, torch_real.utils.data)):
            samples = [collections.OrderedDict(b=np.float32(i), a={"c": collections.OrderedDict(
                d=i)}) for i in range(3)]
            for batch in mod.DataLoader(samples, batch_size=batch_size):
                sink.append((type(batch).__name__, type(batch["a"]["c"]).__name__,
                             list(batch), _flat(batch["a"]["c"]["d"])
                             if batch_size else batch["a"]["c"]["d"]))
        assert got == want
        assert got[0][:3] == ("OrderedDict", "OrderedDict", ["b", "a"])


def test_tensor_dataset_subset_concat_and_errors():
    for lib, mod in ((symgrad, data), (torch_real, torch_real.utils.data)):
        x, y = lib.arange(12.0).reshape(6, 2), lib.arange(6)
        ds = mod.TensorDataset(x, y)
        sub = mod.Subset(ds, [4, 0, 2])
        both = mod.ConcatDataset([sub, ds])
        assert len(both) == 9
        assert both[-1][1].item() == 5 and both[1][1].item() == 0 and both[3][1].item() == 0
        batches = [b[1].tolist() for b in mod.DataLoader(both, batch_size=4)]
        assert batches == [[4, 0, 2, 0], [1, 2, 3, 4], [5]]
        with pytest.raises(AssertionError, match="Size mismatch"):
            mod.TensorDataset(x, lib.arange(5))
        with pytest.raises(ValueError, match="mutually exclusive"):
            mod.DataLoader(ds, sampler=[0, 1], shuffle=True)


@pytest.mark.parametrize("lengths", [[3, 4], [0.5, 0.5], [0.3, 0.3, 0.4], [0.25, 0.75]])
def test_random_split_sizes_equal_pytorch_and_partition(lengths):
    ds = data.TensorDataset(symgrad.arange(7))
    parts = data.random_split(ds, lengths, generator=symgrad.Generator().manual_seed(1))
    real = torch_real.utils.data.random_split(torch_real.utils.data.TensorDataset(
        torch_real.arange(7)), lengths)
    assert [len(p) for p in parts] == [len(p) for p in real]
    assert sorted(int(p[i][0]) for p in parts for i in range(len(p))) == list(range(7))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(ds, [3, 3])


def test_shuffle_is_a_new_reproducible_permutation_each_epoch():
    ds = data.TensorDataset(symgrad.arange(20))

    def epochs(**options):
        loader = data.DataLoader(ds, batch_size=6, shuffle=True, **options)
        return [[int(v) for (b,) in loader for v in b] for _ in range(3)]

    symgrad.manual_seed(3)
    first = epochs()
    symgrad.manual_seed(3)
    assert epochs() == first  # the default generator's seed fixes every epoch's order
    assert all(sorted(e) == list(range(20)) for e in first)
    assert first[0] != first[1] != first[2] and first[0] != list(range(20))
    symgrad.manual_seed(4)
    assert epochs() != first
    # generator=: its own stream, independent of the default generator
    a = epochs(generator=symgrad.Generator().manual_seed(5))
    symgrad.manual_seed(99)
    assert epochs(generator=symgrad.Generator().manual_seed(5)) == a
    last = list(data.DataLoader(ds, batch_size=6, shuffle=True, drop_last=True))
    assert [len(b[0]) for b in last] == [6, 6, 6]


def test_iterable_dataset_and_training_loop():
    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    assert [b.tolist() for b in data.DataLoader(Stream(), batch_size=2)] == [[0, 1], [2, 3],
                                                                             [4]]
    # (num_workers > 0: tests/test_dataloader_workers.py)
    assert data.get_worker_info() is None is torch_real.utils.data.get_worker_info()
    # a loop as readers write it, through `import symgrad as torch` names
    torch = symgrad
    x = torch.linspace(-1, 1, 16).reshape(16, 1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, 3 * x), batch_size=4)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.3)
    for _ in range(30):
        for xb, yb in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(xb), yb).backward()
            opt.step()
    assert abs(model.weight.item() - 3) < 1e-3


class SequenceClassifier:
    """A reader's next program, written once against ``torch``: an embedding, a
    bidirectional GRU and a linear head over a DataLoader of padded sequences, NAdam
    with a warm-up then cosine schedule, gradient clipping."""

    def __init__(self, torch):
        nn = torch.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(6, 4)
                self.gru = nn.GRU(4, 5, batch_first=True, bidirectional=True)
                self.head = nn.Linear(10, 3)

            def forward(self, tokens):
                out, h = self.gru(self.embed(tokens))
                return self.head(torch.cat([h[0], h[1]], dim=1))

        self.torch, self.model = torch, Net()

    def train(self, tokens, labels, epochs=2):
        torch = self.torch
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(tokens, labels),
                                             batch_size=3)
        opt = torch.optim.NAdam(self.model.parameters(), lr=0.05)
        warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
        cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
        sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[2])
        losses = []
        for _ in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(self.model(x), y)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                opt.step()
                sched.step()
                losses.append(loss.item())
        return losses


def test_a_sequence_program_runs_unchanged_and_equals_pytorch():
    rng = np.random.default_rng(5)
    seqs = [rng.integers(1, 6, n) for n in (4, 2, 3, 4, 1, 3, 2)]
    labels = rng.integers(0, 3, len(seqs))
    runs = {lib: SequenceClassifier(lib) for lib in (torch_real, symgrad)}
    state = runs[torch_real].model.state_dict()
    runs[symgrad].model.load_state_dict({k: symgrad.tensor(v.numpy()) for k, v in state.items()})
    losses = []
    for lib, run in runs.items():
        padded = lib.nn.utils.rnn.pad_sequence([lib.tensor(s) for s in seqs], batch_first=True)
        losses.append(run.train(padded, lib.tensor(labels)))
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-10)
    assert len(losses[0]) == 6


def test_random_samplers_draw_what_they_promise():
    ds = data.TensorDataset(symgrad.arange(5))
    g = symgrad.Generator().manual_seed(0)
    twice = list(data.RandomSampler(ds, num_samples=12, generator=g))
    assert len(twice) == 12 and sorted(twice[:5]) == sorted(twice[5:10]) == list(range(5))
    drawn = list(data.RandomSampler(ds, replacement=True, num_samples=200, generator=g))
    assert set(drawn) == set(range(5))
    subset = list(data.SubsetRandomSampler([7, 8, 9], generator=g))
    assert sorted(subset) == [7, 8, 9]
    weighted = list(data.WeightedRandomSampler([0.0, 1.0, 3.0], 400, generator=g))
    assert 0 not in weighted and 0.6 < weighted.count(2) / 400 < 0.9
    for mod in (data, torch_real.utils.data):
        assert sorted(mod.WeightedRandomSampler([1.0, 0.0, 2.0, 1.0], 3,
                                                replacement=False)) == [0, 2, 3]
        assert list(mod.WeightedRandomSampler([1.0, 0.0], 2, replacement=False)) == [0, 1]
    loader = data.DataLoader(ds, batch_size=2, sampler=data.SubsetRandomSampler([0, 4]))
    assert sorted(int(v) for (b,) in loader for v in b) == [0, 4]
    for mod in (data, torch_real.utils.data):
        with pytest.raises(ValueError, match="num_samples should be a positive integer"):
            mod.RandomSampler(ds, num_samples=0)
        with pytest.raises(RuntimeError, match="cannot sample n_sample"):
            list(mod.WeightedRandomSampler([1.0, 0.0], 3, replacement=False))
