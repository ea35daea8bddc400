"""rltop: top for reinforcement-learning training of language models."""

__version__ = "0.1.0"
