# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One arm of the GPU benchmark: a model, its optimiser and its synthetic batch, built once and kept on the device,
so that arms can be measured in interleaved rounds. Compile and cuDNN autotuning happen in ``warm`` (timed apart);
``burst`` times whole training steps between two device synchronisations."""

from __future__ import annotations

import math
import time

from models import SMOKE_BATCH


class Arm(object):
    def __init__(self, label, kind, spec, config, torch, device, smoke):
        self.label, self.kind, self.spec, self.config, self.torch = label, kind, spec, dict(config), torch
        self.device = torch.device(device)
        self.smoke = smoke
        self.batch = SMOKE_BATCH.get(config["batch_size"], 2) if smoke else config["batch_size"]
        self.channels_last = bool(config["channels_last"] and spec.conv)
        model = spec.build(torch, smoke).to(self.device)
        if self.channels_last:
            model = model.to(memory_format=torch.channels_last)
        model.train()
        self.model = model
        self.optimizer = spec.optimizer(torch, model.parameters())
        self.forward = torch.compile(model) if config["compile"] else model
        self.x, self.y = spec.data(torch, self.device, self.batch, smoke, self.channels_last)
        self.steps = 1
        self.times = []          # seconds per sample, one per round
        self.first_step_s = None
        self.warm_step_s = None
        self.last_loss = None

    def sync(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def step(self):
        torch = self.torch
        torch.backends.cudnn.benchmark = bool(self.config["cudnn_benchmark"])
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.config["precision"] == "bf16"):
            out = self.forward(self.x)
        loss = self.spec.loss(torch, out, self.y)
        loss.backward()
        self.optimizer.step()
        return loss

    def warm(self, burst_s, warm_steps=2):
        """The first step (compile, cuDNN's search, lazy initialisation) and a few more, timed apart from the
        steady state; then the steps per burst that make a burst last about ``burst_s``."""
        self.sync()
        start = time.perf_counter()
        self.step()
        self.sync()
        self.first_step_s = time.perf_counter() - start
        start = time.perf_counter()
        for _step in range(warm_steps):
            self.step()
        self.sync()
        self.warm_step_s = (time.perf_counter() - start) / warm_steps
        self.steps = max(1, int(round(burst_s / max(self.warm_step_s, 1e-6)))) if burst_s > 0 else 1
        return self

    def burst(self):
        """Seconds per sample over ``steps`` training steps."""
        self.sync()
        start = time.perf_counter()
        loss = None
        for _step in range(self.steps):
            loss = self.step()
        self.sync()
        elapsed = time.perf_counter() - start
        self.last_loss = float(loss.detach().float().item())
        return elapsed / (self.steps * self.batch)

    def summary(self):
        finite = self.last_loss is not None and math.isfinite(self.last_loss)
        return {"label": self.label, "kind": self.kind, "config": self.config, "batch_run": self.batch,
                "steps_per_burst": self.steps, "first_step_s": self.first_step_s, "warm_step_s": self.warm_step_s,
                "per_sample_s": list(self.times), "last_loss": self.last_loss if finite else None,
                "loss_finite": finite}
