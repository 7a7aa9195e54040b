# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU benchmark's three training programs, each with its framework-reference default and its factorial grid.

* ``mnist_cnn``: the CNN of benchmarks/workload/mnist_cnn.py (PyTorch's MNIST example), Adadelta, batch 64.
* ``resnet50``: torchvision's ResNet-50 (a definition of the same layers where torchvision is missing, for the CPU
  smoke form), SGD with momentum as torchvision's classification reference, its 32 images per GPU, 224x224.
* ``gpt``: a small decoder-only transformer (6 layers, 6 heads, width 384, context 256: nanoGPT's character-level
  configuration, batch 64), AdamW, attention through scaled_dot_product_attention.

Data is synthetic and made on the device once per arm: nothing is downloaded and no loader runs, so the numbers are
the training step's own. ``grid`` lists the values of each knob the benchmark measures completely; ``smoke`` shrinks
sizes for the CPU form.
"""

from __future__ import annotations

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(os.path.dirname(HERE), "workload", "mnist_cnn.py")


class Spec(object):
    """One training program: its default (the framework's reference setting) and the grid around it."""

    def __init__(self, name, title, conv, default, grid, unit):
        self.name, self.title, self.conv, self.unit = name, title, conv, unit
        self.default = dict(default)
        self.grid = dict(grid)

    def build(self, torch, smoke):
        return BUILD[self.name](torch, smoke)

    def data(self, torch, device, batch, smoke, channels_last):
        return DATA[self.name](torch, device, batch, smoke, channels_last)

    def optimizer(self, torch, params):
        if self.name == "resnet50":
            return torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-4)
        if self.name == "gpt":
            return torch.optim.AdamW(params, lr=6e-4, weight_decay=0.1)
        return torch.optim.Adadelta(params, lr=1.0)

    def loss(self, torch, out, target):
        functional = torch.nn.functional
        if self.name == "mnist_cnn":
            return functional.nll_loss(out.float(), target)
        if self.name == "gpt":
            return functional.cross_entropy(out.float().flatten(0, 1), target.flatten())
        return functional.cross_entropy(out.float(), target)


SPECS = {
    "mnist_cnn": Spec("mnist_cnn", "MNIST-CNN", True, {"batch_size": 64},
                      {"batch_size": [64, 256, 1024], "precision": ["fp32", "bf16"],
                       "cudnn_benchmark": [False, True]},
                      "images"),
    "resnet50": Spec("resnet50", "ResNet-50", True, {"batch_size": 32},
                     {"batch_size": [32, 256], "precision": ["fp32", "bf16"], "channels_last": [False, True],
                      "cudnn_benchmark": [False, True]}, "images"),
    "gpt": Spec("gpt", "GPT (6 layers, width 384)", False, {"batch_size": 64},
                {"batch_size": [64, 128], "precision": ["fp32", "bf16"]}, "sequences of 256 tokens"),
}
SMOKE_BATCH = {32: 2, 64: 2, 128: 3, 256: 4, 1024: 6}


def _workload_net(torch, _smoke):
    spec = importlib.util.spec_from_file_location("modak_workload_mnist_cnn", WORKLOAD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_net(torch)


def _resnet50(torch, smoke):
    try:
        import torchvision  # pylint: disable=import-outside-toplevel
    except ImportError:
        return local_resnet50(torch, 10 if smoke else 1000)
    return torchvision.models.resnet50(weights=None, num_classes=10 if smoke else 1000)


def local_resnet50(torch, classes):
    """ResNet-50 v1.5 (bottlenecks 3-4-6-3, stride on the 3x3 convolution), torchvision's layers and names."""
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            return self.relu(out + (x if self.downsample is None else self.downsample(x)))

    layers, cin = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                   nn.MaxPool2d(3, 2, 1)], 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for index in range(blocks):
            layers.append(Bottleneck(cin, width, stride if index == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def gpt_sizes(smoke):
    return (dict(vocab=64, context=16, layers=1, heads=2, width=32) if smoke
            else dict(vocab=8192, context=256, layers=6, heads=6, width=384))


def _gpt(torch, smoke):
    nn, functional = torch.nn, torch.nn.functional
    sizes = gpt_sizes(smoke)

    class Block(nn.Module):
        def __init__(self, width, heads):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

        def forward(self, x):
            batch, length, width = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(width, dim=2)
            q, k, v = (t.view(batch, length, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
            y = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(batch, length, width))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(sizes["vocab"], sizes["width"])
            self.positions = nn.Embedding(sizes["context"], sizes["width"])
            self.blocks = nn.Sequential(*[Block(sizes["width"], sizes["heads"]) for _layer in range(sizes["layers"])])
            self.ln = nn.LayerNorm(sizes["width"])
            self.head = nn.Linear(sizes["width"], sizes["vocab"], bias=False)
            self.head.weight = self.tokens.weight      # tied, as GPT-2

        def forward(self, idx):
            where = torch.arange(idx.shape[1], device=idx.device)
            return self.head(self.ln(self.blocks(self.tokens(idx) + self.positions(where))))

    return GPT()


def _images(torch, device, batch, channels, side, classes, channels_last):
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.randn((batch, channels, side, side), generator=gen, device=device)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    return x, torch.randint(0, classes, (batch,), generator=gen, device=device)


def _tokens(torch, device, batch, smoke, _channels_last):
    sizes = gpt_sizes(smoke)
    gen = torch.Generator(device=device).manual_seed(0)
    seq = torch.randint(0, sizes["vocab"], (batch, sizes["context"] + 1), generator=gen, device=device)
    return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()


BUILD = {"mnist_cnn": _workload_net, "resnet50": _resnet50, "gpt": _gpt}


def _digits(torch, device, batch, _smoke, channels_last):
    return _images(torch, device, batch, 1, 28, 10, channels_last)


def _imagenet(torch, device, batch, smoke, channels_last):
    return _images(torch, device, batch, 3, 32 if smoke else 224, 10 if smoke else 1000, channels_last)


DATA = {"mnist_cnn": _digits, "resnet50": _imagenet, "gpt": _tokens}
