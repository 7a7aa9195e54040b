# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MNIST-CNN training benchmark: one configuration per process, one JSON record out.

The network is the PyTorch MNIST example (conv 32, conv 64, maxpool, dropout, fc 128, fc 10;
1,199,882 parameters), trained with NLL loss and Adam. Data is synthetic MNIST-shaped noise
(``--data synthetic``) or scikit-learn's bundled 8x8 digits upsampled to 28x28 (``--data digits``);
nothing is downloaded.

Knobs (the argument convention modak writes into job scripts):

  --threads N            intra-op threads (torch.set_num_threads); default: OMP_NUM_THREADS or all cores
  --batch-size N         samples per step (default 64)
  --precision fp32|bf16  bf16 = torch.autocast on the CPU (default fp32)
  --channels-last        NHWC memory format
  --compile              torch.compile (inductor); its time is in first_step_s
  --onednn on|off        torch.backends.mkldnn.enabled (default on)
  --ddp                  data-parallel training (DistributedDataParallel): the process group comes from the
                         environment (init_method env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, as modak's
                         srun or torchrun launch sets them), the backend from --backend or MODAK_DIST_BACKEND
                         (default nccl with CUDA, else gloo); each rank trains on its own shard of the data and
                         prints "ddp rank=R world_size=W local_rank=L node=NODE backend=B threads=T final_loss=X" (NODE:
                         Slurm's node name, else the host name; X: the last step's loss averaged over all ranks,
                         the same on every rank); rank 0 alone prints the JSON record
  --checkpoint-dir DIR   checkpoint and resume (default: MODAK_CHECKPOINT_DIR, which modak's job.resilience sets; none:
                         neither): on USR1, USR2, TERM, INT or HUP each rank ends its step, writes its checkpoint
                         (step, model, optimiser, RNG states; the data position is the step) atomically into
                         DIR/rank-R.pt, prints "checkpoint rank=R step=S signal=SIG" and exits with 128 + the
                         signal's number, every rank at the same step; a run that finds its checkpoint resumes from
                         it ("resume rank=R step=S"), so an interrupted and resumed run ends with the same final loss,
                         bit for bit, as an uninterrupted one
  --checkpoint-every N   also write the checkpoint every N steps (default 0: only on a signal)
  --step-delay S         sleep S seconds after each step (tests that must interrupt a run in the middle)
  --model mnist_cnn|resnet18   the network (default mnist_cnn); resnet18 is a ResNet-18 (basic blocks 2-2-2-2,
                         CIFAR stem) on synthetic 3x32x32 data, defined here (no torchvision): a larger model
                         for the graph-compiler comparison

The record holds the configuration, the hardware (model name, cores, ISA flags), versions, the first
step (which includes any compile) apart from the steady-state step times, and the foreign CPU load
during the timed steps: busy cores of the whole machine (/proc/stat) minus this process's own CPU time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import signal
import socket
import sys
import time

SCHEMA = "modak-bench/1"
EPOCH_SAMPLES = 60000


def _hardware_module():
    """The collection's perf/hardware.py, loaded by path: the workload runs where the collection may not be
    importable, and it must describe the CPU exactly as the results store does. A copy of hardware.py next to
    this file comes first (the workload copied next to a job script, as the demo does)."""
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "hardware.py")
    if not os.path.isfile(path):
        path = os.path.join(here, os.pardir, os.pardir, "plugins", "module_utils", "perf", "hardware.py")
    spec = importlib.util.spec_from_file_location("modak_perf_hardware", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu_facts():
    return _hardware_module().facts()


def busy_jiffies():
    """Busy and total jiffies of the whole machine from /proc/stat (None where unavailable)."""
    try:
        with open("/proc/stat") as handle:
            parts = [int(p) for p in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    return sum(parts[:8]) - idle


def loadavg():
    try:
        with open("/proc/loadavg") as handle:
            return float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--onednn", choices=("on", "off"), default="on")
    p.add_argument("--cudnn-benchmark", action="store_true", help="cuDNN autotuning (GPUs; no effect on CPUs)")
    p.add_argument("--steps", type=int, default=10, help="timed steps")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps after the first one")
    p.add_argument("--data", choices=("synthetic", "digits"), default="synthetic")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", choices=("mnist_cnn", "resnet18"), default="mnist_cnn")
    p.add_argument("--tag", default="", help="free text stored in the record (run id, repetition)")
    p.add_argument("--output", help="append the JSON record to this file as well")
    p.add_argument("--ddp", action="store_true", help="data-parallel training over the ranks of the environment")
    p.add_argument("--backend", choices=("gloo", "nccl"), default=None,
                   help="collective backend with --ddp (default: MODAK_DIST_BACKEND, else nccl with CUDA, else gloo)")
    p.add_argument("--checkpoint-dir", default=os.environ.get("MODAK_CHECKPOINT_DIR") or None,
                   help="checkpoint on a signal and resume from DIR (default MODAK_CHECKPOINT_DIR)")
    p.add_argument("--checkpoint-every", type=int, default=0, help="also checkpoint every N steps")
    p.add_argument("--step-delay", type=float, default=0.0, help="seconds of sleep after each step")
    args = p.parse_args(argv)
    if args.checkpoint_every < 0 or args.step_delay < 0:
        p.error("--checkpoint-every and --step-delay cannot be negative")
    if args.threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "")
        args.threads = int(env) if env.isdigit() and int(env) > 0 else (os.cpu_count() or 1)
    if args.batch_size < 1 or args.threads < 1 or args.steps < 1 or args.warmup < 0:
        p.error("batch size, threads and steps must be positive")
    return args


def make_data(torch, args, batches, rank=0):
    """The batches of one rank: each rank draws its own shard (seed + rank), so no two ranks see the same data."""
    gen = torch.Generator().manual_seed(args.seed + rank)
    n = args.batch_size * batches
    if args.model == "resnet18":
        x = torch.rand((n, 3, 32, 32), generator=gen)
        y = torch.randint(0, 10, (n,), generator=gen)
        return list(zip(((x - 0.5) / 0.25).split(args.batch_size), y.split(args.batch_size)))
    if args.data == "digits":
        from sklearn.datasets import load_digits  # bundled with scikit-learn, no download
        digits = load_digits()
        images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
        images = torch.nn.functional.interpolate(images, size=(28, 28), mode="bilinear", align_corners=False)
        labels = torch.tensor(digits.target, dtype=torch.long)
        index = torch.randint(0, images.shape[0], (n,), generator=gen)
        x, y = images[index], labels[index]
    else:
        x = torch.rand((n, 1, 28, 28), generator=gen)
        y = torch.randint(0, 10, (n,), generator=gen)
    x = (x - 0.1307) / 0.3081
    return list(zip(x.split(args.batch_size), y.split(args.batch_size)))


def build_net(torch):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = self.dropout2(F.relu(self.fc1(torch.flatten(x, 1))))
            return F.log_softmax(self.fc2(x), dim=1)

    return Net()


def build_resnet18(torch, classes=10):
    """ResNet-18 (He et al. 2016; basic blocks 2-2-2-2, widths 64-512) with a 3x3 stem for 32x32 inputs."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.short = nn.Sequential()
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            return F.relu(self.bn2(self.conv2(out)) + self.short(x))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
            layers, cin = [], 64
            for cout, stride in ((64, 1), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1)):
                layers.append(Block(cin, cout, stride))
                cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            x = self.layers(self.stem(x))
            return F.log_softmax(self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)), dim=1)

    return ResNet18()


def versions(torch):
    out = {"python": platform.python_version(), "torch": torch.__version__}
    try:
        import numpy
        out["numpy"] = numpy.__version__
    except ImportError:
        pass
    config = torch.__config__.show()
    for line in config.splitlines():
        line = line.strip()
        if "oneDNN" in line or "MKL-DNN" in line:
            out["onednn"] = line.split("(")[0].strip(" -")
        elif line.startswith("- OpenMP") or "OpenMP" in line and "openmp" not in out:
            out["openmp"] = line.strip(" -")
    out["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    return out


class Ranks(object):
    """This process's place in the data-parallel job: rank, world size, local rank, device, backend."""

    joined = False   # whether this process joined a process group (see leave)

    def __init__(self, torch, args):
        self.torch, self.enabled = torch, bool(args.ddp)
        self.rank, self.world_size, self.local_rank = 0, 1, 0
        self.device = torch.device("cpu")
        self.backend = None
        if not self.enabled:
            return
        import torch.distributed as dist
        cuda = torch.cuda.is_available()
        self.backend = args.backend or os.environ.get("MODAK_DIST_BACKEND") or ("nccl" if cuda else "gloo")
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if self.backend == "nccl":
            self.device = torch.device("cuda", self.local_rank)
            torch.cuda.set_device(self.device)
        dist.init_process_group(backend=self.backend, init_method="env://")
        Ranks.joined = True
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()

    def wrap(self, model):
        if not self.enabled:
            return model
        from torch.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(model, device_ids=[self.local_rank] if self.device.type == "cuda" else None)

    def mean(self, value):
        """``value`` averaged over all ranks (every rank gets the same number)."""
        if not self.enabled:
            return value
        import torch.distributed as dist
        tensor = self.torch.tensor([value], dtype=self.torch.float64, device=self.device)
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return float(tensor.item()) / self.world_size

    def most(self, value):
        """The largest of ``value`` over all ranks."""
        if not self.enabled:
            return value
        import torch.distributed as dist
        tensor = self.torch.tensor([value], dtype=self.torch.int64, device=self.device)
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        return int(tensor.item())

    def finish(self):
        if self.enabled:
            import torch.distributed as dist
            dist.barrier()
            dist.destroy_process_group()


STOP_SIGNALS = ("SIGUSR1", "SIGUSR2", "SIGTERM", "SIGINT", "SIGHUP")
CAUGHT = [0]      # the last stop signal caught; the handlers are in place before torch loads (seconds)


def catch_stop_signals():
    """A stop signal only sets CAUGHT; the training checkpoints at the end of its step."""
    def catch(signum, _frame):
        CAUGHT[0] = signum
    for name in STOP_SIGNALS:
        signal.signal(getattr(signal, name), catch)


class Checkpoint(object):
    """This rank's checkpoint: the step reached, the model, the optimiser and the RNG states, in DIR/rank-R.pt,
    written atomically (a temporary file in DIR, flushed to disk, then renamed over the old one). A stop signal
    only sets a flag; the training loop asks ``stop_now`` after each step, which agrees on it over every rank."""

    def __init__(self, torch, directory, rank, ranks):
        self.torch, self.ranks = torch, ranks
        self.path = os.path.join(directory, "rank-%d.pt" % rank) if directory else None
        if self.path:
            os.makedirs(directory, exist_ok=True)

    def stop_now(self):
        """The signal every rank stops on (0: none): the highest caught, agreed over the ranks."""
        if not self.path:
            return 0
        return int(self.ranks.most(CAUGHT[0]))

    def save(self, step, model, opt, losses):
        torch = self.torch
        state = {"step": step, "losses": losses, "model": model.state_dict(), "optimizer": opt.state_dict(),
                 "rng": torch.get_rng_state(),
                 "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None}
        tmp = "%s.tmp-%d" % (self.path, os.getpid())
        with open(tmp, "wb") as handle:
            torch.save(state, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)

    def load(self, model, opt):
        """The step to continue from (0 without a checkpoint) and the first and last losses, with the states put
        back."""
        if not self.path or not os.path.exists(self.path):
            return 0, {}
        torch = self.torch
        state = torch.load(self.path, map_location="cpu", weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"])
        if state.get("cuda_rng") is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        return int(state["step"]), dict(state["losses"])


class Stopped(Exception):
    """The training stopped on a signal after writing its checkpoint."""

    def __init__(self, signum):
        super(Stopped, self).__init__(signum)
        self.signum = signum


def leave(status):
    """End the process with ``status``.  After a data-parallel run the interpreter's own teardown is skipped: the
    distributed library's static teardown can abort the process (SIGABRT, "terminate called without an active
    exception") after every line was written, about once in 60 runs of two gloo ranks on one host, which would turn
    a finished training into a failed launch."""
    if not Ranks.joined:
        return status
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def run(args):
    import torch
    import torch.nn.functional as F

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.backends.mkldnn.enabled = args.onednn == "on"
    torch.backends.cudnn.benchmark = bool(args.cudnn_benchmark)
    ranks = Ranks(torch, args)
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    model = (build_resnet18(torch) if args.model == "resnet18" else build_net(torch)).to(
        device=ranks.device, memory_format=memory_format)
    model.train()
    model = ranks.wrap(model)   # DDP: rank 0's parameters are broadcast, gradients are averaged at each step
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    forward = torch.compile(model) if args.compile else model
    bf16 = args.precision == "bf16"
    total = 1 + args.warmup + args.steps
    batches = [(x.to(ranks.device).contiguous(memory_format=memory_format), y.to(ranks.device))
               for x, y in make_data(torch, args, min(total, 8), ranks.rank)]

    def step(i):
        x, y = batches[i % len(batches)]
        opt.zero_grad(set_to_none=True)
        with torch.autocast(torch.device(ranks.device).type, dtype=torch.bfloat16, enabled=bf16):
            loss = F.nll_loss(forward(x).float(), y)
        loss.backward()
        opt.step()
        return loss.item()

    checkpoint = Checkpoint(torch, args.checkpoint_dir, ranks.rank, ranks)
    start, losses = checkpoint.load(model, opt)
    if start:
        sys.stdout.write("resume rank=%d step=%d\n" % (ranks.rank, start))
        sys.stdout.flush()

    def advance(i):
        """Step i, then the checkpoint when it is due or a signal came (every rank stops at the same step)."""
        loss = losses["last"] = step(i)
        losses.setdefault("first", loss)
        if args.step_delay:
            time.sleep(args.step_delay)
        signum = checkpoint.stop_now()
        if signum or (args.checkpoint_every and checkpoint.path and (i + 1) % args.checkpoint_every == 0):
            checkpoint.save(i + 1, model, opt, losses)
        if signum:
            name = signal.Signals(signum).name
            sys.stdout.write("checkpoint rank=%d step=%d signal=%s\n" % (ranks.rank, i + 1, name))
            sys.stdout.flush()
            ranks.finish()
            raise Stopped(signum)
        return loss

    wall0 = time.perf_counter()
    t = time.perf_counter()
    if start == 0:
        advance(0)
    first_step = time.perf_counter() - t
    for i in range(max(0, start - 1), args.warmup):
        advance(1 + i)
    load_before = loadavg()
    busy0, cpu0, t0 = busy_jiffies(), time.process_time(), time.perf_counter()
    times = []
    for i in range(max(0, start - 1 - args.warmup), args.steps):
        t = time.perf_counter()
        advance(1 + args.warmup + i)
        times.append(time.perf_counter() - t)
    first_loss, loss = losses["first"], losses["last"]
    busy1, cpu1, t1 = busy_jiffies(), time.process_time(), time.perf_counter()
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    wall = max(t1 - t0, 1e-9)
    own = (cpu1 - cpu0) / wall
    machine = (busy1 - busy0) / float(hz) / wall if busy0 is not None and busy1 is not None else None
    other = max(0.0, machine - own) if machine is not None else None
    final_loss = ranks.mean(loss)
    done = os.environ.get("MODAK_DONE_FILE")
    if done and ranks.rank == 0:
        # modak's completion marker (job.resilience): the training is done, whatever status the launcher returns
        with open(done, "w"):
            pass
    if ranks.enabled:
        sys.stdout.write("ddp rank=%d world_size=%d local_rank=%d node=%s backend=%s threads=%d final_loss=%r\n"
                         % (ranks.rank, ranks.world_size, ranks.local_rank,
                            os.environ.get("SLURMD_NODENAME") or socket.gethostname(), ranks.backend,
                            torch.get_num_threads(), final_loss))
        sys.stdout.flush()
    ranks.finish()
    ordered = sorted(times) or [0.0]     # a run resumed after its last step times none
    median = ordered[len(ordered) // 2] if len(ordered) % 2 else 0.5 * (ordered[len(ordered) // 2 - 1]
                                                                        + ordered[len(ordered) // 2])
    return {
        "schema": SCHEMA,
        "workload": args.model,
        "ok": True,
        "tag": args.tag,
        "host": socket.gethostname(),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "config": {"threads": args.threads, "batch_size": args.batch_size, "precision": args.precision,
                   "channels_last": bool(args.channels_last), "compile": bool(args.compile),
                   "onednn": args.onednn == "on", "cudnn_benchmark": bool(args.cudnn_benchmark)},
        "run": {"steps": args.steps, "warmup": args.warmup, "data": args.data, "seed": args.seed, "model": args.model},
        "hardware": cpu_facts(),
        "versions": versions(torch),
        "timing": {
            "first_step_s": first_step,
            "median_step_s": median,
            "min_step_s": ordered[0],
            "max_step_s": ordered[-1],
            "step_times_s": times,
            "per_sample_s": median / args.batch_size,
            "est_epoch_s": median * math.ceil(EPOCH_SAMPLES / float(args.batch_size)),
            "wall_s": time.perf_counter() - wall0,
        },
        "load": {"other_busy_cores": other, "own_cpu_util": own, "machine_busy_cores": machine,
                 "loadavg_1m_before": load_before, "loadavg_1m_after": loadavg()},
        "loss": {"first": first_loss, "last": loss},
        "ddp": ({"world_size": ranks.world_size, "backend": ranks.backend, "final_loss": final_loss}
                if ranks.enabled else None),
        "rank": ranks.rank,
    }


def main(argv=None):
    args = parse_args(argv)
    if args.checkpoint_dir:
        catch_stop_signals()
    try:
        record = run(args)
    except Stopped as stopped:
        return 128 + stopped.signum      # as a shell reports a process ended by the signal
    if record.pop("rank"):
        return 0              # data-parallel: rank 0 alone writes the record
    if record["ddp"] is None:
        del record["ddp"]     # the record of a single process stays as it was
    line = json.dumps(record, sort_keys=True)
    if args.output:
        with open(args.output, "a") as handle:
            handle.write(line + "\n")
    sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(leave(main()))
