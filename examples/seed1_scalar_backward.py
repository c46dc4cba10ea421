"""Seed tutorial 2: backward() of a scalar needs no argument; x.grad is 4.5 everywhere.

Run:  python examples/seed1_scalar_backward.py
"""
import symgrad as torch
from symgrad.autograd import Variable

x = Variable(torch.ones(2, 2), requires_grad=True)
y = x + 2
z = y * y * 3
p = z.mean()
p.backward()
print(x.grad)
