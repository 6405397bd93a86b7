"""Named exceptions shared by the Python front end and the compiled engine.

The extension ``ccsim._core`` imports :class:`ScenarioError` and :class:`ConservationError` from this
module and raises them with a single ``"field: reason"`` message, so their names, import path and
one-string constructor are part of the Python <-> Rust contract (docs/internals.md). The CLI prints any
:class:`CcsimError` as one line and exits with status 2.
"""

from __future__ import annotations

__all__ = [
    "CcsimError",
    "ScenarioError",
    "UnitError",
    "BudgetError",
    "ConservationError",
    "ResourceError",
    "EngineError",
    "OutputExistsError",
    "ArgumentError",
]


class CcsimError(Exception):
    """Base class of every error ccsim reports to a user (as opposed to a bug)."""


class ScenarioError(CcsimError, ValueError):
    """A scenario value is invalid.

    ``ScenarioError(field, reason)`` or, as the engine raises it, ``ScenarioError("field: reason")``.
    ``field`` is the path in the scenario file (``flows[1].start``, ``topology.queue``); it is empty when
    the location is not known yet (a unit parser does not know which key it is parsing: the scenario
    loader adds the path). ``str()`` is the single line ``field: reason``.
    """

    def __init__(self, field: str, reason: str | None = None) -> None:
        if reason is None:
            field, sep, rest = field.partition(": ")
            if not sep:
                field, reason = "", field
            else:
                reason = rest
        self.field = field
        self.reason = reason
        super().__init__(self._message())

    def _message(self) -> str:
        return f"{self.field}: {self.reason}" if self.field else self.reason

    def with_field(self, field: str) -> "ScenarioError":
        """The same error located at ``field`` (same class, so a UnitError stays a UnitError)."""
        return type(self)(field, self.reason)

    def __reduce__(self):
        return (type(self), (self.field, self.reason))


class UnitError(ScenarioError):
    """A quantity is malformed: bad or missing unit, negative, not a whole number of base units."""


class BudgetError(ScenarioError):
    """A legal scenario or sweep would cost more than the budget allows (events, memory, runs): refused
    before it starts, or stopped by the engine when it really processes more events than the budget
    allows, naming the key that drives the cost (docs/safety.md). ``--max-events`` / ``--max-memory``
    (``ccsim.Budget``) move the limits; ``budget=None`` in the API lifts them."""


class ConservationError(CcsimError, RuntimeError):
    """The engine's end-of-run packet/byte accounting does not balance: a simulator bug, not user input."""


class ResourceError(CcsimError, MemoryError):
    """The run needs more memory than the machine gives it: an allocation the scenario asked for failed
    (the engine raises it instead of aborting the process), or Python ran out of memory on its copy."""


class EngineError(CcsimError, RuntimeError):
    """An internal error (a panic) in the compiled engine: a bug in ccsim, reported as an exception
    instead of ending the interpreter."""


class ArgumentError(CcsimError, TypeError, ValueError):
    """A Python API function was called with an argument of the wrong type (``ccsim.run(123)``) or a
    value no call can take (``Budget(max_events=math.nan)``, a path holding a NUL byte); a command-line
    option given a value it cannot take. Both a TypeError and a ValueError, so code written against
    either built-in still catches it."""


class OutputExistsError(CcsimError, FileExistsError):
    """The output directory exists and overwriting was not asked for (``--force``)."""
