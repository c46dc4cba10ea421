"""The seed tutorials' code blocks (examples/seed*_*.py) print what the tutorials show.

Each example is a code block of ../shared/seeds/*.txt with ``import torch`` replaced
by ``import symgrad as torch`` and ``from torch.autograd import Variable`` by
``from symgrad.autograd import Variable``. Where a tutorial shows the output, the
expected text below is copied from it; tutorial 1 shows none, so its expected text
is PyTorch's (and, when torch is installed, checked against torch itself).
Object addresses are compared as ``0x...``.
"""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

import symgrad

pytestmark = pytest.mark.filterwarnings("error::symgrad.autograd.KernelFallbackWarning")

EXAMPLES = Path(__file__).parent.parent / "examples"

EXPECTED = {
    # tutorial 1, "Gradients" (the tutorial prints these without showing them)
    "seed0_gradients.py": """\
tensor([[1., 2., 3.],
        [4., 5., 6.]], requires_grad=True)
tensor([[3., 4., 5.],
        [6., 7., 8.]], grad_fn=<AddBackward0>)
tensor([[ 27.,  48.,  75.],
        [108., 147., 192.]], grad_fn=<MulBackward0>)
tensor(99.5000, grad_fn=<MeanBackward0>)
None
<AddBackward0 object at 0x...>
<MulBackward0 object at 0x...>
<MeanBackward0 object at 0x...>
""",
    # tutorial 2: copied from its "输出结果" blocks
    "seed1_variable.py": """\
tensor([[1., 1., 1.],
        [1., 1., 1.],
        [1., 1., 1.]], requires_grad=True)
tensor(9., grad_fn=<SumBackward0>)
None
<SumBackward0 object at 0x...>
""",
    "seed1_scalar_backward.py": """\
tensor([[4.5000, 4.5000],
        [4.5000, 4.5000]])
""",
    "seed1_vector_backward.py": """\
tensor([10., 20., 30., 40., 50.])
""",
    "seed1_accumulate.py": """\
tensor([10., 20., 30., 40., 50.])
tensor([ 20.,  40.,  60.,  80., 100.])
tensor([10., 20., 30., 40., 50.])
""",
    "seed0_graph.py": "",  # the block prints nothing; test_seed0_graph checks its claims
}


def normalized(text: str) -> str:
    return re.sub(r"0x[0-9A-Fa-f]+", "0x...", text)


def test_every_seed_example_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("seed[0-9]_*.py")) == sorted(EXPECTED)


def test_the_tutorial_address_format_is_what_normalized_compares():
    # the tutorial shows "<SumBackward0 object at 0x000002289C55CBA8>"
    assert normalized("<SumBackward0 object at 0x000002289C55CBA8>") == \
        "<SumBackward0 object at 0x...>"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_seed_example_prints_what_the_seed_shows(name, capsys):
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    assert normalized(capsys.readouterr().out) == EXPECTED[name]


def test_seed0_graph_leaves_and_results():
    """Tutorial 1: x, y, z are leaves (grad_fn None); a = x + y needs no grad because
    neither input does; b = a + z does because z does, and b.grad_fn is an AddBackward0."""
    ns = runpy.run_path(str(EXAMPLES / "seed0_graph.py"))
    x, y, z, a, b = (ns[k] for k in "xyzab")
    assert [v.requires_grad for v in (x, y, z, a, b)] == [False, False, True, False, True]
    assert all(v.is_leaf and v.grad_fn is None for v in (x, y, z))
    assert a.grad_fn is None and a.is_leaf  # a result of inputs that need no grad
    assert type(b.grad_fn).__name__ == "AddBackward0" and not b.is_leaf
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        b.requires_grad = False  # "运算结果变量的requires_grad是不可以更改的"
    x.requires_grad = True  # "用户创建变量的requires_grad是可以更改的"
    assert x.requires_grad
    for v in (x, y, z):
        assert v.shape == (2, 2) and v.dtype == "float64"


def test_seed_examples_run_as_scripts():
    """As the README says to run them: python examples/seed1_accumulate.py."""
    done = subprocess.run([sys.executable, str(EXAMPLES / "seed1_accumulate.py")],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(symgrad.__file__).parents[1])})
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED["seed1_accumulate.py"]


@pytest.fixture(scope="module")
def pytorch_outputs(tmp_path_factory) -> dict[str, str]:
    """Every example with the original imports, run by PyTorch in one subprocess."""
    pytest.importorskip("torch")
    directory = tmp_path_factory.mktemp("torch_seeds")
    for name in EXPECTED:
        source = (EXAMPLES / name).read_text()
        source = source.replace("import symgrad as torch", "import torch")
        source = source.replace("from symgrad.autograd import", "from torch.autograd import")
        (directory / name).write_text(source)
    runner = ("import runpy, sys\n"
              "for name in sys.argv[1:]:\n"
              "    print(f'=== {name}')\n"
              f"    runpy.run_path(f'{directory}/{{name}}', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", runner, *EXPECTED], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    parts = re.split(r"^=== (\S+)\n", done.stdout, flags=re.M)[1:]
    return dict(zip(parts[::2], parts[1::2]))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_pytorch_prints_the_same(name, pytorch_outputs):
    """The expected texts are PyTorch's too (skipped when torch is not installed)."""
    assert normalized(pytorch_outputs[name]) == EXPECTED[name]
