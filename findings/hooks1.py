"""Module forward hooks vs PyTorch: kwargs-modifying pre-hooks, output hooks, prepend,
removal during a call, a hook registered by a pre-hook, always_call, training steps."""
import numpy as np
import torch as T
import symgrad as S
from common import cmp, sd_copy
T.set_default_dtype(T.float64)

def prog(lib):
    log = []
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__(); self.lin = lib.nn.Linear(3, 2)
        def forward(self, x, scale=1.0, shift=None):
            y = self.lin(x) * scale
            return y if shift is None else y + shift
    lib.manual_seed(0)
    m = M()
    def pre_kw(mod, args, kwargs):
        log.append(("pre_kw", sorted(kwargs)))
        return (args[0] * 2,), {**kwargs, "scale": kwargs.get("scale", 1.0) + 0.5}
    def pre(mod, args):
        log.append("pre"); return args[0] - 1      # not a tuple
    def post(mod, args, out):
        log.append("post"); return out.tanh()
    def post_kw(mod, args, kwargs, out):
        log.append(("post_kw", sorted(kwargs))); return out * kwargs["scale"]
    h1 = m.register_forward_pre_hook(pre_kw, with_kwargs=True)
    h2 = m.register_forward_pre_hook(pre, prepend=True)
    h3 = m.register_forward_hook(post)
    h4 = m.register_forward_hook(post_kw, with_kwargs=True, prepend=True)
    selfremove = []
    def once(mod, args, out):
        log.append("once"); selfremove[0].remove(); return out + 1
    selfremove.append(m.lin.register_forward_hook(once))
    def late_registrar(mod, args):
        log.append("registrar")
        mod.register_forward_hook(lambda mo, a, o: log.append("late") or o * 3)
    h5 = m.register_forward_pre_hook(late_registrar)
    return m, log, (h1, h2, h3, h4, h5)

ms, logs, hs = prog(S); mt, logt, ht = prog(T)
sd_copy(mt, ms)
x = np.random.default_rng(0).standard_normal((4, 3))
opt_s = S.optim.SGD(ms.parameters(), lr=0.1); opt_t = T.optim.SGD(mt.parameters(), lr=0.1)
for step in range(3):
    for lib, m, opt in ((S, ms, opt_s), (T, mt, opt_t)):
        opt.zero_grad()
        out = m(lib.tensor(x), scale=0.7, shift=lib.tensor([0.1, -0.2]))
        loss = (out ** 2).sum(); loss.backward(); opt.step()
        m._last = (out, loss)
    cmp(f"step {step} out", ms._last[0], mt._last[0]); cmp(f"step {step} loss", ms._last[1], mt._last[1])
    cmp(f"step {step} weight", ms.lin.weight, mt.lin.weight)
    if step == 1:
        hs[1].remove(); ht[1].remove()
print("log equal:", logs == logt)
if logs != logt:
    for a, b in zip(logs, logt):
        print("  ", a, "|", b, "" if a == b else "  <-- DIFF")
    print(len(logs), len(logt))

# always_call with a failing forward
for lib in (S, T):
    seen = []
    class Bad(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    b = Bad()
    b.register_forward_hook(lambda m, a, o: seen.append(("always", o)), always_call=True)
    b.register_forward_hook(lambda m, a, o: seen.append(("normal", o)))
    try:
        b(lib.ones(1))
    except ValueError as e:
        seen.append(str(e))
    print(lib.__name__, seen)
