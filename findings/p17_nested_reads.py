import numpy as np, symgrad as sg, sys, functools
B = sys.argv[1] if len(sys.argv) > 1 else "interpreter"
def chk(name, got, want):
    ok = np.allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float))
    print("OK " if ok else "BAD", name, "" if ok else (got, want))
x = np.array([0.5, 1.5])
W = np.array([1.0, 2.0]); K = 2.0
def f1(x):
    def inner(y): return y * W
    return np.sum(inner(x))
g = sg.grad(f1, backend=B); chk("nested def", g(x), W); W = np.array([3.0, 4.0]); chk("nested def changed", g(x), W)
def f2(x): return np.sum((lambda y: y * K)(x))
g = sg.grad(f2, backend=B); chk("lambda", g(x), [2, 2]); K = 5.0; chk("lambda changed", g(x), [5, 5])
def f3(x): return sum(x[i] * W[i] for i in range(2))
g = sg.grad(f3, backend=B); chk("genexpr", g(x), W); W = np.array([7.0, 8.0]); chk("genexpr changed", g(x), W)
def f4(x): return np.sum(np.stack([x[i] * K for i in range(2)]))
g = sg.grad(f4, backend=B); chk("listcomp", g(x), [K, K]); K = 9.0; chk("listcomp changed", g(x), [K, K])
L = [1.0, 2.0]
def f5(x): return np.sum(np.stack([x[i] * c for i, c in enumerate(L)]))
g = sg.grad(f5, backend=B); chk("listcomp over list", g(x), L); L[1] = 6.0; chk("listcomp list changed", g(x), L)
D = {"a": 1.0}
def f6(x): return np.sum(x * {k: v for k, v in D.items()}["a"])
g = sg.grad(f6, backend=B); chk("dictcomp", g(x), [1, 1]); D["a"] = 4.0; chk("dictcomp changed", g(x), [4, 4])
class Cfg: scale = 2.0
cfg = Cfg()
def f7(x):
    s = 0.0
    for k in ["scale"]:
        s = s + getattr(cfg, k)
    return np.sum(x * s)
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    g = sg.grad(f7, backend=B); chk("getattr dynamic", g(x), [2, 2]); cfg.scale = 3.0; chk("getattr dynamic changed", g(x), [3, 3])
# a decorator-wrapped helper (functools.wraps)
def deco(fn):
    @functools.wraps(fn)
    def w(*a): return fn(*a) * K
    return w
@deco
def helper(y): return y * W
def f8(x): return np.sum(helper(x))
g = sg.grad(f8, backend=B); chk("wrapped helper", g(x), W * K); K = 1.0; W = np.array([2.0, 2.0]); chk("wrapped helper changed", g(x), W * K)
# a staticmethod / classmethod reading class attrs
class Model:
    w = np.array([1.0, 1.0])
    @classmethod
    def f(cls, x): return np.sum(cls.w * x)
    @staticmethod
    def h(x): return np.sum(Model.w * x * 2)
g = sg.grad(Model.f, backend=B); chk("classmethod", g(x), Model.w); Model.w = np.array([5.0, 6.0]); chk("classmethod changed", g(x), Model.w)
g = sg.grad(Model.h, backend=B); chk("staticmethod", g(x), 2 * Model.w); Model.w = np.array([1.0, 0.0]); chk("staticmethod changed", g(x), 2 * Model.w)
# attribute of a dataclass frozen? numpy array in a tuple in a global dict
import dataclasses
@dataclasses.dataclass
class P:
    a: float
    b: np.ndarray
pp = P(1.0, np.array([1.0, 2.0]))
def f9(x): return np.sum(pp.a * pp.b * x)
g = sg.grad(f9, backend=B); chk("dataclass", g(x), pp.a * pp.b); pp.b[0] = 10; chk("dataclass changed", g(x), pp.a * pp.b)
pp = P(3.0, np.array([1.0, 1.0])); chk("dataclass rebound", g(x), pp.a * pp.b)
# a global read through a module-level function's default of another module
import types
mod = types.ModuleType("m2"); exec("import numpy as np\nS = 2.0\ndef act(x):\n    return x * S\n", mod.__dict__); sys.modules["m2"] = mod
def f10(x): return np.sum(mod.act(x))
g = sg.grad(f10, backend=B); chk("module function global", g(x), [2, 2]); mod.S = 7.0; chk("module function global changed", g(x), [7, 7])
# nonlocal mutation inside traced fn? (closure cell changed by a helper between calls)
def counter():
    n = [0.0]
    def f(x):
        return np.sum(x * n[0])
    return f, n
f11, n = counter(); g = sg.grad(f11, backend=B); chk("cell list", g(x), [0, 0]); n[0] = 2.5; chk("cell list changed", g(x), [2.5, 2.5])
# enum and string mode globals
MODE = "sin"
def f12(x): return np.sum(np.sin(x) if MODE == "sin" else np.cos(x))
g = sg.grad(f12, backend=B); chk("str mode", g(x), np.cos(x)); MODE = "cos"; chk("str mode changed", g(x), -np.sin(x))
# a numpy array global replaced by a same-shape memmap/subclass
class MyArr(np.ndarray): pass
W2 = np.array([1.0, 2.0])
def f13(x): return np.sum(W2 * x)
g = sg.grad(f13, backend=B); chk("subclass", g(x), W2); W2 = np.array([4.0, 4.0]).view(MyArr); chk("subclass changed", g(x), [4, 4])
# a global list of arrays, one mutated in place
LA = [np.array([1.0, 1.0]), np.array([2.0, 2.0])]
def f14(x): return np.sum(LA[0] * x + LA[1] * x ** 2)
g = sg.grad(f14, backend=B); chk("list of arrays", g(x), LA[0] + 2 * LA[1] * x); LA[1][:] = 0.0; chk("list of arrays mutated", g(x), LA[0])
# a tuple global containing a list
TP = ([1.0],)
def f15(x): return np.sum(x * TP[0][0])
g = sg.grad(f15, backend=B); chk("tuple of list", g(x), [1, 1]); TP[0][0] = 3.0; chk("tuple of list changed", g(x), [3, 3])
# a set/frozenset global used in a membership test
S = {1, 2}
def f16(x): return np.sum(x * (2.0 if 3 in S else 1.0))
g = sg.grad(f16, backend=B); chk("set", g(x), [1, 1]); S.add(3); chk("set changed", g(x), [2, 2])
# a bytearray? a global np.random.Generator seeded - fails closed
# an object with __getitem__
class Table:
    def __init__(self): self.d = {"k": 1.0}
    def __getitem__(self, k): return self.d[k]
T = Table()
def f17(x): return np.sum(x * T["k"])
g = sg.grad(f17, backend=B); chk("getitem obj", g(x), [1, 1]); T.d["k"] = 6.0; chk("getitem obj changed", g(x), [6, 6])
# an object with __len__ / iteration
class Bag:
    def __init__(self): self.items = [1.0, 2.0]
    def __iter__(self): return iter(self.items)
bag = Bag()
def f18(x): return np.sum(x * sum(bag))
g = sg.grad(f18, backend=B); chk("iter obj", g(x), [3, 3]); bag.items.append(4.0); chk("iter obj changed", g(x), [7, 7])
# an object with __mul__ defined and attr
class Scale:
    def __init__(self, s): self.s = s
    def __rmul__(self, o): return o * self.s
sc = Scale(2.0)
def f19(x): return np.sum(x * sc) if False else np.sum(sc.__rmul__(x))
g = sg.grad(f19, backend=B); chk("rmul obj", g(x), [2, 2]); sc.s = 5.0; chk("rmul obj changed", g(x), [5, 5])
class Scale2:
    def __init__(self, s): self.s = s
    def __call__(self, o): return o * self.s
    def __rmul__(self, o): return o * self.s
sc2 = Scale2(2.0)
def f20(x): return np.sum(x.__mul__(1.0) * 1.0 + 0 * x) + np.sum(sc2(x))
g = sg.grad(f20, backend=B); chk("call obj", g(x), [3, 3]); sc2.s = 5.0; chk("call obj changed", g(x), [6, 6])
# property that reads a global
GG = 2.0
class Q:
    @property
    def v(self): return GG
q = Q()
def f21(x): return np.sum(x * q.v)
g = sg.grad(f21, backend=B); chk("property global", g(x), [2, 2]); GG = 8.0; chk("property global changed", g(x), [8, 8])
# operator overloading on a user object: implicit dunder
class Off:
    def __init__(self): self.o = 1.0
    def __radd__(self, other): return other + self.o
off = Off()
def f22(x): return np.sum((x * x) + off) if False else np.sum(off.__radd__(x * x) * x)
g = sg.grad(f22, backend=B); chk("radd", g(x), 3 * x ** 2 + off.o); off.o = 4.0; chk("radd changed", g(x), 3 * x ** 2 + off.o)
class Off2:
    def __init__(self): self.o = 1.0
    def __add__(self, other): return other * self.o
off2 = Off2()
def f23(x): return np.sum(off2 + x)
g = sg.grad(f23, backend=B); chk("implicit add dunder", g(x), [1, 1]); off2.o = 4.0; chk("implicit add dunder changed", g(x), [4, 4])
