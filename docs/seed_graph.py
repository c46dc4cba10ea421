"""The seed tutorial's graph: y = x + 2; z = y*y*3; out = z.mean().

docs/seed_graph.svg is drawn from it with

    symgrad graph docs/seed_graph.py:seed --shape x=2,2 --adjoint -o docs/seed_graph.svg
"""


def seed(x):
    y = x + 2
    z = y * y * 3
    out = z.mean()
    return out
