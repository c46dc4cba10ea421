import numpy as np, torch, symgrad as sgt
print(sgt.get_default_dtype())
for lib in (torch, sgt):
    x = lib.tensor([0., 0., 1., 0., 2.], requires_grad=True); y = lib.tensor([-1., np.nan, 0., 0., -2.], requires_grad=True)
    lib.special.xlog1py(x, y).sum().backward(); print("xlog1py", x.grad, y.grad)
    x = lib.tensor([0., 0., 1., 0.], requires_grad=True); y = lib.tensor([0., np.nan, 0., -1.], requires_grad=True)
    lib.special.xlogy(x, y).sum().backward(); print("xlogy", x.grad, y.grad)
    x = lib.tensor([0., 0., 1., 0.], requires_grad=True); y = lib.tensor([0., np.nan, 0., -1.], requires_grad=True)
    lib.xlogy(x, y).sum().backward(); print("torch.xlogy", x.grad, y.grad)
    x = lib.tensor([0., -1., 0.5, np.inf], requires_grad=True)
    lib.special.entr(x).sum().backward(); print("entr", lib.special.entr(x.detach()), x.grad)
    x = lib.tensor([0., 1e-9, 1.], requires_grad=True)
    lib.special.sinc(x).sum().backward(); print("sinc", x.grad)
