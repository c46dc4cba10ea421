"""A PyTorch program, unchanged but for its import: nn.Module, CrossEntropyLoss, Adam.

Three classes of points in the plane, separated by angle; a two-layer network
learns them. Replace ``import symgrad as torch`` by ``import torch`` and it runs
on PyTorch (tests/test_torch_programs.py compares such programs line by line).

Run:  python examples/torch_classifier.py
"""
import math
import sys

import symgrad as torch
import symgrad.nn as nn
import symgrad.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.hidden = nn.Linear(2, hidden)
        self.out = nn.Linear(hidden, 3)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


def make_data(n):
    angle = torch.rand(n) * 2 * math.pi
    radius = 0.5 + torch.rand(n)
    X = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1)
    y = (angle / (2 * math.pi / 3)).long().clamp(max=2)  # int64 class labels
    return X, y


def main(epochs=300, n=300, verbose=True):
    torch.manual_seed(0)
    X, y = make_data(n)
    model = Classifier()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(epochs):
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if verbose and epoch % 50 == 0:
            print(f"epoch {epoch:3d}  loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        accuracy = (model(X).argmax(dim=1) == y).float().mean().item()
    if verbose:
        print(f"accuracy {accuracy:.3f}")
    assert losses[-1] < 0.3 * losses[0] and accuracy > 0.9, (losses[-1], accuracy)
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    main()
    if note := torch.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
