"""A small U-Net, a PyTorch program unchanged but for its import: Conv2d, BatchNorm2d in
training mode, MaxPool2d, ConvTranspose2d, F.pad, F.interpolate and a skip connection.

It learns to denoise: the input is a smooth image plus noise, the target the image
upsampled twice. Replace ``import symgrad as torch`` by ``import torch`` and it runs
on PyTorch (tests/test_torch_nn.py compares the two step by step).

Run:  python examples/unet_block.py
"""
import sys

import symgrad as torch
import symgrad.nn as nn
import symgrad.nn.functional as F


class UNetBlock(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width),
                                  nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.middle = nn.Conv2d(width, 2 * width, 3, padding=1, padding_mode="reflect")
        self.up = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.out = nn.Conv2d(2 * width, 1, 1)

    def forward(self, x):
        skip = self.down(x)
        h = self.up(F.silu(self.middle(self.pool(skip))))
        dy, dx = skip.shape[2] - h.shape[2], skip.shape[3] - h.shape[3]  # odd sizes
        h = F.pad(h, (dx // 2, dx - dx // 2, dy // 2, dy - dy // 2))
        h = self.out(torch.cat([h, skip], dim=1))
        return F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=False)


def make_data(n, size=15):
    grid = torch.linspace(-1, 1, size)
    phase = torch.rand(n, 1, 1, 1) * 3
    clean = torch.sin(3 * grid.reshape(1, 1, -1, 1) + phase) * torch.cos(
        2 * grid.reshape(1, 1, 1, -1))
    noisy = clean + 0.3 * torch.randn(n, 1, size, size)
    return noisy, F.interpolate(clean, scale_factor=2, mode="bilinear", align_corners=False)


def main(steps=60, batch=8, verbose=True):
    torch.manual_seed(0)
    model = UNetBlock()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        noisy, target = make_data(batch)
        opt.zero_grad()
        loss = F.mse_loss(model(noisy), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if verbose and step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")
    model.eval()
    noisy, target = make_data(16)
    with torch.no_grad():
        error = F.mse_loss(model(noisy), target).item()
    baseline = F.mse_loss(F.interpolate(noisy, scale_factor=2, mode="bilinear"), target).item()
    if verbose:
        print(f"denoised error {error:.4f}, noisy input's error {baseline:.4f}")
    assert losses[-1] < 0.5 * losses[0] and error < 0.5 * baseline, (losses, error, baseline)
    return {"losses": losses, "error": error, "baseline": baseline}


if __name__ == "__main__":
    main()
    if note := torch.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
