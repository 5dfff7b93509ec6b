"""Signals: SIGTERM and Ctrl-C turned into exceptions that stop a run cleanly.

A terminated run stops its workers and cleans up like an interrupted one
(:func:`handle_termination`), a file being written is finished or removed before the signal is
raised (:func:`deferred_termination`, used by :func:`dpbandits.core.files.atomic_open`), and a
signal that lands in a destructor is raised again at the next safe point
(:func:`check_signals`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any

__all__ = [
    "Terminated",
    "check_signals",
    "deferred_termination",
    "forget_received",
    "handle_termination",
]


class Terminated(BaseException):
    """Raised in the main thread when the process receives SIGTERM (see
    :func:`handle_termination`); a ``BaseException`` so that ``except Exception`` does not
    swallow it and clean-up code runs as for ``KeyboardInterrupt``."""


_deferring = 0  # depth of deferred_termination blocks in the main thread
_pending: str | None = None  # a SIGTERM received inside one, raised when the outermost ends
# The signal raised by a handler of handle_termination, kept until the block ends: a handler
# that runs while the main thread is in a destructor (``__del__``, a weakref callback) raises
# there, and Python prints and drops that exception; check_signals raises it again.
_received: BaseException | None = None


def _raise_terminated(signum: int, frame: Any) -> None:
    global _pending, _received
    if _deferring:
        _pending = f"received signal {signum}"
        return
    _received = Terminated(f"received signal {signum}")
    raise _received


def _raise_interrupt(signum: int, frame: Any) -> None:
    global _received
    _received = KeyboardInterrupt()
    raise _received


def check_signals() -> None:
    """Raise again the SIGINT or SIGTERM that :func:`handle_termination` turned into an
    exception, if one was received: for long loops to call at safe points, in case the
    exception was raised inside a destructor and dropped (Python prints "Exception ignored"
    and goes on). A no-op outside the block and when no signal came."""
    if _received is not None:
        raise _received


@contextlib.contextmanager
def deferred_termination() -> Any:
    """Hold a SIGTERM received while the block runs (under :func:`handle_termination`) until
    the block ends, then raise :class:`Terminated`: a write of a file is finished (and renamed
    into place, or removed) instead of being cut in the middle of, e.g., a zip archive's
    records, whose clean-up would then fail with an error of its own."""
    global _deferring, _pending
    if threading.current_thread() is not threading.main_thread():  # signals go to main only
        yield
        return
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if not _deferring and _pending is not None:
            message, _pending = _pending, None
            raise Terminated(message)


@contextlib.contextmanager
def handle_termination() -> Any:
    """Turn SIGTERM into :class:`Terminated` and SIGINT into ``KeyboardInterrupt`` while the
    block runs (main thread only), so that a terminated run stops its workers and cleans up
    like an interrupted one, and remember either (:func:`check_signals`) so that it is not lost
    when it lands in a destructor."""
    global _received
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    # leave a caller's own SIGINT handler alone, and an ignored SIGINT ignored
    own_sigint = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if own_sigint:
        signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if own_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        _received = None


def forget_received() -> None:
    """Forget a signal remembered by :func:`handle_termination` (a forked worker inherits its
    parent's memory, not its signals)."""
    global _received
    _received = None
