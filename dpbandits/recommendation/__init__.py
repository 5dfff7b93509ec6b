"""Private recommendation: local-DP selection (paper 001) and multi-selection (paper 004)."""
