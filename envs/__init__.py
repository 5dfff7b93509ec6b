"""Gymnasium environments for non-stationary bandits (SPEC §5).

Importing this package registers the ``dpbandits/<Name>-v0`` ids with Gymnasium.
"""
