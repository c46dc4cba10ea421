import numpy as np
from _h import main
def t(stmt):
    def f(L, _):
        u = L.tensor([200, 3, 255, 0], dtype=L.uint8); i = L.tensor([-100, 7, -1, 127], dtype=L.int8)
        j = L.tensor([-7, 7, -9, 10], dtype=L.int32); x = L.tensor([1.5, -2.5, 3.25, 0.5], dtype=L.float32)
        exec(stmt)
        return [u, i, j, x]
    return f
S = ["u += 100", "i *= 2", "i += u", "u.add_(i, alpha=2)", "j //= 3", "j %= -4", "i -= 200", "u.mul_(3)", "x += j", "x *= u", "j += x.to(L.int32)", "i.clamp_(-50, 50)",
     "u[1:3] += 250", "i[0] = 300", "u[0] = -1", "j.floor_divide_(-3)" if False else "j.neg_()", "i.abs_()", "u.sub_(1)", "i.copy_(j)", "u.copy_(i)", "x.copy_(j)", "j.copy_(x)", "i.fill_(200)", "u.zero_()", "u.masked_fill_(u > 100, 7)",
     "i.index_fill_(0, L.tensor([1, 3]), -3)", "j.mul_(x.to(L.int32))", "j.div_(2, rounding_mode='floor')", "j.cumsum_(0)" if False else "j.exp2() if False else j.bitwise_xor_(L.tensor(5, dtype=L.int32))"]
main([(s, t(s), "float64") for s in S])
