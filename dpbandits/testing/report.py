"""The report of check_selector: one verdict per check, and the error raised when one fails."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dpbandits.audit.selector import AuditResult

__all__ = ["CheckResult", "SelectorCheckError", "SelectorReport"]


@dataclass(frozen=True)
class CheckResult:
    """One check: its ``name`` (``group.check``), verdict and a readable ``message``.

    ``required = False`` marks a check whose failure is expected and does not fail the report
    (the privacy audit of a selector that declares ``private = False``).
    """

    name: str
    passed: bool
    message: str
    required: bool = True
    seconds: float = 0.0

    @property
    def group(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def ok(self) -> bool:
        """Passed, or failed where a failure is expected."""
        return self.passed or not self.required

    def __str__(self) -> str:
        if self.passed:
            verdict = "PASS"
        elif self.required:
            verdict = "FAIL"
        else:
            verdict = "FAIL (expected)"
        return f"{verdict:<15} {self.name}: {self.message}"


@dataclass
class SelectorReport:
    """The outcome of :func:`check_selector`: one :class:`CheckResult` per check.

    ``report.passed`` is True when every required check passed; ``report["privacy"]`` is one
    check; ``report.audit`` holds the :class:`dpbandits.audit.selector.AuditResult` of each pair.
    """

    selector: str
    epsilon: float
    private: bool
    checks: list[CheckResult] = field(default_factory=list)
    audit: list[AuditResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> list[CheckResult]:
        """Required checks that failed."""
        return [c for c in self.checks if not c.ok]

    @property
    def expected_failures(self) -> list[CheckResult]:
        """Checks that failed where a failure is expected (privacy of a non-private selector)."""
        return [c for c in self.checks if not c.passed and not c.required]

    @property
    def privacy_passed(self) -> bool | None:
        """The verdict of the privacy audit (None if it was skipped)."""
        found = [c for c in self.checks if c.name == "privacy"]
        return found[0].passed if found else None

    def names(self) -> list[str]:
        return [c.name for c in self.checks]

    def group(self, name: str) -> list[CheckResult]:
        """The checks of one group (``"shapes"``, ``"validation"``, ...)."""
        return [c for c in self.checks if c.group == name]

    def __getitem__(self, name: str) -> CheckResult:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check named {name!r}; checks: {', '.join(self.names())}")

    def __iter__(self) -> Iterator[CheckResult]:
        return iter(self.checks)

    def __len__(self) -> int:
        return len(self.checks)

    def summary(self) -> str:
        """One line: the verdict and the failed checks."""
        verdict = "PASSED" if self.passed else "FAILED"
        line = (
            f"check_selector({self.selector}): {verdict}, {len(self.checks)} checks, "
            f"{len(self.failures)} failed"
        )
        if self.expected_failures:
            line += f", {len(self.expected_failures)} expected failure(s)"
        if self.failures:
            line += ": " + ", ".join(c.name for c in self.failures)
        return line + f" ({self.seconds:.1f} s)"

    def __str__(self) -> str:
        lines = [self.summary()]
        lines += [f"  {c}" for c in self.checks]
        return "\n".join(lines)


class SelectorCheckError(AssertionError):
    """Raised by :func:`check_selector` when a required check fails; ``.report`` has them all."""

    def __init__(self, report: SelectorReport) -> None:
        self.report = report
        details = "\n".join(f"  {c}" for c in report.failures)
        super().__init__(f"{report.summary()}\n{details}")
