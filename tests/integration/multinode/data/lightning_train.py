"""A Lightning program as Lightning's Slurm guide runs it (lightning.ai, "Run on an on-prem cluster"): the Trainer
is told the nodes and the devices, and srun starts one process per device; Lightning reads the ranks from Slurm.

  lightning_train.py NODES DEVICES    (on CPUs: DDP over gloo, 5 steps of a linear model on a fixed data set)

Each rank prints the line of the suite's DDP tests, with the final loss averaged over the ranks, and the cluster
environment Lightning chose.
"""

from __future__ import annotations

import os
import socket
import sys

import lightning as L
import torch


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 1)
        self.last = self.mean = self.backend = None

    def training_step(self, batch, _index):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.last = loss.detach()
        return loss

    def on_train_end(self):
        self.mean = self.trainer.strategy.reduce(self.last.clone(), reduce_op="mean")
        self.backend = torch.distributed.get_backend()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    nodes, devices = int(sys.argv[1]), int(sys.argv[2])
    torch.manual_seed(0)
    x = torch.randn(512, 16)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True)), batch_size=16)
    model = Model()
    trainer = L.Trainer(accelerator="cpu", devices=devices, num_nodes=nodes, strategy="ddp", max_steps=5,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(model, data)
    environment = type(trainer.strategy.cluster_environment).__name__
    print("lightning environment=%s rank=%d" % (environment, trainer.global_rank), flush=True)
    print("ddp rank=%d world_size=%d local_rank=%d node=%s backend=%s threads=%d final_loss=%r"
          % (trainer.global_rank, trainer.world_size, trainer.local_rank,
             os.environ.get("SLURMD_NODENAME") or socket.gethostname(), model.backend,
             torch.get_num_threads(), model.mean.item()), flush=True)


if __name__ == "__main__":
    main()
