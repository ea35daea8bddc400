"""An MLflow run's params as the run's config (the shape the rules read), and its metric keys as tags.

Keys: transformers' ``MLflowCallback`` logs the raw log keys (``loss``, ``rewards/x/mean``,
``eval_loss``), without TensorBoard's ``train/`` prefix; they are kept as MLflow shows them (the
catalogue knows the unprefixed names), except ``eval_``/``test_`` keys, which become ``eval/…`` and
``test/…`` as transformers names them for TensorBoard (`tag_of`), so that they are told apart from
training points.

Params: MLflow stores every param as a string (transformers' ``MLflowCallback`` logs each
TrainingArguments field with ``str(value)``: ``"0.0001"``, ``"True"``, ``"None"``,
``"['tensorboard', 'mlflow']"``).
Each is turned back into the value it was: JSON numbers and literals, Python's ``True``/``False``/
``None``, short Python literals (lists, dicts, tuples); anything else stays the string it is.
"""

from __future__ import annotations

import ast
import json
from typing import Any

_WORDS = {"True": True, "False": False, "None": None}
LITERAL_LIMIT = 2000  # characters: a longer text is kept as a string (no parse of a huge value)
SPLITS = (("eval_", "eval/"), ("test_", "test/"))  # transformers' ``rewrite_logs``


def tag_of(key: str) -> str:
    """The tag a metric key is shown under: the key, ``eval_x`` as ``eval/x``, ``test_x`` as ``test/x``."""
    for prefix, split in SPLITS:
        if key.startswith(prefix) and len(key) > len(prefix):
            return split + key[len(prefix) :]
    return key


def param_value(text: str) -> Any:
    """The value a param string stands for (the string itself when it is no literal)."""
    if text in _WORDS:
        return _WORDS[text]
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = text
    else:
        if isinstance(value, (int, float, bool)) or value is None:
            return value
    if len(text) <= LITERAL_LIMIT and text[:1] in "[({":
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return text
    return value if isinstance(value, (list, dict)) else text


def config_of(params: dict[str, str]) -> dict[str, Any] | None:
    """The run's config from its params (None when it has none)."""
    return {key: param_value(value) for key, value in params.items()} or None
