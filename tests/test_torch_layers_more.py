"""The modules of symgrad/nn/more_layers.py against real PyTorch 2.13 (float64): a
PyTorch module and symgrad's built with the same arguments, the parameters copied by
state_dict (the same names and shapes), then the printed form, the outputs and the
gradients of the inputs and parameters. (The functions behind them are op-table
records, tests/optable_nn.py.)"""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")
from torch_oracle import float64_default  # noqa: E402,F401

import symgrad  # noqa: E402

_SIGNS = [1.0, -1.0, -1.0, 1.0]

# name, constructor arguments, input shapes (domain normal, or "pos" for positive), extra
# inputs made by the library (targets)
CASES = [
    ("Upsample", dict(scale_factor=2), [(1, 2, 3, 2)], None),
    ("Upsample", dict(size=(5, 4), mode="bilinear", align_corners=False), [(1, 2, 3, 2)], None),
    ("Upsample", dict(scale_factor=(2, 1.5), mode="bicubic"), [(1, 1, 3, 4)], None),
    ("UpsamplingNearest2d", dict(scale_factor=3), [(2, 1, 2, 2)], None),
    ("UpsamplingBilinear2d", dict(size=(4, 5)), [(2, 1, 2, 3)], None),
    ("PixelShuffle", dict(upscale_factor=2), [(2, 8, 2, 3)], None),
    ("PixelUnshuffle", dict(downscale_factor=2), [(2, 2, 4, 2)], None),
    ("Unflatten", dict(dim=1, unflattened_size=(2, -1)), [(3, 6, 2)], None),
    ("Unflatten", dict(dim=-1, unflattened_size=[3, 2]), [(3, 6)], None),
    ("Bilinear", dict(in1_features=3, in2_features=4, out_features=2), [(5, 3), (5, 4)], None),
    ("Bilinear", dict(in1_features=3, in2_features=2, out_features=4, bias=False),
     [(2, 5, 3), (2, 5, 2)], None),
    ("Dropout1d", dict(p=0.3), [(2, 3, 4)], None),
    ("Dropout2d", dict(), [(2, 3, 4, 2)], None),
    ("Dropout3d", dict(p=0.1, inplace=False), [(2, 3, 2, 2, 2)], None),
    ("RMSNorm", dict(normalized_shape=[3, 4]), [(2, 3, 4)], None),
    ("RMSNorm", dict(normalized_shape=4, eps=1e-2, elementwise_affine=False), [(2, 4)], None),
    ("CosineSimilarity", dict(dim=0), [(3, 4), (3, 4)], None),
    ("MarginRankingLoss", dict(margin=0.2), [(4,), (4,)], lambda L: [L.tensor(_SIGNS)]),
    ("HingeEmbeddingLoss", dict(reduction="sum"), [(4,)], lambda L: [L.tensor(_SIGNS)]),
    ("SoftMarginLoss", dict(reduction="none"), [(4,)], lambda L: [L.tensor(_SIGNS)]),
    ("CosineEmbeddingLoss", dict(margin=0.1), [(4, 3), (4, 3)], lambda L: [L.tensor(_SIGNS)]),
    ("TripletMarginLoss", dict(margin=2.0, swap=True), [(4, 3), (4, 3), (4, 3)], None),
    ("PoissonNLLLoss", dict(full=True), [(2, 3)],
     lambda L: [L.tensor([[0.0, 2.0, 3.0], [1.0, 5.0, 0.0]])]),
    ("PoissonNLLLoss", dict(log_input=False, reduction="sum"), ["pos(2, 3)"],
     lambda L: [L.tensor([[0.0, 2.0, 3.0], [1.0, 5.0, 0.0]])]),
    ("GaussianNLLLoss", dict(full=True, eps=0.7), [(2, 3), (2, 3), "pos(2, 3)"], None),
    ("MultiMarginLoss", dict(p=2, weight=[0.5, 1.0, 2.0]), [(4, 3)],
     lambda L: [L.tensor([0, 2, 1, 2])]),
    ("MultiMarginLoss", dict(size_average=False), [(4, 3)], lambda L: [L.tensor([0, 2, 1, 2])]),
    ("MultiLabelSoftMarginLoss", dict(weight=[0.5, 1.0, 2.0]), [(4, 3)],
     lambda L: [L.tensor([[1.0, 0, 1], [0, 0, 1], [1, 1, 1], [0, 1, 0]])]),
]


def _inputs(shapes, rng):
    out = []
    for shape in shapes:
        if isinstance(shape, str):  # "pos(2, 3)"
            out.append(rng.uniform(0.3, 2.0, eval(shape[3:])))
        else:
            out.append(rng.standard_normal(shape))
    return out


@pytest.mark.filterwarnings("ignore:size_average and reduce args")
@pytest.mark.parametrize("name, options, shapes, extra", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_module_equals_pytorch(name, options, shapes, extra):
    arrays = _inputs(shapes, np.random.default_rng(0))
    results, modules = [], []
    for lib in (torch_real, symgrad):
        kwargs = {k: lib.tensor(v) if k == "weight" else v for k, v in options.items()}
        module = getattr(lib.nn, name)(**kwargs)
        if lib is symgrad and modules[0].state_dict():
            theirs = modules[0].state_dict()
            assert list(theirs) == list(module.state_dict())
            module.load_state_dict({k: symgrad.tensor(v.numpy()) for k, v in theirs.items()})
        modules.append(module)
        if name.startswith("Dropout"):
            module.eval()  # the masks are numpy's (tested below); eval is the identity
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = module(*xs, *(extra(lib) if extra else []))
        weight = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
        (out * weight).sum().backward()
        results.append([out.detach().numpy()] + [x.grad.numpy() for x in xs]
                       + [p.grad.numpy() for p in module.parameters()])
    assert repr(modules[1]) == repr(modules[0])
    for a, b in zip(results[1], results[0]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, shape, lead", [("Dropout1d", (4, 6, 5), 2),
                                               ("Dropout1d", (6, 5), 1),
                                               ("Dropout2d", (4, 6, 3, 2), 2),
                                               ("Dropout2d", (4, 6, 3), 2),  # as (N, C, L)
                                               ("Dropout3d", (6, 2, 2, 3), 1)])
def test_channel_dropout_zeroes_whole_channels_reproducibly(name, shape, lead):
    symgrad.manual_seed(0)
    module = getattr(symgrad.nn, name)(p=0.5)
    x = symgrad.ones(*shape, requires_grad=True)
    out = module(x)
    values = out.detach().numpy().reshape(*shape[:lead], -1)
    per_channel = values[..., :1]
    assert ((values == 0) | (values == 2)).all() and (values == per_channel).all()
    assert 0 < (per_channel == 0).mean() < 1
    symgrad.manual_seed(0)
    np.testing.assert_array_equal(module(x).detach().numpy(), out.detach().numpy())
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())


def test_parameter_list_and_dict_equal_pytorch():
    built = []
    for lib in (torch_real, symgrad):
        plist = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(4)])
        plist.append(lib.ones(1))
        pdict = lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones(2)), "b": lib.zeros(3)})
        pdict["c"] = lib.ones(1, 2)
        holder = lib.nn.Module()
        holder.plist, holder.pdict = plist, pdict
        built.append((holder, plist, pdict))
    (theirs, tl, td), (mine, ml, md) = built
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert [tuple(p.shape) for p in mine.parameters()] == \
        [tuple(p.shape) for p in theirs.parameters()]
    assert all(isinstance(p, symgrad.nn.Parameter) for p in ml)
    assert len(ml) == len(tl) == 3 and len(md) == len(td) == 3 and "b" in md
    assert list(md.keys()) == list(td.keys()) and tuple(ml[-1].shape) == (1,)
    (ml[0].sum() + md["c"].sum()).backward()
    assert (ml[0].grad.numpy() == 1).all() and md["a"].grad is None


class TextClassifier:
    """PyTorch's text classification tutorial's model, written once against ``torch``:
    ``EmbeddingBag`` (mean of each text's tokens, texts given by offsets) and a linear
    layer, trained with SGD and StepLR."""

    def __init__(self, torch, **options):
        self.torch = torch
        self.bag = torch.nn.EmbeddingBag(12, 4, **options)
        self.fc = torch.nn.Linear(4, 3)

    def train(self, text, offsets, labels, steps=3):
        torch = self.torch
        params = list(self.bag.parameters()) + list(self.fc.parameters())
        opt = torch.optim.SGD(params, lr=2.0)
        sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = torch.nn.CrossEntropyLoss()(self.fc(self.bag(text, offsets)), labels)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        return losses, self.bag.weight.grad.numpy().copy()


@pytest.mark.parametrize("options", [dict(), dict(mode="sum", padding_idx=0),
                                     dict(mode="max", include_last_offset=True)])
def test_embedding_bag_text_classifier_equals_pytorch(options):
    text = [3, 1, 4, 1, 5, 9, 2, 6, 0, 5, 3, 5]
    offsets = [0, 4, 4, 9] + ([12] if options.get("include_last_offset") else [])
    labels = [0, 2, 1, 2]
    torch_real.manual_seed(0)
    theirs, mine = TextClassifier(torch_real, **options), TextClassifier(symgrad, **options)
    for a, b in ((mine.bag, theirs.bag), (mine.fc, theirs.fc)):
        a.load_state_dict({k: symgrad.tensor(v.numpy()) for k, v in b.state_dict().items()})
    assert repr(mine.bag) == repr(theirs.bag)
    got = mine.train(*(symgrad.tensor(v) for v in (text, offsets, labels)))
    want = theirs.train(*(torch_real.tensor(v) for v in (text, offsets, labels)))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        mine.bag(symgrad.tensor(text))


def test_embedding_bag_scale_grad_by_freq():
    """Each row's gradient divided by its index's count in the batch (the documented rule,
    as PyTorch's Embedding and embedding_bag on CUDA: PyTorch 2.13's CPU embedding_bag
    divides a once-seen row that sorts after a repeated one by that one's count,
    pytorch/pytorch#190063); max mode refused, as PyTorch."""
    w = symgrad.ones(4, 2, requires_grad=True)
    idx, offsets = symgrad.tensor([1, 1, 3, 2]), symgrad.tensor([0, 3])
    out = symgrad.nn.functional.embedding_bag(idx, w, offsets, mode="sum",
                                              scale_grad_by_freq=True)
    (out * symgrad.tensor([[1.0], [5.0]])).sum().backward()
    assert w.grad[:, 0].tolist() == [0.0, 1.0, 5.0, 1.0]
    plain = torch_real.ones(4, 2, requires_grad=True)  # the unbagged oracle
    torch_real.nn.functional.embedding(torch_real.tensor([1, 1, 3, 2]), plain,
                                       scale_grad_by_freq=True).sum(0).sum().backward()
    assert plain.grad[:, 0].tolist() == [0.0, 1.0, 1.0, 1.0]
    for lib in (symgrad, torch_real):
        with pytest.raises(ValueError, match="max mode does not support scaling"):
            lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(4, 2),
                                            lib.tensor([0]), mode="max",
                                            scale_grad_by_freq=True)


@pytest.mark.parametrize("legacy", [dict(size_average=False), dict(reduce=False),
                                    dict(size_average=False, reduce=True)])
def test_loss_functions_honour_legacy_size_average_and_reduce(legacy):
    """The functional forms (and nn.KLDivLoss) took PyTorch's deprecated ``size_average``/
    ``reduce`` and ignored them (size_average=False gave the mean, PyTorch the sum)."""
    import warnings
    x, y, t = [0.3, -1.2, 2.0], [1.0, 0.5, -0.4], [1.0, -1.0, 1.0]
    calls = [
        lambda F, a, b, s, kw: F.margin_ranking_loss(a, b, s, **kw),
        lambda F, a, b, s, kw: F.hinge_embedding_loss(a, s, **kw),
        lambda F, a, b, s, kw: F.soft_margin_loss(a, s, **kw),
        lambda F, a, b, s, kw: F.cosine_embedding_loss(a.reshape(3, 1) * b, b.expand(3, 3), s,
                                                       **kw),
        lambda F, a, b, s, kw: F.triplet_margin_loss(a.reshape(3, 1) * b, b.expand(3, 3),
                                                     s.expand(3, 3), **kw),
        lambda F, a, b, s, kw: F.poisson_nll_loss(a, s.abs(), **kw),
        lambda F, a, b, s, kw: F.multi_margin_loss(a.reshape(3, 1) * b, (s > 0).long(), **kw),
        lambda F, a, b, s, kw: F.multilabel_soft_margin_loss(a.reshape(3, 1) * b,
                                                             (s > 0).double().expand(3, 3),
                                                             **kw),
        lambda F, a, b, s, kw: F.nn_module.KLDivLoss(**kw)(-a.abs(), b.abs())]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's deprecation warnings)
        for call in calls:
            got, want = (call(_Functional(lib), lib.tensor(x), lib.tensor(y), lib.tensor(t),
                              legacy).numpy() for lib in (symgrad, torch_real))
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-13)


class _Functional:
    """``lib.nn.functional``'s names, and ``nn_module`` for ``lib.nn``."""

    def __init__(self, lib):
        self.nn_module = lib.nn
        self._functional = lib.nn.functional

    def __getattr__(self, name):
        return getattr(self._functional, name)


def test_batch_norm_reset_running_stats_and_parameters_as_pytorch():
    """reset_running_stats()/reset_parameters() of batch and instance norms (an
    AttributeError before), mid-training, against PyTorch."""
    x = np.array([[1.0, 2.0], [3.0, 5.0], [0.0, -1.0]])
    outs = []
    for lib in (symgrad, torch_real):
        bn = lib.nn.BatchNorm1d(2)
        with lib.no_grad():
            bn.weight.fill_(2.0)
        bn(lib.tensor(x))
        bn.reset_running_stats()
        bn(lib.tensor(x * 2))
        stats = [bn.running_mean.clone(), bn.running_var.clone(), bn.num_batches_tracked.clone()]
        bn.reset_parameters()
        outs.append(stats + [bn.running_mean, bn.num_batches_tracked, bn.weight.detach(),
                             bn(lib.tensor(x)).detach()])
    for got, want in zip(*outs):
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_conv_transpose_output_size_chooses_the_output_padding_as_pytorch():
    """ConvTranspose*(x, output_size=...) (with or without the batch and channel sizes; a
    U-Net passes skip.shape) was refused; sizes outside the stride's range are PyTorch's
    ValueError."""
    x = np.random.default_rng(8).standard_normal((2, 2, 4, 5))
    outs, saved = [], {}
    for lib in (torch_real, symgrad):
        m = lib.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
        if lib is symgrad:
            m.load_state_dict({k: symgrad.tensor(v) for k, v in saved.items()})
        else:
            saved = {k: v.detach().numpy() for k, v in m.state_dict().items()}
        t = lib.tensor(x, requires_grad=True)
        ys = [m(t, output_size=size) for size in ((7, 9), (8, 10), [2, 3, 8, 9])]
        sum(y.sum() for y in ys).backward()
        outs.append([*ys, t.grad])
        with pytest.raises(ValueError, match="valid sizes range from"):
            m(t, output_size=(9, 9))
    for want, got in zip(*outs):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
