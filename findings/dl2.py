import numpy as np, symgrad as sg, torch
import torch.utils.data as tud
from symgrad.utils.data import DataLoader, TensorDataset
X = np.arange(23.)
for L, DL, TD in ((torch, tud.DataLoader, tud.TensorDataset), (sg, DataLoader, TensorDataset)):
    out = []
    for nw in (0, 2):
        L.manual_seed(0)
        out.append([b[0].tolist() for b in DL(TD(L.tensor(X)), batch_size=4, shuffle=True, num_workers=nw)])
        out.append(L.rand(1).item())  # generator state after the epoch
    print(L.__name__, out[0] == out[2], out[1] == out[3], out[0][0], out[2][0], out[1], out[3])
