import numpy as np, symgrad as sg, dask.array as da, dask
dask.config.set(scheduler="synchronous")
rng = np.random.default_rng(0)
Xn = rng.normal(size=(103, 4)); w = rng.normal(size=4)
X = da.from_array(Xn, chunks=(25, 4))
f = lambda w, X: np.sum(X * w, axis=(0, 1)) ** 2
print(sg.grad(f)(w, X), 2 * np.sum(Xn * w) * Xn.sum(0))
try:
    g = sg.grad(f, argnums=1)(w, X); print(np.allclose(np.asarray(g), 2 * np.sum(Xn * w) * np.broadcast_to(w, Xn.shape)))
except Exception as e:
    import traceback; traceback.print_exc()
f2 = lambda w, X: np.mean(X * w) * 3.0
g = sg.grad(f2, argnums=1)(w, X)
