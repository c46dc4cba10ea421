"""LeNet-5, a PyTorch program unchanged but for its import: Conv2d, MaxPool2d, AvgPool2d,
ReLU, GELU, Linear, CrossEntropyLoss, Adam.

MNIST-shaped data made here (no download): each 28x28 image is noise plus one of
ten fixed patterns, and the label is the pattern's number. Replace ``import
symgrad as torch`` by ``import torch`` and it runs on PyTorch
(tests/test_torch_nn.py trains this network with both, step by step, from the same
weights).

Run:  python examples/lenet.py
"""
import sys

import symgrad as torch
import symgrad.nn as nn
import symgrad.nn.functional as F


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.pool2 = nn.AvgPool2d(2)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool1(F.relu(self.conv1(x)))
        x = self.pool2(F.gelu(self.conv2(x)))
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def make_data(n, patterns):
    labels = torch.randint(0, 10, (n,))
    images = patterns[labels] + 0.5 * torch.randn(n, 1, 28, 28)
    return images, labels


def main(steps=30, batch=32, verbose=True):
    torch.manual_seed(0)
    patterns = torch.randn(10, 1, 28, 28)
    model = LeNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for step in range(steps):
        images, labels = make_data(batch, patterns)
        opt.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if verbose and step % 5 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")
    model.eval()
    images, labels = make_data(200, patterns)
    with torch.no_grad():
        accuracy = (model(images).argmax(dim=1) == labels).float().mean().item()
    if verbose:
        print(f"accuracy on new images {accuracy:.3f}")
    assert losses[-1] < 0.5 * losses[0] and accuracy > 0.8, (losses[0], losses[-1], accuracy)
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    main()
    if note := torch.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
