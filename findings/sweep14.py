import numpy as np
from _h import main
def t(expr):
    def f(L, _):
        u = L.tensor([200, 3, 255, 0], dtype=L.uint8); i = L.tensor([-100, 7, -1, 127], dtype=L.int8)
        j = L.tensor([-7, 7, -9, 10], dtype=L.int32); k = L.tensor([2, -3, 4, -5], dtype=L.int64); b = L.tensor([True, False, True, True])
        x = eval(expr)
        return [x, np.array(str(x.dtype))]
    return f
E = ["u + i", "u * 2", "u + 100", "u - 201", "i * 2", "i - 1", "i + u", "j // k", "j % k", "j // -4", "j % -4", "-7 // k", "j.div(k, rounding_mode='floor')",
     "j.div(k, rounding_mode='trunc')", "i.abs()", "-i", "u.neg()" , "j ** 2", "k.pow(3)", "u >> 1", "i >> 1", "j << 2", "u & i", "u.sum()", "b.sum()", "b + b", "b * 3", "u.cumsum(0)",
     "i.clamp(-50, 50)", "u.max()", "(u > i)", "u == 200", "i.sign()", "u.to(L.int8)", "i.to(L.uint8)", "j.to(L.int8)", "L.tensor(300).to(L.uint8)", "(i.float() * 1.7).to(L.int8)",
     "L.tensor([-1.7, 2.9, 300.5]).to(L.uint8)" if False else "L.tensor([-1.7, 2.9, 100.5]).to(L.int8)", "i.argmax()", "j.sort()[0]", "j.remainder(3)" if False else "j % 3", "u // 7", "u % 7", "i.mul(i)", "u * u", "i.prod()", "j.mean(dtype=L.float32)" if False else "j.float().mean()",
     "i.max(0)[1]", "L.where(b, u, i)", "u.clamp(max=100)", "i // 0" if False else "j.abs()", "k.sum(0, keepdim=True)", "u.sub(5)", "i.add(u, alpha=2)", "i.add_(100) if False else i.add(100)"]
main([(e, t(e), "float64") for e in E])
