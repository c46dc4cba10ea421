import numpy as np, symgrad as sg, dask.array as da, dask
dask.config.set(scheduler="synchronous")
rng = np.random.default_rng(0)
Xn = rng.normal(size=(50, 4)); yn = rng.normal(size=50); w = rng.normal(size=4)
loss = lambda w, X, y: np.mean((X @ w - y) ** 2) + np.sum(np.sort(X, axis=1)[:, -1] * y) / 50
want_v, want_g = sg.value_and_grad(loss, argnums=(0, 1), backend="interpreter")(w, Xn, yn)
for chunks in [((10, 4)), ((10, 2)), ((50, 1)), ((7, 3))]:
    X = da.from_array(Xn, chunks=chunks); y = da.from_array(yn, chunks=chunks[0])
    try:
        v, g = sg.value_and_grad(loss, argnums=(0, 1))(w, X, y)
        print(chunks, np.isclose(v, want_v), np.allclose(g[0], want_g[0]), np.allclose(np.asarray(g[1]), want_g[1]))
    except Exception as e:
        print(chunks, "EXC", type(e).__name__, str(e)[:200])
# float32 data
X = da.from_array(Xn.astype(np.float32), chunks=(10, 4)); y = da.from_array(yn.astype(np.float32), chunks=10)
v, g = sg.value_and_grad(loss)(w.astype(np.float32), X, y)
v0, g0 = sg.value_and_grad(loss, backend="interpreter")(w.astype(np.float32), Xn.astype(np.float32), yn.astype(np.float32))
print("f32", v.dtype, g.dtype, np.isclose(v, v0, rtol=1e-5), np.allclose(g, g0, rtol=1e-4))
# y as 2-D column (n,1) with chunks
Y = da.from_array(yn[:, None], chunks=(10, 1))
f2 = lambda w, X, Y: np.mean((X @ w[:, None] - Y) ** 2)
print("col", np.allclose(sg.grad(f2)(w, da.from_array(Xn, chunks=(10, 4)), Y), sg.grad(f2, backend="interpreter")(w, Xn, yn[:, None])))
# mixing numpy row-array with dask -> refused
try:
    sg.grad(f2)(w, da.from_array(Xn, chunks=(10, 4)), yn[:, None]); print("numpy rows accepted?!")
except Exception as e: print("numpy rows:", type(e).__name__, str(e)[:120])
