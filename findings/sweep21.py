import numpy as np, warnings
warnings.filterwarnings("ignore")
from _h import main
rng = np.random.default_rng(7)
A = rng.standard_normal((2, 3, 3)); Bm = rng.standard_normal((2, 3, 2)); R = rng.standard_normal((4, 3))
def t(expr):
    def f(L, dt):
        a = L.tensor(A, dtype=dt, requires_grad=True); b = L.tensor(Bm, dtype=dt, requires_grad=True); r = L.tensor(R, dtype=dt, requires_grad=True); la = L.linalg  # noqa
        s = a @ a.mT + L.eye(3, dtype=dt)
        y = eval(expr)
        y = y if not isinstance(y, tuple) else y[0] if not hasattr(y, "solution") else y.solution
        (y * y.sin() if y.is_floating_point() else y.float()).sum().backward() if y.requires_grad else None
        return [y, a.grad, b.grad, r.grad]
    return f
E = ["la.norm(a)", "la.norm(a, 'fro', dim=(-2, -1))", "la.norm(a, 'nuc', dim=(-2, -1))", "la.norm(a, 2, dim=(-2, -1))", "la.norm(a, -2, dim=(-2, -1))", "la.norm(a, float('inf'), dim=(-2, -1))",
     "la.norm(a, 1, dim=(-2, -1))", "la.norm(r, 3)", "la.vector_norm(a, 0.5, dim=(0, 2))", "la.vector_norm(a, float('-inf'), dim=1)", "la.vector_norm(a, 0)", "la.matrix_norm(a, -1)",
     "la.det(a)", "la.slogdet(a)[1]", "la.slogdet(a)[0]", "la.inv(a)", "la.solve(a, b)", "la.solve(a, b[..., 0])", "la.pinv(r)", "la.eigh(s)[0]", "la.eigh(s)[1].abs()", "la.eigvalsh(s, UPLO='U')",
     "la.svdvals(r)", "la.cond(a)", "la.matrix_power(a, -2)", "la.matrix_power(a, 3)", "la.lstsq(r, r[:, :2]).solution", "la.cholesky(s)", "la.qr(r)[1].abs()", "la.matrix_rank(r)", "la.cross(a, a.flip(0))",
     "la.multi_dot([r, a[0], b[0]])", "la.vecdot(a, a.flip(1))", "la.matrix_exp(a)", "la.solve_triangular(a.triu(), b, upper=True)", "la.inv_ex(a)[0]", "la.cholesky_ex(s)[0]", "la.tensorsolve(a[0], b[0, :, 0])", "la.diagonal(a)",
     "la.norm(a, dim=1, ord=2)", "L.det(a)", "L.logdet(s)", "L.trace(a[0])", "L.cholesky_solve(b, la.cholesky(s))", "L.cholesky_inverse(la.cholesky(s[0]))"]
main([(e, t(e), dt) for e in E for dt in ["float64"]])
