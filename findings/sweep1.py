import numpy as np
from _h import compare
rng = np.random.default_rng(0)
X4 = rng.standard_normal((2, 4, 7, 6))
W = rng.standard_normal((6, 2, 3, 2))
X3 = rng.standard_normal((2, 4, 9))
W1 = rng.standard_normal((4, 2, 3))

def P(fn):
    return fn
def conv2d(L, dt):
    x = L.tensor(X4, dtype=dt, requires_grad=True); w = L.tensor(W, dtype=dt, requires_grad=True)
    y = L.nn.functional.conv2d(x, w, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)
    (y * y).sum().backward(); return [y, x.grad, w.grad]
def convT2d(L, dt):
    x = L.tensor(X4, dtype=dt, requires_grad=True); w = L.tensor(rng2(W.transpose(1,0,2,3).shape*0+ (4,3,3,2)), dtype=dt, requires_grad=True)
    y = L.nn.functional.conv_transpose2d(x, w, stride=(2, 3), padding=(1, 0), output_padding=(1, 2), dilation=(1, 2), groups=2)
    (y * y).sum().backward(); return [y, x.grad, w.grad]
WT = np.random.default_rng(1).standard_normal((4, 3, 3, 2))
def rng2(s): return WT
def convT1d(L, dt):
    x = L.tensor(X3, dtype=dt, requires_grad=True); w = L.tensor(W1, dtype=dt, requires_grad=True)
    y = L.nn.functional.conv_transpose1d(x, w, stride=3, padding=2, output_padding=1, dilation=2, groups=2)
    (y.sin()).sum().backward(); return [y, x.grad, w.grad]
def conv1d_pad(L, dt):
    x = L.tensor(X3, dtype=dt, requires_grad=True); w = L.tensor(W1.reshape(4,2,3)[:, :, :], dtype=dt, requires_grad=True)
    y = L.nn.functional.conv1d(x, w, padding='same', dilation=2, groups=2)
    (y.sin()).sum().backward(); return [y, x.grad, w.grad]
def conv3d(L, dt):
    x = L.tensor(rng.standard_normal((1,2,5,4,5)) if False else X5, dtype=dt, requires_grad=True); w = L.tensor(W5, dtype=dt, requires_grad=True)
    y = L.nn.functional.conv3d(x, w, stride=(1,2,2), padding=(1,0,1), dilation=(2,1,1))
    (y.cos()).sum().backward(); return [y, x.grad, w.grad]
X5 = rng.standard_normal((2,2,5,4,5)); W5 = rng.standard_normal((3,2,2,2,3))
def maxpool(L, dt, **kw):
    def f(L, dt):
        x = L.tensor(X4, dtype=dt, requires_grad=True)
        y, i = L.nn.functional.max_pool2d(x, return_indices=True, **kw)
        (y * y).sum().backward(); return [y, i, x.grad]
    return f
def avgpool(**kw):
    def f(L, dt):
        x = L.tensor(X4, dtype=dt, requires_grad=True)
        y = L.nn.functional.avg_pool2d(x, **kw)
        (y * y).sum().backward(); return [y, x.grad]
    return f
def avgpool1(**kw):
    def f(L, dt):
        x = L.tensor(X3, dtype=dt, requires_grad=True)
        y = L.nn.functional.avg_pool1d(x, **kw)
        (y * y).sum().backward(); return [y, x.grad]
    return f
def maxpool1(**kw):
    def f(L, dt):
        x = L.tensor(X3, dtype=dt, requires_grad=True)
        y, i = L.nn.functional.max_pool1d(x, return_indices=True, **kw)
        (y * y).sum().backward(); return [y, i, x.grad]
    return f
def adapt(kind, size):
    def f(L, dt):
        x = L.tensor(X4, dtype=dt, requires_grad=True)
        y = getattr(L.nn.functional, kind)(x, size)
        if isinstance(y, tuple): y = y[0]
        (y * y).sum().backward(); return [y, x.grad]
    return f
def unpool(L, dt):
    x = L.tensor(X4, dtype=dt, requires_grad=True)
    y, i = L.nn.functional.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    z = L.nn.functional.max_unpool2d(y, i, 3, stride=2, padding=1, output_size=(7, 6))
    (z * z).sum().backward(); return [z, x.grad]
cases = []
for dt in ["float64", "float32"]:
    cases += [("conv2d", conv2d, dt), ("convT2d", convT2d, dt), ("convT1d", convT1d, dt), ("conv1d_same", conv1d_pad, dt), ("conv3d", conv3d, dt),
      ("maxpool ceil dil", maxpool(None, None, kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True), dt),
      ("maxpool ceil", maxpool(None, None, kernel_size=(2,4), stride=(3,2), padding=(1,2), ceil_mode=True), dt),
      ("avgpool cip F ceil", avgpool(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), dt),
      ("avgpool cip T ceil", avgpool(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=True), dt),
      ("avgpool div", avgpool(kernel_size=(2,3), stride=(2,2), padding=(1,1), ceil_mode=True, divisor_override=5), dt),
      ("avgpool1 ceil", avgpool1(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=True), dt),
      ("avgpool1 ceil F", avgpool1(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False), dt),
      ("maxpool1 ceil", maxpool1(kernel_size=2, stride=2, padding=1, dilation=3, ceil_mode=True), dt),
      ("adapt avg 4,5", adapt("adaptive_avg_pool2d", (4, 5)), dt),
      ("adapt avg 5,None", adapt("adaptive_avg_pool2d", (5, None)), dt),
      ("adapt max 3,4", adapt("adaptive_max_pool2d", (3, 4)), dt),
      ("adapt max 5", adapt("adaptive_max_pool2d", 5), dt),
      ("unpool", unpool, dt),
    ]
from _h import main
main(cases)
