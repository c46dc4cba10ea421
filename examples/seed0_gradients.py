"""Seed tutorial 1 ("Gradients"): out = mean(3 * (x + 2)**2), its variables and their grad_fn.

Run:  python examples/seed0_gradients.py
"""
import symgrad as torch
from symgrad.autograd import Variable

x=torch.Tensor([[1.,2.,3.],[4.,5.,6.]])
x=Variable(x,requires_grad=True)
y=x+2
z=y*y*3
out=z.mean()

print(x)
print(y)
print(z)
print(out)

print(x.grad_fn)
print(y.grad_fn)
print(z.grad_fn)
print(out.grad_fn)
