"""Reaver re-imagined in JAX: A2C and PPO for StarCraft II and gymnasium, authored in notebooks, Colab first."""

__version__ = "0.1.0"
