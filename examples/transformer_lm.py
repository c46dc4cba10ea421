"""A two-layer causal transformer language model, a PyTorch program unchanged but for its
import: Embedding, TransformerEncoderLayer (norm_first, GELU), a causal mask,
CrossEntropyLoss with label smoothing, AdamW and gradient clipping.

It learns to continue a repeating sequence of tokens (0 1 2 ... 9 0 1 ...) from any
starting point: after training it predicts each next token. Replace ``import
symgrad as torch`` by ``import torch`` and it runs on PyTorch (tests/test_torch_nn.py
compares the two step by step).

Run:  python examples/transformer_lm.py
"""
import sys

import symgrad as torch
import symgrad.nn as nn

VOCAB, LENGTH, WIDTH = 10, 12, 32


class LanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.position = nn.Parameter(0.02 * torch.randn(LENGTH, WIDTH))
        layer = nn.TransformerEncoderLayer(WIDTH, 4, dim_feedforward=64, dropout=0.0,
                                           batch_first=True, norm_first=True,
                                           activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens):
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        h = self.embed(tokens) + self.position[: tokens.shape[1]]
        return self.head(self.norm(self.encoder(h, mask=mask)))


def batch_of(n):
    start = torch.randint(0, VOCAB, (n, 1))
    return (start + torch.arange(LENGTH + 1)) % VOCAB


def main(steps=60, batch=16, verbose=True):
    torch.manual_seed(0)
    model = LanguageModel()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    losses = []
    for step in range(steps):
        tokens = batch_of(batch)
        opt.zero_grad()
        logits = model(tokens[:, :-1])
        loss = loss_fn(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if verbose and step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")
    model.eval()
    tokens = batch_of(50)
    with torch.no_grad():
        predicted = model(tokens[:, :-1]).argmax(dim=-1)
    accuracy = (predicted == tokens[:, 1:]).float().mean().item()
    if verbose:
        print(f"next-token accuracy {accuracy:.3f}")
    assert losses[-1] < 0.5 * losses[0] and accuracy > 0.9, (losses[0], losses[-1], accuracy)
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    main()
    if note := torch.compile_note():  # kernels compiled, or compiling in the background
        print(note, file=sys.stderr)
