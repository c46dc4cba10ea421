import numpy as np, symgrad as sg, functools, types, sys
B = sys.argv[1] if len(sys.argv) > 1 else "interpreter"
def chk(name, got, want):
    ok = np.allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float))
    print("OK " if ok else "BAD", name, "" if ok else (got, want))
x = np.array([0.5, 1.5])
# 1. global scalar int changed
K = 2
def f1(x): return np.sum(x ** K)
g = sg.grad(f1, backend=B)
chk("global int", g(x), 2 * x); K = 3; chk("global int changed", g(x), 3 * x ** 2)
# 2. default arg mutated via __defaults__
def f2(x, c=2.0): return np.sum(c * x)
g = sg.grad(f2, backend=B)
chk("default", g(x), [2, 2]); f2.__defaults__ = (5.0,); chk("default changed", g(x), [5, 5])
# 3. kwdefaults
def f3(x, *, c=2.0): return np.sum(c * x)
g = sg.grad(f3, backend=B)
chk("kwdefault", g(x), [2, 2]); f3.__kwdefaults__ = {"c": 7.0}; chk("kwdefault changed", g(x), [7, 7])
# 4. partial args changed
def f4(c, x): return np.sum(c * x * x)
p = functools.partial(f4, np.array([1.0, 2.0]))
g = sg.grad(p, backend=B)
chk("partial", g(x), 2 * np.array([1., 2.]) * x); p.args[0][:] = [3., 4.]; chk("partial mutated", g(x), 2 * np.array([3., 4.]) * x)
# 5. closure cell rebinding
def make():
    c = 1.0
    def f(x): return np.sum(c * x)
    def setc(v):
        nonlocal c; c = v
    return f, setc
f5, setc = make(); g = sg.grad(f5, backend=B)
chk("cell", g(x), [1, 1]); setc(4.0); chk("cell changed", g(x), [4, 4])
# 6. module attribute
mod = types.ModuleType("mymod"); mod.scale = 2.0; sys.modules["mymod"] = mod
def f6(x): return np.sum(mod.scale * x)
g = sg.grad(f6, backend=B)
chk("module attr", g(x), [2, 2]); mod.scale = 9.0; chk("module attr changed", g(x), [9, 9])
# 7. captured array mutated in place
W = np.array([1.0, 2.0])
def f7(x): return np.sum(W * x * x)
g = sg.grad(f7, backend=B)
chk("array", g(x), 2 * W * x); W *= 3; chk("array inplace", g(x), 2 * W * x)
# 8. the function's __code__ replaced
def f8(x): return np.sum(x * 2.0)
g = sg.grad(f8, backend=B)
chk("code", g(x), [2, 2]); f8.__code__ = (lambda x: np.sum(x * 5.0)).__code__; chk("code replaced", g(x), [5, 5])
# 9. global function rebound
def helper(x): return x * 2.0
def f9(x): return np.sum(helper(x))
g = sg.grad(f9, backend=B)
chk("helper", g(x), [2, 2])
def helper(x): return x * 6.0
chk("helper rebound", g(x), [6, 6])
# 10. captured list element changed
L = [1.0, 2.0]
def f10(x): return np.sum(L[0] * x + L[1])
g = sg.grad(f10, backend=B)
chk("list", g(x), [1, 1]); L[0] = 8.0; chk("list changed", g(x), [8, 8])
# 11. dict with int keys
D = {0: 2.0, "a": 3.0}
def f11(x): return np.sum(D[0] * x * D["a"])
g = sg.grad(f11, backend=B)
chk("dict", g(x), [6, 6]); D[0] = 1.0; chk("dict changed", g(x), [3, 3])
# 12. bool global
FLAG = True
def f12(x): return np.sum(x * x) if FLAG else np.sum(x)
g = sg.grad(f12, backend=B)
chk("flag", g(x), 2 * x); FLAG = False; chk("flag changed", g(x), [1, 1])
# 13. numpy scalar global
S = np.float64(2.0)
def f13(x): return np.sum(S * x)
g = sg.grad(f13, backend=B)
chk("npscalar", g(x), [2, 2]); S = np.float64(5.0); chk("npscalar changed", g(x), [5, 5])
# 14. 0-d array captured and mutated
Z = np.array(2.0)
def f14(x): return np.sum(Z * x)
g = sg.grad(f14, backend=B)
chk("0d", g(x), [2, 2]); Z[()] = 7.0; chk("0d mutated", g(x), [7, 7])
# 15. object attribute through a property
class P:
    def __init__(self): self._v = 2.0
    @property
    def v(self): return self._v
pp = P()
def f15(x): return np.sum(pp.v * x)
g = sg.grad(f15, backend=B)
chk("property", g(x), [2, 2]); pp._v = 5.0; chk("property changed", g(x), [5, 5])
# 16. a view of captured array: base mutated
base = np.array([1.0, 2.0, 3.0]); V = base[1:]
def f16(x): return np.sum(V * x)
g = sg.grad(f16, backend=B)
chk("view", g(x), V.copy()); base[:] = 10.; chk("view base mutated", g(x), [10, 10])
# 17. tuple default containing an array
def f17(x, c=(np.array([1.0, 1.0]),)): return np.sum(c[0] * x)
g = sg.grad(f17, backend=B)
chk("tuple default", g(x), [1, 1]); f17.__defaults__[0][0][:] = 4.0; chk("tuple default mutated", g(x), [4, 4])
# 18. global shape changes
G = np.array([1.0, 2.0])
def f18(x): return np.sum(G) * np.sum(x)
g = sg.grad(f18, backend=B)
chk("shape", g(x), [3, 3]); G = np.array([1.0, 2.0, 3.0]); chk("shape changed", g(x), [6, 6])
# 19. global dtype changes to complex? int array
G2 = np.array([1.0, 2.0])
def f19(x): return np.sum(G2 * x)
g = sg.grad(f19, backend=B)
chk("dtype", g(x), [1, 2]); G2 = np.array([3, 4]); chk("dtype int", g(x), [3, 4])
# 20. instance __call__ with attribute
class M:
    def __init__(self): self.a = 1.0
    def __call__(self, x): return np.sum(self.a * x)
m = M(); g = sg.grad(m, backend=B)
chk("callable", g(x), [1, 1]); m.a = 3.0; chk("callable changed", g(x), [3, 3])
# 21. class attribute changed via subclass instance
class Base_: k = 2.0
class Sub(Base_):
    def f(self, x): return np.sum(self.k * x)
s = Sub(); g = sg.grad(lambda x: s.f(x), backend=B)
chk("classattr", g(x), [2, 2]); Base_.k = 7.0; chk("classattr base changed", g(x), [7, 7])
s.k = 1.0; chk("instance shadows", g(x), [1, 1])
