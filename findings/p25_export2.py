import numpy as np, symgrad as sg, sys, importlib
sys.path.insert(0, "/tmp/review_exp")
def cmp(name, a, b):
    import jax
    la = jax.tree_util.tree_leaves(a); lb = jax.tree_util.tree_leaves(b)
    ok = len(la) == len(lb) and all(np.shape(u) == np.shape(v) and np.allclose(u, v, rtol=1e-9) for u, v in zip(la, lb))
    print("OK " if ok else "BAD", name, "" if ok else (a, b))
def loss(p, x):
    return np.sum(np.tanh(x @ p["w"] + p["b"]) ** 2)
p = {"w": np.array([0.1, -0.2]), "b": 0.3}; x = np.arange(6.).reshape(3, 2) / 5
p2 = {"w": np.array([0.7, 0.2]), "b": -1.1}; x2 = x[::-1] * 2
for k, (fn, nm) in enumerate([(sg.value_and_grad(loss, argnums=(0, 1), backend="interpreter"), "vg"),
                  (sg.hessian(lambda w, x: loss({"w": w, "b": 0.3}, x), backend="interpreter"), "hess"),
                  (sg.jacrev(lambda w, x: np.tanh(x @ w), backend="interpreter"), "jac")]):
    args = (p, x) if nm == "vg" else (p["w"], x)
    args2 = (p2, x2) if nm == "vg" else (p2["w"], x2)
    for tgt in ["numpy", "numba"]:
        mod = f"exp2_{nm}_{tgt}"
        try:
            sg.export(fn, args, f"/tmp/review_exp/{mod}.py", target=tgt)
            m = importlib.import_module(mod)
            e = [getattr(m, a) for a in dir(m) if not a.startswith("_") and callable(getattr(m, a)) and (a.split("_")[0] in ("grad", "value") or a == "fn")]
            e = e[0]
            cmp(f"{nm} {tgt} at example", e(*args), fn(*args))
            cmp(f"{nm} {tgt} other point", e(*args2), fn(*args2))
        except Exception as ex:
            print("EXC", nm, tgt, type(ex).__name__, str(ex)[:300])
