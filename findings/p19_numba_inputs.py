import numpy as np, symgrad as sg
sg.config.tiered = False
def chk(name, got, want):
    ok = np.asarray(got).shape == np.asarray(want).shape and np.allclose(got, want)
    print("OK " if ok else "BAD", name, "" if ok else (got, want))
f = lambda x, w: np.sum(np.sin(x @ w) * x[:, 0])
g = sg.grad(f, argnums=(0, 1))
def ref(x, w):
    return sg.grad(f, argnums=(0, 1), backend="interpreter")(np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(w, dtype=float))
base = np.arange(24.).reshape(4, 6) / 10
w = np.array([0.3, -0.2, 0.5])
variants = {
 "contig": (base[:, :3].copy(), w),
 "neg stride": (base[::-1, ::-2], w[::-1]),
 "fortran": (np.asfortranarray(base[:, :3]), w),
 "readonly": (np.frombuffer(base[:, :3].copy().tobytes(), dtype=float).reshape(4, 3), w),
 "int": ((base[:, :3] * 10).astype(np.int64), np.array([1, 0, 2])),
 "int32": ((base[:, :3] * 10).astype(np.int32), w),
 "bool": (base[:, :3] > 0.5, w),
 "f32": (base[:, :3].astype(np.float32), w),
 "unaligned": (np.frombuffer(b"\0" + base[:, :3].copy().tobytes(), dtype=float, offset=1).reshape(4, 3), w),
 "byteswapped": (base[:, :3].astype(">f8"), w),
 "list": (base[:, :3].tolist(), list(w)),
 "0-stride broadcast": (np.broadcast_to(base[0, :3], (4, 3)), w),
}
for rep in range(2):
    for name, (x, ww) in variants.items():
        try:
            got = g(x, ww)
            want = ref(np.asarray(x), np.asarray(ww))
            ok = all(np.allclose(a, b, rtol=1e-5 if name == "f32" else 1e-12) and np.shape(a) == np.shape(b) for a, b in zip(got, want))
            print("OK " if ok else "BAD", rep, name, "" if ok else (got, want))
        except Exception as e:
            print("EXC", rep, name, type(e).__name__, str(e)[:150])
# 0-d and empty
h = sg.grad(lambda x: np.sum(x ** 2) + 0.0)
for x in [np.array(3.0), np.zeros((0,)), np.zeros((2, 0)), np.float64(2.0), 2.0, 3, np.float32(1.5), np.array([[5.0]])]:
    try:
        r = h(x); want = 2 * np.asarray(x, dtype=float)
        print("OK " if np.shape(r) == np.shape(want) and np.allclose(r, want) else "BAD", "0d/empty", repr(x)[:30], type(r), np.shape(r), r)
    except Exception as e:
        print("EXC 0d/empty", repr(x)[:30], type(e).__name__, str(e)[:150])
# mutated input between calls (same object) on fast path
x = np.array([1.0, 2.0]); k = sg.grad(lambda x: np.sum(x ** 3))
a = k(x); x[0] = 5.0; b = k(x); chk("same object mutated", b, 3 * x ** 2)
# output aliasing: result mutated must not affect next call
j = sg.jit(lambda x: x * 1.0)
r1 = j(x); r1[:] = 99; r2 = j(x); chk("output not aliased", r2, x)
j2 = sg.jit(lambda x: x)
r3 = j2(x); r3[0] = -7; chk("identity output is a copy?", x, [5.0, 2.0])
j3 = sg.jit(lambda x: (x.reshape(2, 1), x.T))
r4 = j3(x); r4[0][0, 0] = -8; chk("reshape output not aliased to input", x, [5.0, 2.0])
gr = sg.grad(lambda x, y: np.sum(x * y), argnums=1)
o = gr(x, x); o[0] = 123; chk("grad output not aliased", x, [5.0, 2.0])
