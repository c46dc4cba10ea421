"""The optimizers of symgrad/optim/more_optimizers.py and the schedulers of
symgrad/optim/more_schedulers.py against real PyTorch 2.13 (float64): the same
parameters after each of a few training steps (two parameter groups, weight decay,
maximize, the options that change the update), the same state after a state_dict round
trip, and the same learning rates over 30 scheduler steps, bit for bit."""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")
from torch_oracle import float64_default  # noqa: E402,F401

import symgrad  # noqa: E402

RTOL = 1e-12

OPTIMIZERS = [
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3,
                     maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.2)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05)),  # rho_t > 5 from step 6 on: both branches in 8 steps
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    ("Rprop", dict(lr=0.05)),  # the sign flips within 8 steps: both branches
    ("Rprop", dict(lr=0.3, etas=(0.3, 1.5), step_sizes=(1e-3, 0.4), maximize=True)),
    ("ASGD", dict(lr=0.05, t0=3)),  # averaging from step 4 on
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, weight_decay=0.2)),
    ("SGD", dict(lr=0.05)),  # no state at all (it kept an empty entry per parameter)
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adafactor", dict()),  # (a matrix: row and column variances; a vector: variance)
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-3, 0.5), d=1.5, weight_decay=0.1,
                       maximize=True)),
    ("Adafactor", dict(lr=0.5, eps=(None, 1e-2), d=4.0)),  # (no clipping: d above the rms)
]


def _train(lib, name, options, steps=8, resume_at=None):
    rng = np.random.default_rng(0)
    w0, b0, x, y = (rng.standard_normal(s) for s in ((3, 4), (3,), (6, 4), (6, 3)))
    w, b = lib.tensor(w0, requires_grad=True), lib.tensor(b0, requires_grad=True)
    X, Y = lib.tensor(x), lib.tensor(y)
    make = getattr(lib.optim, name)
    opt = make([{"params": [w]}, {"params": [b], "lr": 0.02}], **options)
    history = []
    for k in range(steps):
        if k == resume_at:  # a new optimizer from the old one's state_dict
            saved = copy.deepcopy(opt.state_dict())
            opt = make([{"params": [w]}, {"params": [b], "lr": 0.02}], **options)
            opt.load_state_dict(saved)
        opt.zero_grad()
        ((X @ w.T + b - Y) ** 2).mean().backward()
        opt.step()
        history.append(np.concatenate([w.detach().numpy().ravel(), b.detach().numpy()]))
    return np.array(history), opt


@pytest.mark.parametrize("name, options", OPTIMIZERS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizer_steps_equal_pytorch(name, options):
    got, opt = _train(symgrad, name, options, resume_at=3)
    want, ref = _train(torch_real, name, options)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-14)
    assert not np.allclose(got[0], got[-1])  # it moved
    mine, theirs = opt.state_dict(), ref.state_dict()
    assert mine["param_groups"] == theirs["param_groups"]
    assert list(mine["state"]) == list(theirs["state"])
    for k in theirs["state"]:
        assert list(mine["state"][k]) == list(theirs["state"][k])  # keys in PyTorch's order
        for key, value in theirs["state"][k].items():
            np.testing.assert_allclose(np.asarray(mine["state"][k][key]), value.numpy(),
                                       rtol=RTOL, atol=1e-14)
            assert str(mine["state"][k][key].dtype) == str(value.dtype), key  # step's too


def _train_complex(lib, name, options, steps=5, resume_at=2):
    z0 = np.array([[1 + 1j, 2j, -0.5 + 0.25j], [0.3 - 2j, 1.0 + 0j, -1j]])
    z = lib.tensor(z0, requires_grad=True)
    make = getattr(lib.optim, name)
    opt = make([z], **options)
    history = []
    for k in range(steps):
        if k == resume_at:
            saved = copy.deepcopy(opt.state_dict())
            opt = make([z], **options)
            opt.load_state_dict(saved)
        opt.zero_grad()
        ((z - (0.5 + 1j)).abs() ** 3 + (z * z).real).sum().backward()
        opt.step()
        history.append(z.detach().numpy().copy())
    return np.array(history), opt


@pytest.mark.parametrize("name, options", [o for o in OPTIMIZERS if o[0] != "Adafactor"],
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)
                              if n != "Adafactor"])
def test_complex_parameters_step_as_pytorch(name, options):
    """PyTorch updates a complex parameter as its real view (Adam's g * g is each part's
    square, not the complex square): symgrad's Adam, RMSprop, ... took the complex
    arithmetic (wrong steps). The state stays complex, as PyTorch's."""
    got, opt = _train_complex(symgrad, name, options)
    want, ref = _train_complex(torch_real, name, options, resume_at=None)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-14)
    for key, value in ref.state_dict()["state"].get(0, {}).items():
        mine = opt.state_dict()["state"][0][key]
        assert str(mine.dtype) == str(value.dtype), key
        np.testing.assert_allclose(np.asarray(mine), value.numpy(), rtol=RTOL, atol=1e-14)


def test_complex_parameters_lbfgs_and_adafactor_as_pytorch():
    def lbfgs(lib):
        z = lib.tensor([[1 + 1j, 2j], [0.3 - 2j, -1j]], requires_grad=True)
        opt = lib.optim.LBFGS([z], lr=0.5, max_iter=5)

        def closure():
            opt.zero_grad()
            loss = ((z - (0.5 + 1j)).abs() ** 3).sum()
            loss.backward()
            return loss
        for _ in range(2):
            opt.step(closure)
        return z.detach().numpy()
    np.testing.assert_allclose(lbfgs(symgrad), lbfgs(torch_real), rtol=1e-10)
    z = symgrad.tensor([1j], requires_grad=True)
    (z.abs() ** 2).sum().backward()
    with pytest.raises(RuntimeError, match="complex"):
        symgrad.optim.Adafactor([z]).step()


def _float32_state(lib, name, options, convert):
    layer = lib.nn.Linear(3, 2)
    opt = getattr(lib.optim, name)(layer.parameters(), **options)
    x = np.linspace(0.0, 1.0, 12).reshape(4, 3)
    for k in range(3):
        if k == 1:  # the state made in float32 stays float32, as PyTorch keeps it
            getattr(layer, convert)()
        opt.zero_grad()
        layer(lib.tensor(x, dtype=layer.weight.dtype)).pow(2).sum().backward()
        opt.step()
    return {k: {key: str(v.dtype) for key, v in s.items()}
            for k, s in opt.state_dict()["state"].items()}


@pytest.mark.parametrize("name, options, convert", [
    ("SGD", dict(lr=0.1, momentum=0.9), "double"), ("RMSprop", dict(momentum=0.5), "double"),
    ("Adam", dict(), "float"), ("ASGD", dict(), "float"), ("Rprop", dict(), "float"),
    ("Adafactor", dict(), "float")])
def test_state_dtypes_follow_pytorch_under_a_float32_default(name, options, convert):
    """The 0-d ``step`` (ASGD's ``eta``, ``mu``) in the default dtype, float32 here (it was
    float64 always); buffers in the dtype the parameter had when they were made."""
    before = symgrad.get_default_dtype()
    try:
        for lib in (symgrad, torch_real):
            lib.set_default_dtype(lib.float32)
        assert _float32_state(symgrad, name, options, convert) == _float32_state(
            torch_real, name, options, convert)
    finally:
        symgrad.set_default_dtype(before)
        torch_real.set_default_dtype(torch_real.float64)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "NAdam", "Adafactor"])
def test_lerped_state_of_another_dtype_raises_as_pytorch(name):
    """PyTorch's ``exp_avg.lerp_(grad)`` refuses a float32 state after ``model.double()``
    (symgrad went on, mixing float32 state with float64 gradients)."""
    before = symgrad.get_default_dtype()
    try:
        for lib in (symgrad, torch_real):
            lib.set_default_dtype(lib.float32)
            with pytest.raises(RuntimeError, match="expected dtype float for `end` but got "
                                                   "dtype double"):
                _float32_state(lib, name, {}, "double")
    finally:
        symgrad.set_default_dtype(before)
        torch_real.set_default_dtype(torch_real.float64)


def _adafactor(lib, dtypes, options, steps=6):
    """Adafactor on a stack of matrices, a vector and a 0-d parameter (each of its dtype,
    one group: ``eps1=None`` is the first's epsilon for all, as PyTorch's loop keeps it),
    resumed from a state_dict halfway; the parameters after each step."""
    rng = np.random.default_rng(1)
    shapes = ((2, 3, 4), (4,), ())
    starts = [rng.standard_normal(s) for s in shapes]
    ends = [rng.standard_normal(s) for s in shapes[:2]] + [starts[2] + 1e-3]
    # (the scalar's gradient ~4e-9: its variance below float32's eps1^2, above float64's)
    ps = [lib.tensor(a, dtype=getattr(lib, d), requires_grad=True)
          for a, d in zip(starts, dtypes)]
    targets = [lib.tensor(a, dtype=getattr(lib, d)) for a, d in zip(ends, dtypes)]
    opt = lib.optim.Adafactor(ps, **options)
    history = []
    for k in range(steps):
        if k == steps // 2:
            saved = copy.deepcopy(opt.state_dict())
            opt = lib.optim.Adafactor(ps, **options)
            opt.load_state_dict(saved)
        opt.zero_grad()
        sum(((p - t) ** 4).sum() for p, t in zip(ps, targets)).backward()
        opt.step()
        history.append([p.detach().numpy().copy() for p in ps])
    return history, opt.state_dict()


@pytest.mark.parametrize("dtypes, options", [
    (("float64",) * 3, dict(lr=0.1)),
    (("float32",) * 3, dict(lr=0.1, weight_decay=0.2, d=2.0)),
    (("float32", "float64", "float64"), dict(lr=0.3)),  # float32's eps1 for the others
    (("float64", "float32", "float32"), dict(lr=0.3, eps=(1e-2, 1e-3), beta2_decay=-0.3)),
])
def test_adafactor_stacks_vectors_scalars_and_dtypes_equal_pytorch(dtypes, options):
    got, mine = _adafactor(symgrad, dtypes, options)
    want, theirs = _adafactor(torch_real, dtypes, options)
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            assert a.dtype == b.dtype
            tol = 1e-12 if a.dtype == np.float64 else 2e-6
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert not np.allclose(got[0][0], got[-1][0])
    for k, state in theirs["state"].items():
        assert list(mine["state"][k]) == list(state)
        for key, value in state.items():
            assert str(mine["state"][k][key].dtype) == str(value.dtype)
            np.testing.assert_allclose(mine["state"][k][key].numpy(), value.numpy(),
                                       rtol=1e-5, atol=1e-7)


def test_adafactor_lr_tensor_and_errors_equal_pytorch():
    got, _ = _adafactor(symgrad, ("float64",) * 3, dict(lr=symgrad.tensor(0.2)), steps=3)
    want, _ = _adafactor(torch_real, ("float64",) * 3, dict(lr=torch_real.tensor(0.2)), steps=3)
    np.testing.assert_allclose(got[-1][0], want[-1][0], rtol=1e-12)
    for options in (dict(lr=-1.0), dict(beta2_decay=0.1), dict(eps=(-1.0, 1e-3)),
                    dict(eps=(None, -1.0)), dict(d=0.5), dict(weight_decay=-0.1),
                    dict(lr=[0.1, 0.2])):
        errors = []
        for lib in (symgrad, torch_real):
            lr = options.get("lr")
            opts = dict(options, lr=lib.tensor(lr)) if isinstance(lr, list) else options
            with pytest.raises(ValueError) as error:
                lib.optim.Adafactor([lib.zeros(2, requires_grad=True)], **opts)
            errors.append(str(error.value))
        assert errors[0] == errors[1]


def test_adagrad_makes_state_at_construction_and_errors_match():
    for lib in (symgrad, torch_real):
        w = lib.zeros(2, requires_grad=True)
        opt = lib.optim.Adagrad([w], initial_accumulator_value=0.5)
        state = opt.state_dict()["state"][0]
        assert list(state) == ["step", "sum"] and float(state["sum"][0]) == 0.5
        for make, kwargs, text in ((lib.optim.Adadelta, dict(rho=1.5), "Invalid rho"),
                                   (lib.optim.NAdam, dict(betas=(1.0, 0.9)), "index 0"),
                                   (lib.optim.RAdam, dict(lr=-1), "Invalid learning rate")):
            with pytest.raises(ValueError, match=text):
                make([w], **kwargs)


def _lr(lib):
    return lib.optim.lr_scheduler


SCHEDULES = {
    "MultiplicativeLR": lambda lib, o: _lr(lib).MultiplicativeLR(o, lambda e: 0.9 + 0.01 * e),
    "ConstantLR": lambda lib, o: _lr(lib).ConstantLR(o, factor=0.3, total_iters=4),
    "LinearLR": lambda lib, o: _lr(lib).LinearLR(o, start_factor=0.1, end_factor=0.7,
                                                 total_iters=9),
    "PolynomialLR": lambda lib, o: _lr(lib).PolynomialLR(o, total_iters=20, power=1.7),
    "CyclicLR": lambda lib, o: _lr(lib).CyclicLR(o, 0.01, 0.2, step_size_up=4,
                                                 step_size_down=3),
    "CyclicLR-triangular2": lambda lib, o: _lr(lib).CyclicLR(
        o, [0.01, 0.02], 0.3, step_size_up=3, mode="triangular2", base_momentum=0.7),
    "CyclicLR-exp_range": lambda lib, o: _lr(lib).CyclicLR(o, 0.01, 0.2, step_size_up=5,
                                                           mode="exp_range", gamma=0.95),
    "CosineAnnealingWarmRestarts": lambda lib, o: _lr(lib).CosineAnnealingWarmRestarts(
        o, T_0=4, T_mult=2, eta_min=0.001),
    "CosineAnnealingWarmRestarts-1": lambda lib, o: _lr(lib).CosineAnnealingWarmRestarts(
        o, T_0=7),
    "SequentialLR": lambda lib, o: _lr(lib).SequentialLR(o, [
        _lr(lib).LinearLR(o, start_factor=0.2, total_iters=5),
        _lr(lib).CosineAnnealingLR(o, T_max=10, eta_min=0.01),
        _lr(lib).ExponentialLR(o, gamma=0.8)], milestones=[5, 15]),
    "SequentialLR-step": lambda lib, o: _lr(lib).SequentialLR(o, [
        _lr(lib).ConstantLR(o, factor=0.5, total_iters=3),
        _lr(lib).MultiStepLR(o, milestones=[2, 6], gamma=0.5),
        _lr(lib).StepLR(o, step_size=4, gamma=0.7)], milestones=[4, 12]),
    "ChainedScheduler": lambda lib, o: _lr(lib).ChainedScheduler([
        _lr(lib).ConstantLR(o, factor=0.5, total_iters=6),
        _lr(lib).ExponentialLR(o, gamma=0.9), _lr(lib).PolynomialLR(o, total_iters=25)]),
}


def _rates(lib, make, optimizer, steps=30):
    w, v = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
    extra = {"momentum": 0.9} if optimizer == "SGD" else {}
    opt = getattr(lib.optim, optimizer)([{"params": [w]}, {"params": [v], "lr": 0.5}],
                                        lr=0.1, **extra)
    sched = make(lib, opt)
    rates = [sched.get_last_lr() + [g["lr"] for g in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        sched.step()
        rates.append(sched.get_last_lr() + [g["lr"] for g in opt.param_groups]
                     + [g.get("momentum", g.get("betas", (0,))[0]) for g in opt.param_groups])
    return np.array(rates, dtype=object), sched


@pytest.mark.parametrize("name", list(SCHEDULES))
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_schedulers_give_pytorch_rates_bit_for_bit(name, optimizer):
    got, _ = _rates(symgrad, SCHEDULES[name], optimizer)
    want, _ = _rates(torch_real, SCHEDULES[name], optimizer)
    assert got.tolist() == want.tolist()
    assert len({tuple(r[:1]) for r in got}) > 1  # the schedule moves


def test_warm_restarts_with_fractional_epochs_equal_pytorch():
    rates = []
    for lib in (symgrad, torch_real):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        rates.append([])
        for epoch in range(10):
            for i in range(4):
                opt.step()
                sched.step(epoch + i / 4)
                rates[-1].append(opt.param_groups[0]["lr"])
    assert rates[0] == rates[1]


def test_composite_errors_and_resume_keyerror():
    for lib in (symgrad, torch_real):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        other = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        a = lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)
        b = lib.optim.lr_scheduler.ExponentialLR(other, 0.9)
        with pytest.raises(ValueError, match="same optimizer"):
            lib.optim.lr_scheduler.SequentialLR(opt, [a, b], milestones=[2])
        with pytest.raises(ValueError, match="number of milestones"):
            lib.optim.lr_scheduler.SequentialLR(opt, [a], milestones=[2])
        with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
            lib.optim.lr_scheduler.ChainedScheduler(
                [a, lib.optim.lr_scheduler.ReduceLROnPlateau(opt)])


@pytest.mark.parametrize("name, options", [("ExponentialLR", dict(gamma=0.5)),
                                           ("CosineAnnealingLR", dict(T_max=10)),
                                           ("PolynomialLR", dict(total_iters=9)),
                                           ("LinearLR", dict(total_iters=8))])
def test_resuming_with_last_epoch_keeps_the_rate_at_construction(name, options):
    """PyTorch's constructor step leaves the rate alone when resuming (``_is_initial``);
    symgrad's ExponentialLR and CosineAnnealingLR used to apply one more step."""
    rates = []
    for lib in (symgrad, torch_real):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        opt.param_groups[0]["initial_lr"] = 0.2
        sched = getattr(lib.optim.lr_scheduler, name)(opt, last_epoch=3, **options)
        rates.append([opt.param_groups[0]["lr"]])
        for _ in range(4):
            opt.step()
            sched.step()
            rates[-1].append(opt.param_groups[0]["lr"])
    assert rates[0] == rates[1]


@pytest.mark.parametrize("options, network", [
    (dict(line_search_fn="strong_wolfe"), True),
    (dict(lr=0.5, max_iter=7, history_size=3, line_search_fn="strong_wolfe"), True),
    (dict(), False),
    (dict(lr=0.7, max_iter=6, history_size=2, tolerance_change=1e-5), False)])
def test_lbfgs_follows_pytorch_step_by_step(options, network):
    """Three ``step(closure)`` calls of several iterations each: a small tanh network's
    least squares with the line search (non-convex: it brackets, the history is cut),
    and a logistic regression without (fixed steps; on the network those amplify the
    last bits of rounding until the two runs part)."""
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in ((3, 2), (1, 3), (8, 2), (8, 1))]
    got, want = (_lbfgs_run(lib, arrays, options, network) for lib in (symgrad, torch_real))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert got[-1, 0] < got[0, 0]


def _lbfgs_run(lib, arrays, options, network):
    w0, v0, x, y = arrays
    w, v = lib.tensor(w0, requires_grad=True), lib.tensor(v0, requires_grad=True)
    X, Y = lib.tensor(x), lib.tensor(y)
    opt = lib.optim.LBFGS([w, v], **options)

    def closure():
        opt.zero_grad()
        if network:
            loss = (((X @ w.T).tanh() @ v.T - Y) ** 2).mean()
        else:
            loss = lib.nn.functional.binary_cross_entropy_with_logits(
                X @ w[0] + v[0, 0], (Y[:, 0] > 0).to(X.dtype)) + 0.1 * (w * w).sum()
        loss.backward()
        return loss

    steps = []
    for _ in range(3):
        loss = opt.step(closure)
        state = opt.state[w]
        steps.append([loss.item(), state["func_evals"], state["n_iter"],
                      *w.detach().numpy().ravel(), *v.detach().numpy().ravel()])
    return np.array(steps)


@pytest.mark.parametrize("name", ["SequentialLR", "ChainedScheduler", "CyclicLR",
                                  "CosineAnnealingWarmRestarts", "LinearLR"])
def test_scheduler_state_dict_resumes_the_same_rates(name):
    """Stop after 11 steps, save the optimizer's and the scheduler's state dicts, build
    both afresh, load them, go on: the rates equal an uninterrupted run's."""
    def build():
        w = symgrad.nn.Parameter(symgrad.ones(2))
        opt = symgrad.optim.SGD([{"params": [w]}], lr=0.1, momentum=0.9)
        return opt, SCHEDULES[name](symgrad, opt)

    def advance(opt, sched, n):
        rates = []
        for _ in range(n):
            opt.step()
            sched.step()
            rates.append((opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"]))
        return rates

    opt, sched = build()
    straight = advance(opt, sched, 25)
    opt, sched = build()
    first = advance(opt, sched, 11)
    saved = copy.deepcopy((opt.state_dict(), sched.state_dict()))
    opt, sched = build()
    opt.load_state_dict(saved[0])
    sched.load_state_dict(saved[1])
    assert first + advance(opt, sched, 14) == straight


def test_reduce_lr_on_plateau_state_dict_resumes_as_pytorch():
    """ReduceLROnPlateau had no state_dict: a checkpoint could not keep its best value,
    bad-epoch count and cooldown. Saved after 6 epochs and loaded into a fresh one, the
    rates and counters go on as PyTorch's."""
    metrics = [5, 4, 4, 4.0001, 4, 3.9999, 4, 4, 4, 4, 3, 3, 3, 3]

    def run(lib):
        w = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([w], lr=0.1)
        build = lambda: lib.optim.lr_scheduler.ReduceLROnPlateau(  # noqa: E731
            opt, patience=2, cooldown=2, factor=0.5)
        sched, out = build(), []
        for k, metric in enumerate(metrics):
            sched.step(metric)
            if k == 6:
                saved = copy.deepcopy(sched.state_dict())
                sched = build()
                sched.load_state_dict(saved)
            out.append((opt.param_groups[0]["lr"], sched.num_bad_epochs,
                        sched.cooldown_counter, sched.best))
        return out

    assert run(symgrad) == run(torch_real)


def test_reduce_lr_on_plateau_reduces_a_param_group_added_later():
    """A group added by add_param_group is reduced too with a single min_lr (it kept its
    rate: zip with the min_lrs of the construction), and refused with a list, as PyTorch."""
    def run(lib, min_lr):
        w, v = lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([w], lr=0.1)
        sched, out = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, min_lr=min_lr), []
        for k in range(4):
            if k == 1:
                opt.add_param_group({"params": [v], "lr": 0.5})
            sched.step(1.0)
            out.append([g["lr"] for g in opt.param_groups])
        return out

    assert run(symgrad, 0.01) == run(torch_real, 0.01)
    for lib in (symgrad, torch_real):
        with pytest.raises(RuntimeError, match="number of param groups"):
            run(lib, [0.01])
        with pytest.raises(ValueError, match="expected 1 min_lrs, got 2"):
            lib.optim.lr_scheduler.ReduceLROnPlateau(lib.optim.SGD([lib.ones(1)], lr=0.1),
                                                     min_lr=[0.1, 0.2])


@pytest.mark.parametrize("name", ["SGD", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
                                  "RAdam", "ASGD", "Rprop", "Adafactor"])
def test_a_tensor_lr_changed_in_place_as_pytorchs(name):
    """A 0-d Tensor ``lr`` that a schedule halves in place between steps: each step takes
    its value then, as PyTorch's (which read it as a number); it raised numpy's
    'np.add(..., out=...) on a traced value' here (Adam's own: test_torch_adam)."""
    got = []
    for lib in (symgrad, torch_real):
        w = lib.tensor(np.linspace(-1.0, 1.0, 6), requires_grad=True)
        lr = lib.tensor(0.05, dtype=lib.float64)
        options = {} if name == "Rprop" else {"weight_decay": 0.1}
        opt = getattr(lib.optim, name)([w], lr=lr, **options)
        for _ in range(4):
            opt.zero_grad()
            ((w ** 3).sum() + (2 * w).sum()).backward()
            opt.step()
            lr.mul_(0.5)
        got.append(w.detach().numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-14, atol=1e-15)

