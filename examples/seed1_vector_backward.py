"""Seed tutorial 2: backward(weights) of a vector is the gradient of sum(y * weights).

Run:  python examples/seed1_vector_backward.py
"""
import symgrad as torch
from symgrad.autograd import Variable

x = Variable(torch.Tensor([1, 2, 3, 4, 5]), requires_grad=True)  # 需要求导数
y = x * x

weights1 = torch.Tensor([5, 5, 5, 5, 5])
y.backward(weights1, retain_graph=True)
print(x.grad)
