"""The sample repository's contents: a miniature torchtitan core with a miniature
graph_trainer experiment inside it. Each collector issue extends this with what its
collectors look for; nothing here is expected output.
"""

from __future__ import annotations

EXP = "torchtitan/experiments/graph_trainer"


class Link(str):
    """A file of the sample that is a symlink to this (relative) target."""


# -- the baseline: what the repository looked like before the window --------------------
BASELINE: dict[str, str] = {
    "README.md": "# minititan\n\nA miniature of a training framework, for the scout demo.\n",
    "run_train.sh": (
        '#!/bin/bash\nNGPU=${NGPU:-8}\ntorchrun --nproc_per_node=$NGPU -m torchtitan.train "$@"\n'
    ),
    "torchtitan/__init__.py": "",
    "torchtitan/trainer.py": """\
from dataclasses import dataclass, field

from torchtitan.config.configs import ActivationCheckpointConfig, CompileConfig


class Trainer:
    @dataclass
    class Config:
        job_name: str = "default"
        steps: int = 1000
        compile: CompileConfig = field(default_factory=CompileConfig)
        activation_checkpoint: ActivationCheckpointConfig = field(
            default_factory=ActivationCheckpointConfig
        )
        seed: int | None = None

    def post_dataloading_process(self, batch):
        inputs, labels = batch
        return inputs, labels, {}
""",
    "torchtitan/config/__init__.py": "",
    "torchtitan/config/configs.py": """\
from dataclasses import dataclass, field
from typing import Literal


@dataclass
class CompileConfig:
    enable: bool = False
    mode: Literal["jit", "aot"] = "jit"
    backend: str = "inductor"
    components: list[str] = field(default_factory=lambda: ["model", "loss"])


@dataclass
class ActivationCheckpointConfig:
    mode: Literal["none", "full", "selective"] = "selective"
    selective_ac_option: str = "op"
""",
    "torchtitan/protocols/__init__.py": "",
    "torchtitan/protocols/model.py": """\
class BaseModel:
    def preprocess_inputs(self, tokens, extra):
        return tokens, extra
""",
    "torchtitan/models/__init__.py": "",
    "torchtitan/models/common/__init__.py": "",
    "torchtitan/models/common/attention.py": """\
class FlexAttention:
    def forward(self, q, k, v, block_mask=None):
        return q
""",
    "torchtitan/models/common/moe.py": """\
class MoE:
    def forward(self, x):
        return x
""",
    # The shipped scout.toml watches these surfaces: the sample has them, so its first run
    # starts without warnings about the configuration.
    "torchtitan/models/common/token_dispatcher.py": """\
class LocalTokenDispatcher:
    def dispatch(self, x, routing):
        return x

    def combine(self, x, routing):
        return x


class AllToAllTokenDispatcher:
    def dispatch(self, x, routing):
        return x

    def combine(self, x, routing):
        return x
""",
    "torchtitan/models/llama3/__init__.py": "",
    "torchtitan/models/llama3/model.py": "class Llama3:\n    pass\n",
    "torchtitan/distributed/__init__.py": "",
    "torchtitan/distributed/parallel_dims.py": """\
from dataclasses import dataclass


@dataclass
class ParallelDims:
    dp_shard: int
    tp: int

    @property
    def dp_enabled(self) -> bool:
        return self.dp_shard > 1

    @property
    def tp_enabled(self) -> bool:
        return self.tp > 1

    def build_mesh(self, device_type: str = "cuda"):
        return (device_type, self.dp_shard, self.tp)
""",
    "torchtitan/distributed/activation_checkpoint.py": """\
def apply_ac(model, config):
    for name, block in model.layers.items():
        if config.mode == "full":
            block.checkpointed = True
        elif config.mode == "selective":
            block.checkpointed = name.endswith("0")
    return model
""",
    "torchtitan/distributed/fsdp.py": """\
def fully_shard(module, mesh, reshard_after_forward=True):
    if mesh is None:
        raise ValueError("fully_shard needs a device mesh")
    for name, param in module.named_parameters():
        if param.dim() == 0:
            continue
        param.placements = ("shard", 0)
        param.mesh_name = name
    module.mesh = mesh
    module.reshard = reshard_after_forward
    return module
""",
    "tests/integration_tests/__init__.py": "",
    "tests/integration_tests/features.py": """\
from tests.integration_tests import OverrideDefinitions


def build_features_test_list():
    return [
        OverrideDefinitions([["--parallelism.data_parallel_shard_degree 4",
                              "--parallelism.tensor_parallel_degree 2"]], "FSDP+TP", "fsdp_tp"),
        OverrideDefinitions([["--parallelism.pipeline_parallel_degree 2"]], "PP", "pp"),
        OverrideDefinitions([["--parallelism.context_parallel_degree 2"]], "CP", "cp"),
    ]
""",
    "tests/integration_tests/h100.py": """\
from tests.integration_tests import OverrideDefinitions


def build_h100_test_list():
    return [
        OverrideDefinitions([["--parallelism.data_parallel_shard_degree 4",
                              "--parallelism.tensor_parallel_degree 2",
                              "--compile.enable"]], "FSDP+TP compiled", "fsdp_tp_compiled"),
    ]
""",
    f"{EXP}/__init__.py": "",
    f"{EXP}/configs.py": """\
from dataclasses import dataclass

from torchtitan.config.configs import ActivationCheckpointConfig
from torchtitan.trainer import Trainer


@dataclass
class GraphTrainerConfig(Trainer.Config):
    passes: tuple[str, ...] = ()


def to_graph_trainer_config(base: Trainer.Config) -> GraphTrainerConfig:
    return GraphTrainerConfig(
        job_name=base.job_name,
        steps=base.steps,
        compile=base.compile,
        # The experiment has its own AC: replace it wholesale.
        activation_checkpoint=ActivationCheckpointConfig(mode="none"),
    )
""",
    f"{EXP}/passes.py": '''\
"""Graph passes of the graph trainer.

TODO: document the pass ordering contract in the README.
"""

from torch.distributed.tensor._dtensor_spec import DTensorSpec


def remove_noop_pass(gm, example_inputs):
    # TODO(alice): fold the two cleanup loops into one walk.
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is None:
            gm.graph.erase_node(node)
    return gm


def cse_pass(gm, example_inputs):
    # TODO(pytorch/pytorch#161234): drop this copy once upstream CSE handles
    # in-place ops; until then we keep our own pass.
    seen = {}
    for node in gm.graph.nodes:
        seen.setdefault((node.target, node.args), node)
    return gm


def reorder_pass(gm, example_inputs):
    # FIXME: use `torch.fx.passes.reinplace` once it can handle views.
    reinplace = getattr(gm, "reinplace", None)
    label = "TODO: this string literal is not a comment"
    gm.meta["label"] = label
    return gm


def bucket_pass(gm, example_inputs, *, bucket_mb=25):
    # HACK: hard-coded bucket size until the config grows a knob.
    # XXX: see https://github.com/pytorch/pytorch/pull/158000 for the fix.
    gm.meta["bucket_mb"] = bucket_mb
    return gm


AVAILABLE_JOINT_PASSES = {
    "remove_noop": remove_noop_pass,
    "cse": cse_pass,
    "reorder": reorder_pass,
}
''',
    f"{EXP}/simple_fsdp.py": """\
def simple_fully_shard(module, device_mesh, reshard=True):
    # TODO: DTensor should support this mesh collapsing operation
    if device_mesh is None:
        raise ValueError("simple_fully_shard needs a device mesh")
    for fqn, weight in module.named_parameters():
        if weight.dim() == 0:
            continue
        weight.placements = ("shard", 0)
        weight.mesh_name = fqn
    module.mesh = device_mesh
    module.reshard = reshard
    return module
""",
    f"{EXP}/trainer.py": """\
from torchtitan.distributed.parallel_dims import ParallelDims
from torchtitan.models.common.attention import FlexAttention
from torchtitan.trainer import Trainer


def build_dims(world_size):
    return ParallelDims(dp_shard=world_size // 2, tp=2)


def _patched_forward(self, q, k, v, block_mask=None):
    return q


FlexAttention.forward = _patched_forward


class GraphTrainer(Trainer):
    def train_step(self, batch):
        inputs, labels, extra = self.post_dataloading_process(batch)
        return inputs, labels, extra


def post_grad_passes(gm, example_inputs):
    from torchtitan.experiments.graph_trainer.passes import bucket_pass

    return bucket_pass(gm, example_inputs, bucket_mb=50)
""",
    f"{EXP}/llama3/__init__.py": "",
    f"{EXP}/llama3/config_registry.py": """\
def graph_trainer_llama3_debugmodel():
    return {"dim": 256}


def graph_trainer_llama3_70b():
    return {"dim": 8192}
""",
    f"{EXP}/tests/__init__.py": "",
    f"{EXP}/tests/test_passes.py": """\
from torchtitan.experiments.graph_trainer.passes import cse_pass, remove_noop_pass


class TestRemoveNoop:
    def test_removes(self):
        assert remove_noop_pass is not None


class TestCse:
    def test_cse(self):
        assert cse_pass is not None
""",
    f"{EXP}/tests/test_numerics.py": """\
class TestSimpleFSDP:
    def test_fsdp(self):
        pass


class TestGraphTrainerNumerics:
    def test_dense(self):
        pass

    def test_moe(self):
        pass


class TestAutoParallelNumerics:
    def test_dense_autoparallel(self):
        pass
""",
    f"{EXP}/tests/test_profiler.py": """\
class TestProfiler:
    def test_trace(self):
        pass
""",
    f"{EXP}/tests/integration_tests.py": """\
from tests.integration_tests import OverrideDefinitions


_PP_DISABLED = True


def build_graph_trainer_test_list():
    return [
        OverrideDefinitions([["--config graph_trainer_llama3_debugmodel",
                              "--parallelism.data_parallel_shard_degree 4",
                              "--parallelism.tensor_parallel_degree 2",
                              "--compile.passes reorder"]], "FSDP+TP", "gt_fsdp_tp"),
        OverrideDefinitions([["--parallelism.pipeline_parallel_degree 2"]], "PP", "gt_pp",
                            disabled=_PP_DISABLED),
    ]
""",
    f"{EXP}/README.md": """\
# graph_trainer

Passes live in `torchtitan/experiments/graph_trainer/passes.py` and the legacy ones in
`torchtitan/experiments/graph_trainer/old_passes.py`.

Run the numerics tests with
`pytest torchtitan/experiments/graph_trainer/tests/test_numerics.py::TestGraphTrainerNumerics`.

Turn on compilation with `--compile.enable` and pick `--compile.backend=aot_eager`.
""",
    f"{EXP}/.claude/CLAUDE.md": """\
# GraphTrainer Development Guide

All graph passes take `(gm, example_inputs)` and return the GraphModule. Use
`--compile.mode=turbo` for the fastest compile. The user guide is [../README.md](../README.md).
""",
    # As in torchtitan: the agents' guide is the same file (one doc, links from its folder).
    f"{EXP}/AGENTS.md": Link(".claude/CLAUDE.md"),
    ".github/workflows/integration_test_8gpu_graph_trainer.yaml": """\
name: GraphTrainer 8 GPU Integration Tests
on:
  schedule:
    - cron: "0 6 * * *"
jobs:
  build-test:
    runs-on: linux.g5.48xlarge.nvidia.gpu
    steps:
      - name: Run tests
        run: |
          set -eux
          python -m torchtitan.experiments.graph_trainer.tests.integration_tests --ngpu 8
          pytest torchtitan/experiments/graph_trainer/tests/test_passes.py -v
          pytest torchtitan/experiments/graph_trainer/tests/test_numerics.py::TestSimpleFSDP -v
          pytest torchtitan/experiments/graph_trainer/tests/test_numerics.py -v \\
            -k "dense and not AutoParallel"
          pytest torchtitan/experiments/graph_trainer/tests/test_profiler.py -v
""",
}


# -- history inside the window: (days before today, hour, message, changed files) --------
# A file mapped to None is deleted.
HISTORY: list[tuple[int, int, str, dict[str, str | None]]] = [
    (
        3,
        9,
        "Make the sample's TODOs older than the window",
        {"torchtitan/models/llama3/model.py": "class Llama3:\n    dim: int = 4096\n"},
    ),
    (
        1,
        10,
        "Grow Trainer.Config and the post-dataloading tuple",
        {
            "torchtitan/trainer.py": BASELINE["torchtitan/trainer.py"]
            .replace(
                "        steps: int = 1000\n",
                "        steps: int = 2000\n        gradient_accumulation_steps: int = 1\n",
            )
            .replace("return inputs, labels, {}", "return inputs, labels, {}, None"),
        },
    ),
    (
        1,
        12,
        "FlexAttention.forward takes keyword-only block_mask and scale; add bucketing",
        {
            "torchtitan/models/common/attention.py": """\
class FlexAttention:
    def forward(self, q, k, v, *, block_mask=None, scale=None):
        return q
""",
            "torchtitan/distributed/parallel_dims.py": BASELINE[
                "torchtitan/distributed/parallel_dims.py"
            ].replace(
                "    def build_mesh(",
                "    @classmethod\n"
                "    def from_world_size(cls, world_size: int, tp: int = 1):\n"
                "        return cls(dp_shard=world_size // tp, tp=tp)\n\n"
                "    def build_mesh(",
            ),
            "torchtitan/distributed/bucketing.py": '''\
def bucket_all_gathers(graph, bucket_mb: int = 25):
    """Group all-gathers into buckets of about `bucket_mb` MiB."""
    return graph


def _private_helper():
    return None
''',
            "torchtitan/models/qwen9/__init__.py": "",
            f"{EXP}/cudagraph.py": "def wrap_in_cudagraph(fn):\n    return fn\n",
            "torchtitan/models/qwen9/model.py": "class Qwen9:\n    pass\n",
        },
    ),
    (
        0,
        0,
        "graph_trainer: stop running the profiler test; fold cleanup loops",
        {
            ".github/workflows/integration_test_8gpu_graph_trainer.yaml": BASELINE[
                ".github/workflows/integration_test_8gpu_graph_trainer.yaml"
            ].replace(
                "          pytest torchtitan/experiments/graph_trainer/tests/test_profiler.py",
                "          # pytest torchtitan/experiments/graph_trainer/tests/test_profiler.py",
            ),
            f"{EXP}/passes.py": BASELINE[f"{EXP}/passes.py"]
            .replace("    # TODO(alice): fold the two cleanup loops into one walk.\n", "")
            .replace(
                "    # XXX: see https://github.com/pytorch/pytorch/pull/158000 for the fix.\n",
                "",
            ),
        },
    ),
]


# A tiny stand-in for the installed torch, read statically by the TODO collector.
FAKE_TORCH: dict[str, str] = {
    "torch/__init__.py": "from torch import fx\n",
    "torch/fx/__init__.py": "",
    "torch/fx/passes/__init__.py": "from torch.fx.passes import reinplace\n",
    "torch/fx/passes/reinplace.py": "def reinplace(gm, *sample_args):\n    return gm\n",
    "torch/distributed/__init__.py": "",
    "torch/distributed/tensor/__init__.py": (
        "from torch.distributed.tensor._dtensor_spec import DTensorSpec\n\n\n"
        "class DTensor:\n    pass\n"
    ),
    "torch/distributed/tensor/_dtensor_spec.py": "class DTensorSpec:\n    pass\n",
}


# The report of two days ago, written by hand the way the LLM scout wrote them: no markers,
# bold titles with code, wrapped lines, a section suffix that changed since.
HAND_WRITTEN_REPORT = """\
# Nightly Scout Report — {date}

## CI Failures

All graph_trainer workflows green on the last scheduled run.

## Action Items (things to do)

- [ ] **[P1] TODO blocked on pytorch/pytorch#161234 in `passes.py`** — `cse_pass` keeps its own
  copy until upstream CSE handles in-place ops. First reported {first}.
- [ ] **[P2] Remove dead `legacy_mode` flag from `configs.py`** — nothing reads it since the
  config refactor; delete it and its docs.

## Opportunities (things to consider)

- Nothing new upstream that the experiment could adopt.

## FYI (awareness, no action needed)

- 5 TODOs with no upstream blocker — owners: alice; the rest unowned.

## All Clear

- Trainer.Config fields — stable
"""
