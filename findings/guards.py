import numpy as np, symgrad as sg, functools, dataclasses, warnings, sys
import tempfile, os
_dir = tempfile.mkdtemp()
with open(os.path.join(_dir, "cfgmod.py"), "w") as _f:
    _f.write("import numpy as np\nS = 2.0\nW = np.array([1.0, 2.0, 3.0])\nclass K:\n    s = 1.5\n")
sys.path.insert(0, _dir)
import cfgmod
warnings.simplefilter("ignore")
x = np.array([0.3, -0.7, 1.1])
fails = []
def check(name, f, mutate, transforms=("grad", "jit", "vg", "hess", "vmap", "jacfwd")):
    for backend in ("numpy", "numba"):
        for tr in transforms:
            def T(f):
                if tr == "grad": return sg.grad(f, backend=backend)
                if tr == "jit": return sg.jit(f, backend=backend)
                if tr == "vg": return lambda x: sg.value_and_grad(f, backend=backend)(x)[1]
                if tr == "hess": return sg.hessian(f, backend=backend)
                if tr == "vmap": return sg.jit(sg.vmap(lambda r: f(r)), backend=backend)
                if tr == "jacfwd": return sg.jacfwd(f, backend=backend)
            ref = {"grad": sg.grad, "jit": lambda f: f, "vg": lambda f: (lambda x: sg.value_and_grad(f, backend="numpy")(x)[1]), "hess": sg.hessian, "vmap": lambda f: (lambda X: np.stack([f(r) for r in X])), "jacfwd": sg.jacfwd}[tr]
            state = mutate(None)  # reset
            try:
                g = T(f)
                arg = np.stack([x, x * 2]) if tr == "vmap" else x
                g(arg)
                mutate(1)
                got = g(arg)
                want = ref(f)(arg) if tr in ("jit", "vmap") else (ref(f)(arg) if tr not in ("grad", "hess", "vg", "jacfwd") else None)
                if want is None:
                    # fresh transform as oracle
                    want = {"grad": sg.grad(f, backend="numpy"), "hess": sg.hessian(f, backend="numpy"), "vg": lambda x: sg.value_and_grad(f, backend="numpy")(x)[1], "jacfwd": sg.jacfwd(f, backend="numpy")}[tr](arg)
                # fresh-trace oracle compare
                if not np.allclose(np.asarray(got, float), np.asarray(want, float), equal_nan=True):
                    fails.append((name, backend, tr, got, want))
            except Exception as e:
                fails.append((name, backend, tr, "ERR", f"{type(e).__name__}: {str(e)[:100]}"))
            finally:
                mutate(None)

# 1 global float
G = 2.0
def f1(x): return np.sum(np.sin(x) * G)
def m1(k):
    global G; G = 2.0 if k is None else 5.0
check("global", f1, m1)
# 2 global array mutated in place
A = np.array([1.0, 2.0, 3.0])
def f2(x): return np.sum(x * A)
def m2(k):
    A[:] = [1.0, 2.0, 3.0] if k is None else [4.0, -1.0, 0.5]
check("array inplace", f2, m2)
# 3 closure
def mk():
    c = [2.0]
    s = 2.0
    def f(x): return np.sum(x ** 2 * s)
    def m(k):
        nonlocal s; s = 2.0 if k is None else 7.0
    return f, m
check("closure", *mk())
# 4 module attr
def f4(x): return np.sum(np.exp(x) * cfgmod.S)
def m4(k): cfgmod.S = 2.0 if k is None else -3.0
check("module attr", f4, m4)
# 5 module array in place
def f5(x): return np.sum(x * cfgmod.W)
def m5(k): cfgmod.W[1] = 2.0 if k is None else 9.0
check("module array", f5, m5)
# 6 class attr
def f6(x): return np.sum(x * cfgmod.K.s)
def m6(k): cfgmod.K.s = 1.5 if k is None else 3.5
check("class attr", f6, m6)
# 7 default argument mutated (list default)
def f7(x, d=[2.0]): return np.sum(x * d[0])
def m7(k): f7.__defaults__[0][0] = 2.0 if k is None else 6.0
check("default list", f7, m7)
# 8 __defaults__ replaced
def f8(x, d=2.0): return np.sum(x * d)
def m8(k): f8.__defaults__ = (2.0,) if k is None else (6.0,)
check("defaults replaced", f8, m8)
# 9 kwdefaults
def f9(x, *, d=2.0): return np.sum(x * d)
def m9(k): f9.__kwdefaults__ = {"d": 2.0 if k is None else 6.0}
check("kwdefaults", f9, m9)
# 10 object attribute via method
class Model:
    def __init__(self): self.w = np.array([1.0, 2.0, 3.0]); self.b = 0.5
    def __call__(self, x): return np.sum(np.tanh(x * self.w) + self.b * x)
mdl = Model()
def m10(k):
    mdl.w = np.array([1.0, 2.0, 3.0]) if k is None else np.array([3.0, 1.0, -2.0]); mdl.b = 0.5 if k is None else 2.0
check("callable obj", mdl, m10)
# 11 functools.partial arg mutated
arr = np.array([1.0, 1.0, 1.0])
def base(x, w): return np.sum(x * w * x)
p = functools.partial(base, w=arr)
def m11(k): arr[0] = 1.0 if k is None else 10.0
check("partial", p, m11)
# 12 dataclass frozen replaced
@dataclasses.dataclass
class Cfg: s: float = 1.0
cfg = Cfg()
def f12(x): return np.sum(x * cfg.s)
def m12(k): cfg.s = 1.0 if k is None else 4.0
check("dataclass", f12, m12)
# 13 global function swapped
def act(x): return np.sin(x)
def f13(x): return np.sum(act(x))
def m13(k):
    global act
    act = (lambda x: np.sin(x)) if k is None else (lambda x: np.cos(x))
check("global fn swap", f13, m13)
# 14 global int used in range (structure)
NN = 2
def f14(x):
    y = x
    for _ in range(NN): y = np.sin(y)
    return np.sum(y)
def m14(k):
    global NN; NN = 2 if k is None else 3
check("global int loop", f14, m14)
# 15 dict global
D = {"a": 1.0}
def f15(x): return np.sum(x * D["a"])
def m15(k): D["a"] = 1.0 if k is None else 5.0
check("dict", f15, m15)
# 16 numpy scalar in array global, 0-d array in place
Z = np.array(2.0)
def f16(x): return np.sum(x * Z)
def m16(k): Z[()] = 2.0 if k is None else 3.0
check("0d array", f16, m16)
# 17 view of global mutated via base
Bs = np.array([1.0, 2.0, 3.0, 4.0]); Vw = Bs[1:]
def f17(x): return np.sum(x * Vw)
def m17(k): Bs[2] = 3.0 if k is None else -8.0
check("view via base", f17, m17)
# 18 nested closure of closure cell replaced via cell_contents
def mk18():
    s = 2.0
    def f(x): return np.sum(x * s)
    return f
f18 = mk18()
def m18(k): f18.__closure__[0].cell_contents = 2.0 if k is None else 9.0
check("cell_contents", f18, m18)
# 19 global numpy float32 scalar
GF = np.float32(2.0)
def f19(x): return np.sum(x * GF)
def m19(k):
    global GF; GF = np.float32(2.0) if k is None else np.float32(2.5)
check("np.float32 global", f19, m19)
# 20 global complex
GC = 1 + 1j
def f20(x): return np.sum(np.abs(x + GC))
def m20(k):
    global GC; GC = (1 + 1j) if k is None else (1 - 1j)
check("complex global", f20, m20)
# 21 array dtype change same bytes? array replaced by same-bytes different dtype
GA = np.array([1, 2, 3], dtype=np.int64)
def f21(x): return np.sum(x * GA)
def m21(k):
    global GA; GA = np.array([1, 2, 3], dtype=np.int64) if k is None else np.array([1.5, 2, 3])
check("array dtype", f21, m21)
# 22 array strides changed in place (same bytes, different view)
GS = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
def f22(x): return np.sum(GS @ x)
def m22(k):
    global GS
    GS = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]) if k is None else np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]).T
check("array transposed", f22, m22)
print(len(fails))
for f in fails: print(f)
