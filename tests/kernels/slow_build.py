"""An op whose eager kernel takes a build lock in a folder of its own (as optimum-quanto builds its C++ extension on
its first call, in its package) and starts a compiler in a process group of its own (as ninja does), then runs on:
the audit's eager worker, killed at its time limit, must leave neither behind (hunt 40)."""

import os
import subprocess
import time

import torch
from torch.utils.file_baton import FileBaton


@torch.library.custom_op("slowbuild::first_call", mutates_args=())
def first_call(x: torch.Tensor) -> torch.Tensor:
    folder = os.environ["SLOWBUILD_DIR"]
    FileBaton(os.path.join(folder, "lock")).try_acquire()
    compiler = subprocess.Popen(["sleep", "120"], start_new_session=True)
    with open(os.path.join(folder, "compiler.pid"), "w") as f:
        f.write(str(compiler.pid))
    time.sleep(120)
    return x.clone()


@first_call.register_fake
def _(x):
    return torch.empty_like(x)
