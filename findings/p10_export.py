import numpy as np, symgrad as sg, sys, importlib, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
sys.path.insert(0, "/tmp/review_exp")
def cmp(name, a, b):
    a = np.asarray(a); b = np.asarray(b)
    ok = a.shape == b.shape and np.allclose(a, b, rtol=1e-9, atol=1e-12)
    print("OK " if ok else "BAD", name, "" if ok else (a, b))
def loss(w, x, n):
    return np.mean(np.tanh(x @ w) ** 2) * n
w, x = np.full(3, 0.1), np.arange(12.0).reshape(4, 3) / 10
for tgt in ["numpy", "numba"]:
    name = f"exp_{tgt}"
    sg.export(sg.grad(loss, backend="interpreter"), (w, x, 2), f"/tmp/review_exp/{name}.py", target=tgt)
    m = importlib.import_module(name)
    fn = [getattr(m, a) for a in dir(m) if a.startswith("grad_")][0]
    w2 = np.array([0.5, -1.0, 2.0]); x2 = np.random.default_rng(0).normal(size=(4, 3))
    jg = jax.grad(lambda w, x, n: jnp.mean(jnp.tanh(x @ w) ** 2) * n)
    cmp(f"{tgt} other point", fn(w2, x2, 2), jg(w2, x2, 2.))
    try: cmp(f"{tgt} other n", fn(w2, x2, 5), jg(w2, x2, 5.))
    except Exception as e: print(tgt, "other n:", type(e).__name__, e)
    try: cmp(f"{tgt} float n", fn(w2, x2, 5.0), jg(w2, x2, 5.))
    except Exception as e: print(tgt, "float n:", type(e).__name__, e)
    try: cmp(f"{tgt} f-order x", fn(w2, np.asfortranarray(x2), 2), jg(w2, x2, 2.))
    except Exception as e: print(tgt, "F x:", type(e).__name__, e)
    try: cmp(f"{tgt} strided x", fn(w2[::1], np.ascontiguousarray(np.repeat(x2, 2, axis=1))[:, ::2], 2), jg(w2, x2, 2.))
    except Exception as e: print(tgt, "strided x:", type(e).__name__, e)
    try: cmp(f"{tgt} int w", fn(np.array([1, 0, 2]), x2, 2), jg(np.array([1., 0, 2]), x2, 2.))
    except Exception as e: print(tgt, "int w:", type(e).__name__, e)
    try: cmp(f"{tgt} f32 x", fn(w2, x2.astype(np.float32), 2), jg(w2, x2.astype(np.float32).astype(float), 2.))
    except Exception as e: print(tgt, "f32 x:", type(e).__name__, e)
    try: cmp(f"{tgt} list w", fn([0.5, -1.0, 2.0], x2, 2), jg(w2, x2, 2.))
    except Exception as e: print(tgt, "list w:", type(e).__name__, e)
    try: print(fn(w2, x2[:3], 2))
    except Exception as e: print(tgt, "shape:", type(e).__name__, str(e)[:100])
# export with a captured constant, then mutate the constant: module should keep snapshot (documented?)
C = np.array([1.0, 2.0, 3.0])
def lc(w): return np.sum(C * w ** 2)
sg.export(sg.grad(lc, backend="interpreter"), (w,), "/tmp/review_exp/exp_c.py", target="numpy")
import exp_c
fn = [getattr(exp_c, a) for a in dir(exp_c) if a.startswith("grad_")][0]
cmp("captured", fn(w), 2 * C * w)
# value_and_grad export, hessian export, while loops
def wl(a):
    return sg.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * a), (0, a))[1]
sg.export(sg.grad(wl, backend="interpreter"), (0.5,), "/tmp/review_exp/exp_w.py", target="numpy")
import exp_w
fn = [getattr(exp_w, a) for a in dir(exp_w) if a.startswith("grad_")][0]
cmp("while export", fn(1.3), 5 * 1.3 ** 4)
def fl(a, n):
    return sg.fori_loop(0, n, lambda i, v: v * a, a)
sg.export(sg.grad(fl, backend="interpreter"), (0.5, 3), "/tmp/review_exp/exp_f.py", target="numpy")
import exp_f
fn = [getattr(exp_f, a) for a in dir(exp_f) if a.startswith("grad_")][0]
cmp("fori export n=3", fn(1.3, 3), 4 * 1.3 ** 3)
try: cmp("fori export n=6", fn(1.3, 6), 7 * 1.3 ** 6)
except Exception as e: print("fori n=6:", type(e).__name__, e)
sg.export(sg.grad(fl, backend="interpreter"), (0.5, 3), "/tmp/review_exp/exp_f2.py", target="numba")
import exp_f2
fn = [getattr(exp_f2, a) for a in dir(exp_f2) if a.startswith("grad_")][0]
try: cmp("fori export numba n=6", fn(1.3, 6), 7 * 1.3 ** 6)
except Exception as e: print("fori numba n=6:", type(e).__name__, e)
