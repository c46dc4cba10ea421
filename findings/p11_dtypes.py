import numpy as np, symgrad as sg, sys, warnings
B = sys.argv[1] if len(sys.argv) > 1 else "interpreter"
x32 = np.array([0.1, 0.2, 0.3], dtype=np.float32)
C64 = np.array([1.0, 2.0, 3.0])
c = 1e-8
n = 3
def show(name, fn, *args, want_dtype=None, ref=None):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(*args)
    except Exception as e:
        print("EXC", name, type(e).__name__, str(e)[:150]); return
    rr = r if not isinstance(r, tuple) else r[0]
    plain = ref(*args) if ref else None
    dt = np.asarray(rr).dtype
    ok = (want_dtype is None or dt == want_dtype) and (plain is None or np.allclose(np.asarray(rr, float), np.asarray(plain, float), rtol=1e-6))
    print("OK " if ok else "BAD", name, dt, "" if ok else (rr, plain, want_dtype))
f = lambda x: x * C64
show("jit x32*C64", sg.jit(f, backend=B), x32, want_dtype=np.float64, ref=f)
show("grad x32*C64", sg.grad(lambda x: np.sum(x * C64), backend=B), x32, want_dtype=np.float32, ref=lambda x: C64)
f = lambda x: x + c
show("jit x32+c(py float captured)", sg.jit(f, backend=B), x32, want_dtype=np.float32, ref=f)
f = lambda x: x * n
show("jit x32*n (py int captured)", sg.jit(f, backend=B), x32, want_dtype=np.float32, ref=f)
f = lambda x: x * np.float64(2.0)
show("jit x32*np.float64", sg.jit(f, backend=B), x32, want_dtype=np.float64, ref=f)
f = lambda x: x * np.float32(2.0)
show("jit x32*np.float32", sg.jit(f, backend=B), x32, want_dtype=np.float32, ref=f)
f = lambda x: np.sum(x) + np.float64(1e-9)
show("jit sum32 + f64 scalar", sg.jit(f, backend=B), x32, want_dtype=np.float64, ref=f)
f = lambda x: x * np.array(2.0)
show("jit x32*0d f64 array", sg.jit(f, backend=B), x32, want_dtype=np.float64, ref=f)
f = lambda x, y: x * y
show("jit x32*y(float arg)", sg.jit(f, backend=B), x32, 1e300, want_dtype=np.float32, ref=None)
show("jit x32*k(int arg)", sg.jit(f, backend=B), x32, 3, want_dtype=np.float64, ref=f)
show("jit x32 / int64 arr", sg.jit(lambda x: x / np.array([1, 2, 3]), backend=B), x32, want_dtype=np.float64, ref=lambda x: x / np.array([1, 2, 3]))
show("jit x32 + bool arr", sg.jit(lambda x: x + np.array([True, False, True]), backend=B), x32, want_dtype=np.float32, ref=lambda x: x + np.array([True, False, True]))
show("jit x32 + int32 arr captured", sg.jit(lambda x: x + np.array([1, 2, 3], dtype=np.int32), backend=B), x32, want_dtype=np.float64, ref=lambda x: x + np.array([1, 2, 3], dtype=np.int32))
show("jit x32 + int8 arr captured", sg.jit(lambda x: x + np.array([1, 2, 3], dtype=np.int8), backend=B), x32, want_dtype=np.float32, ref=lambda x: x + np.array([1, 2, 3], dtype=np.int8))
show("jit x32 + uint16", sg.jit(lambda x: x + np.array([1, 2, 3], dtype=np.uint16), backend=B), x32, want_dtype=np.float32, ref=lambda x: x + np.array([1, 2, 3], dtype=np.uint16))
show("jit x32 + f16", sg.jit(lambda x: x + np.array([1, 2, 3], dtype=np.float16), backend=B), x32, want_dtype=np.float32, ref=lambda x: x + np.array([1, 2, 3], dtype=np.float16))
show("jit x32 mean", sg.jit(lambda x: np.mean(x), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.mean(x))
show("jit x32 sum dtype=f64", sg.jit(lambda x: np.sum(x, dtype=np.float64), backend=B), x32, want_dtype=np.float64, ref=lambda x: np.sum(x, dtype=np.float64))
show("jit x32 mean dtype=f64", sg.jit(lambda x: np.mean(x, dtype=np.float64), backend=B), x32, want_dtype=np.float64, ref=lambda x: np.mean(x, dtype=np.float64))
show("jit x32 arange", sg.jit(lambda x: x * np.arange(3), backend=B), x32, want_dtype=np.float64, ref=lambda x: x * np.arange(3))
show("jit x32 linspace", sg.jit(lambda x: x * np.linspace(0, 1, 3), backend=B), x32, want_dtype=np.float64, ref=lambda x: x * np.linspace(0, 1, 3))
show("jit x32 ** 2.5", sg.jit(lambda x: x ** 2.5, backend=B), x32, want_dtype=np.float32, ref=lambda x: x ** 2.5)
show("jit x32 where", sg.jit(lambda x: np.where(x > 0.15, x, 0.0), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.where(x > 0.15, x, 0.0))
show("jit x32 where f64 arr", sg.jit(lambda x: np.where(x > 0.15, x, C64), backend=B), x32, want_dtype=np.float64, ref=lambda x: np.where(x > 0.15, x, C64))
show("jit x32 maximum py", sg.jit(lambda x: np.maximum(x, 0.15), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.maximum(x, 0.15))
show("jit x32 clip", sg.jit(lambda x: np.clip(x, 0.15, 0.25), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.clip(x, 0.15, 0.25))
show("jit x32 matmul f64", sg.jit(lambda x: x @ C64, backend=B), x32, want_dtype=np.float64, ref=lambda x: x @ C64)
show("jit x32 full_like", sg.jit(lambda x: np.full_like(x, 1e-9) + x, backend=B), x32, want_dtype=np.float32, ref=lambda x: np.full_like(x, 1e-9) + x)
show("jit x32 zeros", sg.jit(lambda x: np.zeros(3) + x, backend=B), x32, want_dtype=np.float64, ref=lambda x: np.zeros(3) + x)
show("jit x32 concat f64", sg.jit(lambda x: np.concatenate([x, C64]), backend=B), x32, want_dtype=np.float64, ref=lambda x: np.concatenate([x, C64]))
show("jit x32 stack", sg.jit(lambda x: np.stack([x, C64]), backend=B), x32, want_dtype=np.float64, ref=lambda x: np.stack([x, C64]))
show("jit x32 sg.array", sg.jit(lambda x: sg.array([x[0], 1e-9]), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.array([x[0], np.float32(1e-9)]))
show("jit x32 cumsum", sg.jit(lambda x: np.cumsum(x), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.cumsum(x))
show("jit x32 var", sg.jit(lambda x: np.var(x), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.var(x))
show("jit x32 std", sg.jit(lambda x: np.std(x), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.std(x))
show("jit x32 astype int", sg.jit(lambda x: (x * 10).astype(np.int64) * 1.5, backend=B), x32, want_dtype=np.float64, ref=lambda x: (x * 10).astype(np.int64) * 1.5)
show("jit x32 floor_divide", sg.jit(lambda x: x // 0.07, backend=B), x32, want_dtype=np.float32, ref=lambda x: x // 0.07)
show("jit x32 einsum f64", sg.jit(lambda x: np.einsum("i,i->", x, C64), backend=B), x32, want_dtype=np.float64, ref=lambda x: np.einsum("i,i->", x, C64))
show("jit x32 dot f64", sg.jit(lambda x: np.dot(x, C64), backend=B), x32, want_dtype=np.float64, ref=lambda x: np.dot(x, C64))
show("jit x32 linalg.norm", sg.jit(lambda x: np.linalg.norm(x), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.linalg.norm(x))
show("jit x32 sum of int", sg.jit(lambda x: x + np.sum(np.array([1, 2])), backend=B), x32, want_dtype=np.float64, ref=lambda x: x + np.sum(np.array([1, 2])))
show("jit x32 + len", sg.jit(lambda x: x + len(x), backend=B), x32, want_dtype=np.float32, ref=lambda x: x + len(x))
show("jit x32 + shape", sg.jit(lambda x: x / x.shape[0], backend=B), x32, want_dtype=np.float32, ref=lambda x: x / x.shape[0])
show("jit x32 + x.size", sg.jit(lambda x: x / x.size, backend=B), x32, want_dtype=np.float32, ref=lambda x: x / x.size)
show("jit x32 + math.pi", sg.jit(lambda x: x + np.pi, backend=B), x32, want_dtype=np.float32, ref=lambda x: x + np.pi)
show("grad f32 hessian", sg.hessian(lambda x: np.sum(x ** 3 * C64), backend=B), x32, want_dtype=np.float32, ref=lambda x: np.diag(6 * x * C64))
show("vmap f32", sg.vmap(lambda x: np.sum(x * C64), backend=B) if "backend" in sg.vmap.__code__.co_varnames else sg.vmap(lambda x: np.sum(x * C64)), np.stack([x32, x32]), want_dtype=np.float64, ref=lambda X: X @ C64)
