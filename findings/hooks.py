import numpy as np, torch, symgrad as sgt
import symgrad.nn as snn
def run(lib, nn):
    lib.manual_seed(0)
    rec = []
    class Two(nn.Module):
        def __init__(self):
            super().__init__(); self.l = nn.Linear(3, 2)
        def forward(self, a, b):
            return self.l(a) * b, a.sum(1, keepdim=True) * 2
    m = Two().double()
    with lib.no_grad():
        m.l.weight.copy_(lib.tensor(np.arange(6.).reshape(2, 3) / 7)); m.l.bias.copy_(lib.tensor([0.1, -0.2]))
    def pre(mod, gout):
        rec.append(("pre", [None if g is None else g.detach().numpy().copy() for g in gout]))
        return (gout[0] * 3, gout[1])
    def hook(mod, gin, gout):
        rec.append(("hook", [None if g is None else g.detach().numpy().copy() for g in gin], [None if g is None else g.detach().numpy().copy() for g in gout]))
        return (gin[0] * 2, None if gin[1] is None else gin[1] + 1)
    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(hook)
    lh = []
    m.l.register_full_backward_hook(lambda mod, gi, go: lh.append([None if g is None else g.detach().numpy().copy() for g in gi + go]))
    a = lib.tensor(np.array([[1., 2., 3.], [0.5, -1., 2.]]), requires_grad=True)
    b = lib.tensor(np.array([[1., -1.], [2., 0.5]]), requires_grad=True)
    o1, o2 = m(a, b)
    (o1 * lib.tensor([[1., 2.], [3., 4.]])).sum().backward(retain_graph=True)
    ga, gb = a.grad.numpy().copy(), b.grad.numpy().copy()
    (o2.sum() + o1.sum()).backward()
    return rec, lh, ga, gb, a.grad.numpy(), b.grad.numpy(), m.l.weight.grad.numpy()
T = run(torch, torch.nn); S = run(sgt, snn)
def cmp(x, y, path=""):
    if isinstance(x, (list, tuple)):
        if len(x) != len(y): print(path, "len", len(x), len(y)); return
        for i, (p, q) in enumerate(zip(x, y)): cmp(p, q, path + f"[{i}]")
    elif x is None or y is None:
        if x is not y: print(path, "None mismatch", x, y)
    elif isinstance(x, str):
        if x != y: print(path, x, y)
    else:
        if not np.allclose(x, y): print(path, "\n", x, "\n", y)
cmp(list(T), list(S)); print("done")
