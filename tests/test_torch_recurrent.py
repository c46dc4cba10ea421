"""nn.RNN, LSTM, GRU and their cells (symgrad/nn/recurrent.py) against real PyTorch 2.13
in float64: a PyTorch module's state_dict loaded into symgrad's module (the same
names, shapes and order), then the outputs, final states and the gradients of the
input, the initial states and every parameter compared at rtol 1e-12, over layouts
(batch_first, unbatched), depth, direction, bias and nonlinearity; a few steps of
training; pad_sequence."""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")
from torch_oracle import float64_default  # noqa: E402,F401

import symgrad  # noqa: E402

RTOL, ATOL = 1e-12, 1e-13


def _copy_into(mine, theirs):
    state = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()}
    assert list(state) == list(mine.state_dict())  # PyTorch's names in PyTorch's order
    assert all(tuple(mine.state_dict()[k].shape) == v.shape for k, v in state.items())
    mine.load_state_dict({k: symgrad.tensor(v) for k, v in state.items()})


def _run(lib, module, x, h0, batched, lstm):
    inp = lib.tensor(x, requires_grad=True)
    states = None if h0 is None else tuple(lib.tensor(h, requires_grad=True) for h in h0)
    hx = None if states is None else (states if lstm else states[0])
    out, hn = module(inp, hx)
    finals = hn if lstm else (hn,)
    rng = np.random.default_rng(1)
    loss = (out * lib.tensor(rng.standard_normal(tuple(out.shape)))).sum()
    for h in finals:
        loss = loss + (h * lib.tensor(rng.standard_normal(tuple(h.shape)))).sum()
    loss.backward()
    values = [out.detach().numpy()] + [h.detach().numpy() for h in finals]
    grads = [inp.grad.numpy()] + ([] if states is None else [s.grad.numpy() for s in states])
    grads += [p.grad.numpy() for p in module.parameters()]
    return values, grads


CASES = [
    ("RNN", dict(), dict(batch_first=False), True, True),
    ("RNN", dict(nonlinearity="relu", num_layers=2), dict(batch_first=True), True, False),
    ("RNN", dict(bidirectional=True, bias=False), dict(batch_first=False), False, True),
    ("LSTM", dict(), dict(batch_first=False), True, True),
    ("LSTM", dict(num_layers=2, bidirectional=True), dict(batch_first=True), True, True),
    ("LSTM", dict(num_layers=2, bias=False), dict(batch_first=False), False, False),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2), dict(batch_first=True), True,
     True),
    ("LSTM", dict(proj_size=3, bias=False), dict(batch_first=False), False, True),
    ("GRU", dict(), dict(batch_first=True), True, True),
    ("GRU", dict(num_layers=3, bidirectional=True), dict(batch_first=False), True, False),
    ("GRU", dict(bias=False), dict(batch_first=False), False, True),
]


@pytest.mark.parametrize("name, options, layout, batched, with_h0", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_recurrent_layers_equal_pytorch(name, options, layout, batched, with_h0):
    torch_real.manual_seed(0)
    theirs = getattr(torch_real.nn, name)(3, 4, **options, **layout)
    mine = getattr(symgrad.nn, name)(3, 4, **options, **layout)
    _copy_into(mine, theirs)
    rng = np.random.default_rng(0)
    length, batch = 5, 2
    shape = ((batch, length, 3) if layout["batch_first"] else (length, batch, 3)) if batched \
        else (length, 3)
    x = rng.standard_normal(shape)
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    width = options.get("proj_size", 4)
    h0 = None if not with_h0 else tuple(
        rng.standard_normal((layers, batch, size) if batched else (layers, size))
        for size in ((width, 4) if name == "LSTM" else (width,)))
    got = _run(symgrad, mine, x, h0, batched, name == "LSTM")
    want = _run(torch_real, theirs, x, h0, batched, name == "LSTM")
    for a, b in zip(got[0] + got[1], want[0] + want[1]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
    assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("name, options", [("RNNCell", {}), ("RNNCell", dict(
    nonlinearity="relu", bias=False)), ("LSTMCell", {}), ("GRUCell", {}),
    ("GRUCell", dict(bias=False))])
def test_cells_equal_pytorch_over_a_few_steps(name, options):
    torch_real.manual_seed(1)
    theirs = getattr(torch_real.nn, name)(3, 4, **options)
    mine = getattr(symgrad.nn, name)(3, 4, **options)
    _copy_into(mine, theirs)
    rng = np.random.default_rng(2)
    xs, weight = rng.standard_normal((3, 2, 3)), rng.standard_normal(4)
    results = []
    for lib, cell in ((symgrad, mine), (torch_real, theirs)):
        inputs = [lib.tensor(x, requires_grad=True) for x in xs]
        state = None
        for k, x in enumerate(inputs):  # unbatched at the last step
            if k == 2:
                x = x[0]
                state = tuple(s[0] for s in state) if name == "LSTMCell" else state[0]
            state = cell(x, state)
        h = state[0] + 2 * state[1] if name == "LSTMCell" else state
        (h * lib.tensor(weight)).sum().backward()
        results.append([h.detach().numpy()] + [x.grad.numpy() for x in inputs]
                       + [p.grad.numpy() for p in cell.parameters()])
    for a, b in zip(*results):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
    assert repr(mine) == repr(theirs)


def test_training_an_lstm_follows_pytorch_step_by_step():
    torch_real.manual_seed(2)
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 1))
    models = {lib: (lib.nn.LSTM(2, 3, num_layers=2, batch_first=True), lib.nn.Linear(3, 1))
              for lib in (torch_real, symgrad)}
    for mine, theirs in zip(models[symgrad], models[torch_real]):
        _copy_into(mine, theirs)
    losses = []
    for lib, (lstm, head) in models.items():
        opt = lib.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=0.05)
        losses.append([])
        for _ in range(3):
            opt.zero_grad()
            out, _ = lstm(lib.tensor(x))
            loss = lib.nn.functional.mse_loss(head(out[:, -1]), lib.tensor(y))
            loss.backward()
            opt.step()
            losses[-1].append(loss.item())
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-10)
    assert losses[0][-1] < losses[0][0]


def test_dropout_between_layers_and_errors():
    symgrad.manual_seed(0)
    gru = symgrad.nn.GRU(2, 3, num_layers=2, dropout=0.5)
    x = symgrad.ones(4, 1, 2)
    a, b = gru(x)[0], gru(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())  # masks differ
    gru.eval()
    np.testing.assert_array_equal(gru(x)[0].detach().numpy(), gru(x)[0].detach().numpy())
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        gru(x, symgrad.zeros(1, 1, 3))
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        symgrad.nn.LSTM(2, 3, proj_size=3)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        symgrad.nn.RNN(2, 3, nonlinearity="gelu")


def test_pad_sequence_equals_pytorch():
    rng = np.random.default_rng(4)
    seqs = [rng.standard_normal((n, 2)) for n in (3, 1, 4)]
    for options in (dict(), dict(batch_first=True, padding_value=-1.0),
                    dict(batch_first=True, padding_side="left")):
        got = symgrad.nn.utils.rnn.pad_sequence([symgrad.tensor(s) for s in seqs], **options)
        want = torch_real.nn.utils.rnn.pad_sequence([torch_real.tensor(s) for s in seqs],
                                                    **options)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    parts = [symgrad.tensor(s, requires_grad=True) for s in seqs]
    symgrad.nn.utils.rnn.pad_sequence(parts).sum().backward()
    assert all((p.grad.numpy() == 1).all() for p in parts)


def test_parameters_to_vector_and_back_equal_pytorch():
    results = []
    for lib in (symgrad, torch_real):
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Linear(3, 1))
        for k, p in enumerate(model.parameters()):
            p.data = lib.arange(float(p.numel())).reshape(p.shape) + 10 * k
        vec = lib.nn.utils.parameters_to_vector(model.parameters())
        (vec * lib.arange(float(vec.numel()))).sum().backward()
        grads = [p.grad.numpy().copy() for p in model.parameters()]
        new = lib.arange(float(vec.numel())) * -0.5
        lib.nn.utils.vector_to_parameters(new, model.parameters())
        new[0] = 7.0  # the parameters are views of the vector
        results.append([vec.detach().numpy(), *grads,
                        *[p.detach().numpy() for p in model.parameters()]])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name, options, sort", [
    ("LSTM", dict(num_layers=2, bidirectional=True), False),
    ("GRU", dict(bidirectional=True), True),
    ("RNN", dict(num_layers=2, nonlinearity="relu"), False)])
def test_packed_sequences_equal_pytorch(name, options, sort):
    torch_real.manual_seed(3)
    theirs = getattr(torch_real.nn, name)(2, 3, **options)
    mine = getattr(symgrad.nn, name)(2, 3, **options)
    _copy_into(mine, theirs)
    rng = np.random.default_rng(5)
    lengths = [4, 3, 3, 1] if sort else [2, 4, 1, 4, 3]
    x = rng.standard_normal((len(lengths), 4, 2))
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    h0 = [rng.standard_normal((layers, len(lengths), 3)) for _ in range(1 + (name == "LSTM"))]
    weight = rng.standard_normal((4, len(lengths), 3 * (1 + options.get("bidirectional", 0))))
    results = []
    for lib, module in ((symgrad, mine), (torch_real, theirs)):
        rnn = lib.nn.utils.rnn
        inp = lib.tensor(x, requires_grad=True)
        hx = [lib.tensor(h, requires_grad=True) for h in h0]
        packed = rnn.pack_padded_sequence(inp, lengths, batch_first=True, enforce_sorted=sort)
        out, h_n = module(packed, tuple(hx) if name == "LSTM" else hx[0])
        padded, out_lengths = rnn.pad_packed_sequence(out, total_length=4)
        finals = h_n if name == "LSTM" else (h_n,)
        loss = (padded * lib.tensor(weight)).sum() + sum((h * h).sum() for h in finals)
        loss.backward()
        results.append([out.data.detach().numpy(), out.batch_sizes.numpy(),
                        padded.detach().numpy(), out_lengths.numpy()]
                       + [h.detach().numpy() for h in finals] + [inp.grad.numpy()]
                       + [h.grad.numpy() for h in hx]
                       + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*results):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def test_pack_and_pad_layouts_equal_pytorch():
    rng = np.random.default_rng(6)
    seqs = [rng.standard_normal((n, 2)) for n in (2, 4, 1, 4)]
    results = []
    for lib in (symgrad, torch_real):
        rnn = lib.nn.utils.rnn
        parts = [lib.tensor(s, requires_grad=True) for s in seqs]
        packed = rnn.pack_sequence(parts, enforce_sorted=False)
        padded, lengths = rnn.pad_packed_sequence(packed, batch_first=True, padding_value=-1.0)
        (padded * padded).sum().backward()
        results.append([packed.data.detach().numpy(), packed.batch_sizes.numpy(),
                        packed.sorted_indices.numpy(), packed.unsorted_indices.numpy(),
                        padded.detach().numpy(), lengths.numpy()]
                       + [p.grad.numpy() for p in parts])
        with pytest.raises(RuntimeError, match="sorted in decreasing order"):
            rnn.pack_sequence(parts)
        back = rnn.unpack_sequence(packed) + rnn.unpad_sequence(padded, lengths, True)
        assert [tuple(b.shape) for b in back] == [s.shape for s in seqs] * 2
        assert all((b.detach().numpy() == s).all() for b, s in zip(back, seqs + seqs))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("options", [dict(num_layers=2, bidirectional=True, proj_size=2),
                                     dict(bias=False)])
def test_flatten_parameters_and_all_weights_as_pytorch(options):
    """Programs call ``rnn.flatten_parameters()`` (a no-op off cuDNN; it was an
    AttributeError) and read ``all_weights``: the same names and shapes per layer."""
    mine, theirs = symgrad.nn.LSTM(3, 4, **options), torch_real.nn.LSTM(3, 4, **options)
    mine.flatten_parameters()
    theirs.flatten_parameters()
    assert [[tuple(w.shape) for w in ws] for ws in mine.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
    named = dict(mine.named_parameters())
    assert [w for ws in mine.all_weights for w in ws] == [named[n] for n in named]
