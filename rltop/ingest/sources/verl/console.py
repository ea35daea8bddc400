"""The ``verl_console`` source kind: veRL's console output kept in a file (``trainer.logger=['console']``).

What most veRL users keep of a run is its stdout: ``python -m verl.trainer.main_ppo … > train.log``,
a Slurm ``slurm-42.out``, ``nohup.out``. One such file is one run, named after the file. Its points
are the metric lines veRL's console logger prints once a step (`rltop.ingest.sources.verl.lines`, read by
`rltop.ingest.sources.verl.console_reader`), tags
exactly as veRL names them (``actor/entropy``, ``critic/lr(1e-4)``, ``val-core/…/mean@30``), steps as
printed (from 0, or from a resumed checkpoint's step; a step printed twice follows the store's rule
for repeated steps). Everything else in the file (the config dump, warnings, model completions
that say "step by step" or even ``step:``) gives no point.

The file's names are anybody's (``*.log``, ``*.out``, ``*.txt``, ``*.err``, or no extension), so the
kind looks inside (`SourceKind.accepts`, `rltop.ingest.sources.content_check.HeadCheck`): a file is one of
veRL's only when its first 256 KB hold a metric line or the start of veRL's config dump. A file
inside a W&B run folder (``wandb/run-…/files/output.log``, W&B's copy of the console) is left to
the W&B run.

The run's settings come from the config veRL prints at start (`rltop.ingest.sources.verl.config`: flat
dotted keys such as ``algorithm.adv_estimator``), plus what the trainer prints once it knows it
(``Total training steps: N`` -> ``total_training_steps``, ``Size of train dataloader: N`` ->
``train_dataloader_size``), plus ``framework: verl``. A console line carries no time: a point is
dated by the file's modification time at the read that found it (live, within a poll of when it
was printed).
"""

from __future__ import annotations

import re

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind, SourceReader
from rltop.ingest.sources.content_check import HeadCheck, complete_lines

SUFFIXES = (".log", ".out", ".txt", ".err")
FRAMEWORK_KEY, FRAMEWORK = "framework", "verl"  # in every veRL run's config: the trainer kind's family
TOTAL_STEPS_KEY = "total_training_steps"  # "Total training steps: N" (veRL's ray_trainer, once resolved)
BATCHES_KEY = "train_dataloader_size"  # "Size of train dataloader: N": batches (steps) per epoch
_CONFIG_START = "{'actor_rollout_ref': "
_ADV_ESTIMATOR = re.compile(r"\s*'adv_estimator': '[\w.\-]+',?\s*$")
_WANDB_RUN = re.compile(r"^(?:offline-)?run-\d{8}_\d{6}-.+$|^latest-run$")


def claims_name(name: str) -> bool:
    """True for names a console log may have: ``*.log``, ``*.out``, ``*.txt``, ``*.err``, no extension."""
    if name.endswith(("~", ".tmp", ".swp")) or not name.strip("."):
        return False
    return name.lower().endswith(SUFFIXES) or "." not in name


def looks_like_console_log(head: bytes, whole: bool) -> bool:
    """True when the first bytes of a file hold a veRL metric line or the start of its config dump."""
    from rltop.ingest.sources.verl.lines import metric_line, segments  # (regexes compiled only once asked)

    for raw in complete_lines(head, whole):
        if b"step:" not in raw and b"'a" not in raw:
            continue
        for _, message in segments(raw.decode("utf-8", "replace")):
            if message.startswith(_CONFIG_START) or _ADV_ESTIMATOR.match(message) or metric_line(message):
                return True
    return False


def in_wandb_run(path: str) -> bool:
    """True for a file inside a W&B run folder (``wandb/run-…/files/output.log``: W&B's own copy)."""
    parts = storage.parts(path)
    return any(parts[i] == "wandb" and _WANDB_RUN.match(parts[i + 1]) for i in range(len(parts) - 2))


_HEAD_CHECK = HeadCheck(looks_like_console_log)


def accepts(path: str) -> bool:
    """True when the file at ``path`` is a veRL console log (read once per file: `HeadCheck`)."""
    return not in_wandb_run(path) and _HEAD_CHECK(path)


def _open(path: str) -> SourceReader:
    from rltop.ingest.sources.line_reader import LineFileReader
    from rltop.ingest.sources.verl.console_reader import ConsoleDecoder

    return LineFileReader(path, ConsoleDecoder())


KIND = SourceKind(
    name="verl_console",
    label="veRL console logs",
    pattern="*.log, *.out… with step:N lines",
    claims=claims_name,
    run_directory=lambda path: path,  # one file, one run, named after the file
    order=lambda path: path,
    open=_open,
    output_dir=storage.parent,  # the folder holding the log
    rank=3,  # below event files, W&B and trackio of the same training (they hold wall times)
    summary="read from veRL's console output (its step lines; points are dated when they were read)",
    quiet_hint="training stopped, or its output is buffered (Ray forwards a process's lines in bursts)",
    accepts=accepts,
)
