import numpy as np, warnings
warnings.filterwarnings("ignore")
from _h import main
X = np.random.default_rng(6).standard_normal((2, 3, 4))
def t(expr):
    def f(L, dt):
        x = L.tensor(X, dtype=dt); F = L.nn.functional; nn = L.nn  # noqa
        return [eval(expr)]
    return f
E = ["F.softmax(x)", "F.log_softmax(x)", "F.softmin(x)", "nn.Softmax()(x)", "nn.LogSoftmax()(x)", "F.softmax(x[0])", "F.log_softmax(x.reshape(2, 3, 2, 2))", "nn.Softmin()(x[0])",
     "F.softmax(x, dim=None)", "nn.Softmax2d()(x)" , "F.glu(x)", "F.normalize(x)", "F.pairwise_distance(x[0], x[1])", "L.cdist(x[0], x[1])", "F.gumbel_softmax" if False else "F.prelu(x, L.tensor([0.1, 0.2, 0.3], dtype=dt))",
     "F.dropout(x, 0.0)", "F.dropout(x, 0.5, training=False)", "F.celu(x, 0.3)", "F.elu(x, 2.0)", "F.rrelu(x, training=False)", "F.softplus(x, beta=2, threshold=1)", "F.hardshrink(x, 0.8)", "F.logsigmoid(x)", "F.gelu(x, approximate='tanh')", "F.silu(x)", "F.mish(x)"]
main([(e, t(e), dt) for e in E for dt in ["float64", "float32"]])
