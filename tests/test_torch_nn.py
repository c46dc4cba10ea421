"""Convolutions, pooling, normalization, attention and the layers built on them,
against real PyTorch 2.13: an op table in the spirit of PyTorch's OpInfo (values and
gradients of every function for a few option sets each) and three programs a
reader writes next (LeNet-5, a causal transformer language model, a U-Net block),
run step by step with the same weights in both libraries (float64).
"""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

from torch_oracle import float64_default, run_both  # noqa: E402,F401

import symgrad  # noqa: E402
import symgrad.nn.functional as FS  # noqa: E402

FT = torch_real.nn.functional

# (function, input shapes, options); inputs are standard normal times 3
OPS = [
    ("conv1d", [(2, 3, 9), (4, 3, 3)], dict(stride=2, padding=2)),
    ("conv2d", [(2, 3, 7, 6), (4, 3, 3, 2)], {}),
    ("conv2d", [(2, 4, 7, 6), (6, 2, 3, 2), (6,)], dict(stride=2, padding=1, dilation=(2, 1),
                                                       groups=2)),
    ("conv2d", [(3, 7, 6), (6, 3, 3, 3)], dict(padding="same")),
    ("conv3d", [(1, 2, 5, 4, 5), (3, 2, 2, 3, 2)], dict(stride=(1, 2, 1), padding=1)),
    ("conv_transpose1d", [(2, 3, 5), (3, 2, 4)], dict(stride=3)),
    ("conv_transpose2d", [(2, 4, 4, 5), (4, 3, 3, 2), (3,)], dict(stride=2, padding=1,
                                                                  output_padding=1)),
    ("conv_transpose2d", [(2, 4, 4, 5), (4, 2, 3, 3)], dict(stride=(2, 3), padding=(0, 1),
                                                            groups=2, dilation=2)),
    ("conv_transpose3d", [(1, 2, 3, 3, 2), (2, 2, 2, 2, 2)], dict(stride=2)),
    ("max_pool1d", [(2, 3, 9)], dict(kernel_size=3, return_indices=True)),
    ("max_pool2d", [(2, 3, 7, 6)], dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", [(2, 3, 9, 8)], dict(kernel_size=3, stride=2, dilation=2, padding=1,
                                        ceil_mode=True, return_indices=True)),
    ("max_pool3d", [(1, 2, 5, 4, 5)], dict(kernel_size=2, return_indices=True)),
    ("avg_pool1d", [(2, 3, 7)], dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", [(2, 3, 7, 6)], dict(kernel_size=3, stride=2, padding=1,
                                        count_include_pad=False, ceil_mode=True)),
    ("avg_pool2d", [(2, 3, 7, 6)], dict(kernel_size=3, divisor_override=2)),
    ("avg_pool3d", [(1, 2, 5, 4, 5)], dict(kernel_size=2, stride=1)),
    ("adaptive_avg_pool1d", [(2, 3, 7)], dict(output_size=5)),
    ("adaptive_avg_pool2d", [(2, 3, 7, 6)], dict(output_size=(3, 4))),
    ("adaptive_max_pool2d", [(2, 3, 7, 6)], dict(output_size=(3, 4), return_indices=True)),
    ("unfold", [(2, 3, 6, 5)], dict(kernel_size=(2, 3), dilation=(1, 2), padding=1,
                                    stride=(2, 1))),
    ("unfold", [(3, 4, 4)], dict(kernel_size=2)),
    ("fold", [(2, 12, 12)], dict(output_size=(5, 6), kernel_size=2, padding=1, stride=2)),
    ("fold", [(8, 9)], dict(output_size=4, kernel_size=2, stride=1)),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, 2, 2, 1), mode="constant", value=3.0)),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, -2, 2, 1, 0, 1))),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, 2, 2, 1), mode="reflect")),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, 2, 2, 1), mode="replicate")),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, 2, 2, 1), mode="circular")),
    ("interpolate", [(2, 3, 5)], dict(size=8, mode="linear")),
    ("interpolate", [(2, 3, 4, 5)], dict(scale_factor=2, mode="bilinear", align_corners=True)),
    ("interpolate", [(2, 3, 4, 5)], dict(scale_factor=0.6, mode="bilinear")),
    ("interpolate", [(2, 3, 4, 5)], dict(size=(7, 9), mode="bicubic")),
    ("interpolate", [(2, 3, 4, 5)], dict(scale_factor=1.5, mode="nearest")),
    ("interpolate", [(2, 3, 4, 5)], dict(size=(3, 8), mode="nearest-exact")),
    ("interpolate", [(1, 2, 3, 4, 5)], dict(size=(5, 3, 6), mode="trilinear")),
    *[(name, [(4, 6)], {}) for name in (
        "gelu", "silu", "mish", "selu", "celu", "elu", "softsign", "hardswish", "hardsigmoid",
        "logsigmoid", "tanhshrink", "softshrink", "hardshrink", "glu", "normalize",
        "leaky_relu", "hardtanh", "relu6")],
    ("gelu", [(4, 6)], dict(approximate="tanh")),
    ("celu", [(4, 6)], dict(alpha=0.5)),
    ("softmin", [(4, 6)], dict(dim=1)),
    ("threshold", [(4, 6)], dict(threshold=0.1, value=2.0)),
    ("prelu", [(2, 3, 4), (3,)], {}),
    ("layer_norm", [(2, 3, 4), (3, 4), (3, 4)], dict(normalized_shape=(3, 4))),
    ("group_norm", [(2, 6, 4), (6,), (6,)], dict(num_groups=3)),
    ("instance_norm", [(2, 3, 5)], {}),
    ("scaled_dot_product_attention", [(2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4)], {}),
    ("scaled_dot_product_attention", [(2, 3, 5, 4)] * 3, dict(is_causal=True)),
]
# keyword options that PyTorch takes positionally after the tensors
_AFTER = {"layer_norm": "normalized_shape", "group_norm": "num_groups"}


def _call(module, name, tensors, options):
    options = dict(options)
    if name in _AFTER:
        return getattr(module, name)(tensors[0], options.pop(_AFTER[name]), *tensors[1:],
                                     **options)
    return getattr(module, name)(*tensors, **options)


@pytest.mark.parametrize("name, shapes, options", OPS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(OPS)])
def test_function_values_and_gradients_equal_pytorch(name, shapes, options):
    rng = np.random.default_rng(len(name) + len(shapes))
    arrays = [3 * rng.standard_normal(s) for s in shapes]
    if name in ("hardswish", "hardsigmoid", "hardtanh", "relu6"):  # PyTorch's boundaries
        arrays[0].flat[:6] = [-3.0, 3.0, 0.0, -1.0, 1.0, 6.0]
    ours = [symgrad.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch_real.tensor(a, requires_grad=True) for a in arrays]
    got, want = _call(FS, name, ours, options), _call(FT, name, theirs, options)
    if isinstance(want, tuple):  # (values, indices)
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
        assert got[1].dtype == symgrad.int64
        got, want = got[0], want[0]
    assert tuple(got.shape) == tuple(want.shape)
    cotangent = rng.standard_normal(tuple(want.shape))
    (got * symgrad.tensor(cotangent)).sum().backward()
    (want * torch_real.tensor(cotangent)).sum().backward()
    # hardsigmoid: PyTorch's CPU kernel multiplies by the float32 constant 1/6f
    rtol = 1e-7 if name == "hardsigmoid" else 1e-10
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol,
                               atol=1e-12)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("d, shape, options", [
    (1, (2, 3, 9), dict(kernel_size=3)),
    (2, (2, 3, 6, 6), dict(kernel_size=2, stride=2, padding=1)),
    (3, (1, 2, 4, 6, 4), dict(kernel_size=2)),
])
def test_max_unpool_equals_pytorch(d, shape, options):
    """Pool with indices, unpool (also to an ``output_size`` one larger), backward:
    values, indices and the gradient, which gathers the cotangent at the indices."""
    rng = np.random.default_rng(d)
    x = rng.standard_normal(shape)
    results = []
    for lib, F in ((symgrad, FS), (torch_real, FT)):
        xt = lib.tensor(x, requires_grad=True)
        pooled, indices = getattr(F, f"max_pool{d}d")(xt, return_indices=True, **options)
        size = [s + 1 for s in getattr(lib.nn, f"MaxUnpool{d}d")(**options)(
            pooled, indices).shape[2:]]
        y = getattr(F, f"max_unpool{d}d")(pooled * 2, indices, output_size=size, **options)
        (y * lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum().backward()
        results.append((y.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    with pytest.raises(RuntimeError, match="output_size"):
        FS.max_unpool1d(symgrad.ones(1, 1, 3), symgrad.tensor([[[0, 2, 4]]]), 2,
                        output_size=[9])


def test_batch_norm_and_embedding_equal_pytorch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 5))
    stats = {lib: (lib.zeros(3), lib.ones(3)) for lib in (symgrad, torch_real)}
    outs = {}
    for lib, F in ((symgrad, FS), (torch_real, FT)):
        xt = lib.tensor(x, requires_grad=True)
        y = F.batch_norm(xt, *stats[lib], training=True)
        (y ** 3).sum().backward()
        z = F.batch_norm(xt, *stats[lib], training=False)
        outs[lib] = [y.detach().numpy(), xt.grad.numpy(), *(s.numpy() for s in stats[lib]),
                     z.detach().numpy()]
    for a, b in zip(outs[symgrad], outs[torch_real]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)
    index, w = np.array([[1, 0, 3], [3, 2, 0]]), rng.standard_normal((4, 5))
    grads = []
    for lib, F in ((symgrad, FS), (torch_real, FT)):
        wt = lib.tensor(w, requires_grad=True)
        (F.embedding(lib.tensor(index), wt, padding_idx=0) ** 2).sum().backward()
        grads.append(wt.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
    assert not grads[0][0].any()  # the padding row gets no gradient


def test_double_backward_through_conv_and_pool_equals_pytorch():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((1, 2, 6, 6)), rng.standard_normal((3, 2, 3, 3))
    results = []
    for lib, F in ((symgrad, FS), (torch_real, FT)):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = F.max_pool2d(F.gelu(F.conv2d(xt, wt, padding=1)), 2)
        (g,) = lib.autograd.grad((y ** 2).sum(), xt, create_graph=True)
        (g.sin().sum()).backward()
        results.append(wt.grad.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------
# programs: their backward runs on the numpy interpreter (the numbers are what is
# compared; compiling the transformer's backward would cost CI minutes)


@pytest.fixture
def interpreted_backward():
    before = symgrad.config.eager_compile
    symgrad.config.update("eager_compile", False)
    yield
    symgrad.config.update("eager_compile", before)


def _state(model) -> dict[str, np.ndarray]:
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def _load(torch, model, state):
    model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})


def lenet(torch, show, data):
    nn, F = torch.nn, torch.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
            self.pool1 = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.pool2 = nn.AvgPool2d(2)
            self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), \
                nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool1(F.relu(self.conv1(x)))
            x = self.pool2(F.gelu(self.conv2(x)))
            x = torch.flatten(x, 1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

    model = LeNet()
    if "state" not in data:
        data["state"] = _state(model)
    _load(torch, model, data["state"])
    x, y = torch.tensor(data["x"]), torch.tensor(data["y"])
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(10):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        show(step, loss.item())
    show(model.conv1.weight.grad[0, 0])


def test_lenet_trains_as_pytorch_step_by_step(interpreted_backward):
    rng = np.random.default_rng(5)
    data = {"x": rng.standard_normal((8, 1, 28, 28)), "y": rng.integers(0, 10, 8)}
    run_both(lenet, data, rtol=1e-10)


def transformer_lm(torch, show, data):
    nn = torch.nn
    vocab, length, width = 11, 7, 16

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, width)
            self.position = nn.Parameter(torch.zeros(length, width))
            layer = nn.TransformerEncoderLayer(width, 2, dim_feedforward=32, dropout=0.0,
                                               batch_first=True, norm_first=True,
                                               activation="gelu")
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab)

        def forward(self, tokens):
            mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
            h = self.embed(tokens) + self.position
            return self.head(self.norm(self.encoder(h, mask=mask)))

    model = LM()
    if "state" not in data:
        data["state"] = {k: v + 0.02 * np.arange(v.size).reshape(v.shape) % 0.1
                         for k, v in _state(model).items()}
    _load(torch, model, data["state"])
    tokens = torch.tensor(data["tokens"])
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(6):
        opt.zero_grad()
        logits = model(tokens[:, :-1])
        loss = loss_fn(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        show(step, loss.item(), norm.item())


def test_causal_transformer_language_model_trains_as_pytorch(interpreted_backward):
    rng = np.random.default_rng(6)
    run_both(transformer_lm, {"tokens": rng.integers(0, 11, (4, 8))}, rtol=1e-9)


def unet_block(torch, show, data):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8),
                                      nn.ReLU())
            self.pool = nn.MaxPool2d(2)
            self.middle = nn.Conv2d(8, 16, 3, padding=1, padding_mode="reflect")
            self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
            self.out = nn.Conv2d(16, 3, 1)

        def forward(self, x):
            skip = self.down(x)
            h = self.up(F.silu(self.middle(self.pool(skip))))
            dy, dx = skip.shape[2] - h.shape[2], skip.shape[3] - h.shape[3]
            h = F.pad(h, (dx // 2, dx - dx // 2, dy // 2, dy - dy // 2))
            h = self.out(torch.cat([h, skip], 1))
            return F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=False)

    model = Block()
    if "state" not in data:
        data["state"] = _state(model)
    _load(torch, model, data["state"])
    x, target = torch.tensor(data["x"]), torch.tensor(data["target"])
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(3):
        opt.zero_grad()
        loss = F.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        show(step, loss.item())
    show(model.down[1].running_mean, model.down[1].running_var)
    model.eval()
    with torch.no_grad():
        show(model(x)[0, 0, :2])


def test_unet_block_trains_as_pytorch(interpreted_backward):
    rng = np.random.default_rng(7)
    data = {"x": rng.standard_normal((2, 3, 9, 9)), "target": rng.standard_normal((2, 3, 18, 18))}
    run_both(unet_block, data, rtol=1e-9)
