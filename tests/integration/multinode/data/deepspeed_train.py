"""A DeepSpeed program as DeepSpeed's getting-started guide writes one: ``deepspeed.initialize`` wraps the model and
its optimiser, the engine runs backward and step; the launcher passes ``--local_rank`` and sets RANK, WORLD_SIZE
and the rendezvous.

  deepspeed_train.py [--local_rank N]    (on CPUs: gloo, 5 steps of a linear model on a fixed data set)

Each rank prints the line of the suite's DDP tests, with the final loss averaged over the ranks.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

import deepspeed
import torch

BATCH = 16


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    local_rank = parser.parse_args().local_rank
    deepspeed.init_distributed()
    torch.manual_seed(0)
    x = torch.randn(512, 16)
    y = x.sum(1, keepdim=True)
    net = torch.nn.Linear(16, 1)
    engine, _optimizer, _data, _schedule = deepspeed.initialize(
        model=net, optimizer=torch.optim.SGD(net.parameters(), lr=0.05),
        config={"train_micro_batch_size_per_gpu": BATCH, "gradient_accumulation_steps": 1, "steps_per_print": 1000})
    rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
    for step in range(5):
        first = (step * world + rank) * BATCH
        loss = torch.nn.functional.mse_loss(engine(x[first:first + BATCH]), y[first:first + BATCH])
        engine.backward(loss)
        engine.step()
    mean = loss.detach().clone()
    torch.distributed.all_reduce(mean)
    mean /= world
    # one write of the whole line: DeepSpeed runs the ranks with python -u, where print() writes the text and its
    # newline apart, and two ranks of a node sharing the output file would interleave them
    sys.stdout.write("ddp rank=%d world_size=%d local_rank=%d node=%s backend=%s threads=%d final_loss=%r\n"
                     % (rank, world, local_rank, os.environ.get("SLURMD_NODENAME") or socket.gethostname(),
                        torch.distributed.get_backend(), torch.get_num_threads(), mean.item()))
    sys.stdout.flush()
    # a clean end: without it a rank's gloo threads were sometimes still alive at the interpreter's exit
    # ("terminate called without an active exception", status -6) and the launcher failed a finished training
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
