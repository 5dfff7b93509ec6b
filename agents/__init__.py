"""Bandit agents: UCB, Thompson sampling, private agents and non-stationary baselines."""
