"""Seed tutorial 2, first three code blocks: a Variable of ones, its sum, their grad_fn.

Run:  python examples/seed1_variable.py
"""
import symgrad as torch
from symgrad.autograd import Variable

a=torch.ones(3,3)
x =  Variable(a,requires_grad = True)
print(x)

y=x.sum()
print(y)

print(x.grad_fn)
print(y.grad_fn)
