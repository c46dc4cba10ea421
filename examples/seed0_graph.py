"""Seed tutorial 1 ("Variable"), first code block: a graph of leaves x, y, z and results a, b.

Run:  python examples/seed0_graph.py   (the tutorial prints nothing here; see
tests/test_seed_examples.py for what it says about requires_grad and grad_fn)
"""
import symgrad as torch
from symgrad.autograd import Variable

x=Variable(torch.randn(2,2))
y=Variable(torch.randn(2,2))
z=Variable(torch.randn(2,2),requires_grad=True)
a=x+y
b=a+z
