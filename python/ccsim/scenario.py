"""The scenario file: TOML <-> validated pydantic model -> the resolved JSON the engine reads.

Users write quantities with units (``"10Mbit"``, ``"20ms"``); the model stores them as integers in
canonical units under names that say so (``bottleneck_rate_bps``), with the user's key as the alias.
Every error is a one-line :class:`ScenarioError` naming the key path (``flows[1].start: ...``), so the
CLI can show it as is. ``resolve()`` writes out every default explicitly: the engine never has to know a
default, and ``meta.json`` records exactly what was simulated. The file format is documented in
docs/scenario-format.md.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Callable, Iterable, Iterator, Literal, Union

import tomli_w
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Tag,
    Field,
    PlainSerializer,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from ccsim import units
from ccsim.arguments import kind_of, path_argument, text_argument
from ccsim.engine import check_scenario, known_algorithms
from ccsim.errors import ArgumentError, ScenarioError
from ccsim.profiles import DEFAULT_PROFILE, PROFILE_NAMES, PROFILES
from ccsim.files import read_toml_text
from ccsim.resolved_keys import KeyRecord, KeyScope

__all__ = ["Scenario", "Run", "Topology", "ParkingLot", "Hop", "DropTail", "Red", "Tcp", "Flow", "load_scenario"]

# Defaults that are not plain literals, named once.
DEFAULT_SAMPLE_INTERVAL_NS = 100_000_000
DEFAULT_ACCESS_RATE_BPS = 1_000_000_000
DEFAULT_REVERSE_QUEUE_PKTS = 10_000
# Access links (both directions) queue like a Linux host's interface: txqueuelen 1000 packets (the
# kernel testbed runs on Linux). ns-2 scripts set their own limits (DropTail's default is 50 packets):
# write access_queue = "50pkt" for that. docs/choices.md.
DEFAULT_ACCESS_QUEUE_PKTS = 1000
# Streams: CBR 1000 B payload + 28 B IP/UDP; VoIP G.711, 160 B every 20 ms + 40 B IP/UDP/RTP, talk
# spurts with Brady's means (1.0 s on, 1.35 s off). Web: Pareto shape 1.2, the classic heavy tail.
CBR_DEFAULT_PAYLOAD_BYTES = 1000
CBR_DEFAULT_HEADER_BYTES = 28
VOIP_DEFAULT_PAYLOAD_BYTES = 160
VOIP_DEFAULT_HEADER_BYTES = 40
VOIP_DEFAULT_INTERVAL_NS = 20_000_000
VOIP_DEFAULT_MEAN_ON_NS = 1_000_000_000
VOIP_DEFAULT_MEAN_OFF_NS = 1_350_000_000
WEB_DEFAULT_SIZE_SHAPE = 1.2
# The version of the resolved document this front end writes (docs/resolved-scenario.md).
RESOLVED_FORMAT = 4
MAX_FLOW_COUNT = 10_000  # per [[flows]] entry: a typo such as count = 100000 should not build 100000 flows
MAX_TOTAL_FLOWS = 100_000  # in all: 300 entries of count = 10000 in a 12 kB file would build 3 million


# ---------------------------------------------------------------------------------------------------
# Field types: parse a unit string on the way in, print the canonical spelling on the way out.


def _optional(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else parse(v)


def _optional_fmt(fmt: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else fmt(v)


Rate = Annotated[int, BeforeValidator(units.parse_rate), PlainSerializer(units.format_rate, when_used="json")]
Time = Annotated[int, BeforeValidator(units.parse_time), PlainSerializer(units.format_time, when_used="json")]
Size = Annotated[int, BeforeValidator(units.parse_size), PlainSerializer(units.format_size, when_used="json")]
Probability = Annotated[float, BeforeValidator(units.parse_probability)]
OptRate = Annotated[
    Union[int, None],
    BeforeValidator(_optional(units.parse_rate)),
    PlainSerializer(_optional_fmt(units.format_rate), when_used="json"),
]
OptTime = Annotated[
    Union[int, None],
    BeforeValidator(_optional(units.parse_time)),
    PlainSerializer(_optional_fmt(units.format_time), when_used="json"),
]
OptSize = Annotated[
    Union[int, None],
    BeforeValidator(_optional(units.parse_size)),
    PlainSerializer(_optional_fmt(units.format_size), when_used="json"),
]
QueueLimit = Annotated[
    tuple[int, Literal["pkts", "bytes"]],
    BeforeValidator(units.parse_queue_limit),
    PlainSerializer(lambda v: units.format_queue_limit(*v), when_used="json"),
]


def _parse_delay(value: Any) -> Any:
    """A fixed delay ``"5ms"`` or a per-flow draw ``{ uniform = ["5ms", "30ms"] }`` (a (low, high) pair)."""
    if isinstance(value, dict):
        if set(value) != {"uniform"}:
            raise ScenarioError("", f"a distribution is {{ uniform = [low, high] }} (got keys {sorted(value)})")
        bounds = value["uniform"]
        if not isinstance(bounds, (list, tuple)) or len(bounds) != 2:
            raise ScenarioError("uniform", "needs [low, high]")
        low, high = units.parse_time(bounds[0]), units.parse_time(bounds[1])
        if high < low:
            raise ScenarioError("uniform", f"low {units.format_time(low)} is above high {units.format_time(high)}")
        return (low, high)
    return units.parse_time(value)


def _format_delay(value: Any) -> Any:
    if isinstance(value, tuple):
        return {"uniform": [units.format_time(value[0]), units.format_time(value[1])]}
    return units.format_time(value)


# One-way delay (or a start time): fixed, or uniform on [low, high] drawn per flow from the run's seed.
Delay = Annotated[Union[int, tuple[int, int]], BeforeValidator(_parse_delay), PlainSerializer(_format_delay, when_used="json")]


def _parse_intervals(value: Any) -> Any:
    if not isinstance(value, (list, tuple)) or not value:
        raise ScenarioError("", 'needs a list of [start, stop] pairs, e.g. [["0s", "100s"], ["200s", "275s"]]')
    out = []
    for k, pair in enumerate(value):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ScenarioError(f"[{k}]", "needs [start, stop]")
        out.append((units.parse_time(pair[0]), units.parse_time(pair[1])))
    return out


Intervals = Annotated[
    Union[list[tuple[int, int]], None],
    BeforeValidator(_optional(_parse_intervals)),
    PlainSerializer(lambda v: None if v is None else [[units.format_time(a), units.format_time(b)] for a, b in v], when_used="json"),
]


# The Gilbert-Elliott model's keys (netem `loss gemodel p r 1-h 1-k`): the two transition
# probabilities per packet and the loss probability in each state.
_GILBERT_ELLIOTT_KEYS = ("p_good_to_bad", "p_bad_to_good", "loss_good", "loss_bad")


def _parse_loss(value: Any) -> Any:
    """A link's random loss: a probability (``0.01``, ``"1%"``), a schedule of steps
    ``[["0s", 0.0], ["15s", 0.01]]`` (from each time on that probability; the schedule starts at 0s,
    its times increase, every probability is in [0, 1)), or the bursty losses of the Gilbert-Elliott
    model, ``{ model = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3, loss_good = 0,
    loss_bad = 1 }``."""
    if isinstance(value, dict):
        return _parse_gilbert_elliott(value)
    if not isinstance(value, (list, tuple)):
        return _loss_probability(value)
    if not value:
        raise ScenarioError("", 'a loss schedule needs [time, probability] steps, e.g. [["0s", 0.0], ["15s", 0.01]]')
    steps: list[tuple[int, float]] = []
    for k, step in enumerate(value):
        if not isinstance(step, (list, tuple)) or len(step) != 2:
            raise ScenarioError(f"[{k}]", 'needs [time, probability], e.g. ["15s", 0.01]')
        try:
            at, p = units.parse_time(step[0]), _loss_probability(step[1])
        except ScenarioError as e:
            raise e.with_field(f"[{k}]") from None
        if k == 0 and at != 0:
            raise ScenarioError("[0]", f"the schedule starts at 0s (got {units.format_time(at)}): begin with [\"0s\", p]")
        if k > 0 and at <= steps[-1][0]:
            raise ScenarioError(f"[{k}]", f"{units.format_time(at)} is not after the previous step ({units.format_time(steps[-1][0])}): times must increase")
        steps.append((at, p))
    return steps


def _parse_gilbert_elliott(value: dict[str, Any]) -> dict[str, Any]:
    """``{ model = "gilbert_elliott", ... }`` -> the resolved ``loss_model``: transition probabilities
    in (0, 1] (the chain must leave each state), loss probabilities in [0, 1]."""
    if value.get("model") != "gilbert_elliott":
        raise ScenarioError("model", f'a loss table is a loss model: model = "gilbert_elliott" (got {value.get("model")!r})')
    for key in value:
        if key != "model" and key not in _GILBERT_ELLIOTT_KEYS:
            raise ScenarioError(key, f"unknown key of the Gilbert-Elliott model (its keys: {', '.join(_GILBERT_ELLIOTT_KEYS)})")
    model: dict[str, Any] = {"kind": "gilbert_elliott"}
    for key in _GILBERT_ELLIOTT_KEYS:
        if key not in value:
            raise ScenarioError(key, "required")
        try:
            p = units.parse_probability(value[key])
        except ScenarioError as e:
            raise e.with_field(key) from None
        if key.startswith("p_") and p == 0.0:
            raise ScenarioError(key, "must be above 0: the chain must leave each state")
        model[key] = p
    return model


def _loss_probability(value: Any) -> float:
    p = units.parse_probability(value)
    if p >= 1.0:
        raise ScenarioError("", f"{p} would drop every packet: must be in [0, 1)")
    return p


def _format_loss(value: Any) -> Any:
    if isinstance(value, dict):
        return {"model": "gilbert_elliott", **{k: value[k] for k in _GILBERT_ELLIOTT_KEYS}}
    if isinstance(value, list):
        return [[units.format_time(at), p] for at, p in value]
    return value


def resolve_loss(value: "float | list[tuple[int, float]] | dict[str, Any] | None") -> dict[str, Any]:
    """The resolved link keys of a loss setting: ``loss_rate`` from 0s, the later ``loss_changes``
    and the ``loss_model`` (Bernoulli with those, or Gilbert-Elliott with neither)."""
    bernoulli = {"kind": "bernoulli"}
    if value is None:
        return {"loss_rate": 0.0, "loss_changes": [], "loss_model": bernoulli}
    if isinstance(value, dict):
        return {"loss_rate": 0.0, "loss_changes": [], "loss_model": dict(value)}
    if isinstance(value, list):
        return {"loss_rate": value[0][1], "loss_changes": [{"at_ns": at, "loss_rate": p} for at, p in value[1:]], "loss_model": bernoulli}
    return {"loss_rate": value, "loss_changes": [], "loss_model": bernoulli}


def _note_link(keys: KeyScope, rate: str, delay: str, queue: str, loss: str, value: Any) -> None:
    """Notes a resolved link (in ``keys``, its scope) as coming from the user's keys ``rate``,
    ``delay``, ``queue`` (a table whose keys are the user's own but ``mean_pkt_bytes``) and ``loss``
    (change k of ``loss_changes`` is step k + 1 of the file's schedule ``value``)."""
    keys.note("rate_bps", rate)
    keys.note("delay_ns", delay)
    _note_queue(keys, "queue", queue)
    keys.note("loss_rate", loss)
    keys.note("loss_changes", loss)
    keys.note("loss_model", loss, same_below=True)
    for k in range(len(value) - 1 if isinstance(value, list) else 0):
        keys.note(f"loss_changes[{k}]", f"{loss}[{k + 1}]")


def _note_queue(keys: KeyScope, resolved: str, user_key: str) -> None:
    keys.note(resolved, user_key, same_below=True)
    keys.note(f"{resolved}.mean_pkt_bytes", f"{user_key}.mean_pkt_size")


# Random loss on a link: constant, a step schedule over time, or the Gilbert-Elliott model.
Loss = Annotated[Union[float, list[tuple[int, float]], dict[str, Any]], BeforeValidator(_parse_loss), PlainSerializer(_format_loss, when_used="json")]
OptLoss = Annotated[
    Union[float, list[tuple[int, float]], dict[str, Any], None],
    BeforeValidator(_optional(_parse_loss)),
    PlainSerializer(_optional_fmt(_format_loss), when_used="json"),
]


def _positive(value: int) -> int:
    if value <= 0:
        raise ScenarioError("", "must be > 0")
    return value


class _Section(BaseModel):
    """A table of the scenario file: unknown keys and loose types are errors, values immutable."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        allow_inf_nan=False,
    )

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        # pydantic's extra="forbid" says only "Extra inputs are not permitted"; name the known keys.
        if isinstance(data, dict):
            known = [info.alias or name for name, info in cls.model_fields.items()]
            for key in data:
                if key not in known:
                    close = difflib.get_close_matches(str(key), known, n=1)
                    hint = f"did you mean '{close[0]}'? " if close else ""
                    raise ScenarioError(str(key), f"unknown key ({hint}known: {', '.join(known)})")
        return data


# ---------------------------------------------------------------------------------------------------
# [run]


class Run(_Section):
    """``[run]``: how long, how often to sample, which seed, which window the summary covers."""

    duration_ns: Time = Field(alias="duration")
    sample_interval_ns: Time = Field(default=DEFAULT_SAMPLE_INTERVAL_NS, alias="sample_interval")
    seed: StrictInt = Field(default=1, ge=0, lt=2**64)
    measure_ns: Union[list[Time], None] = Field(default=None, alias="measure", min_length=2, max_length=2)

    _check_duration = field_validator("duration_ns", "sample_interval_ns")(_positive)

    @property
    def measure_start_ns(self) -> int:
        return 0 if self.measure_ns is None else self.measure_ns[0]

    @property
    def measure_end_ns(self) -> int:
        return self.duration_ns if self.measure_ns is None else self.measure_ns[1]


# ---------------------------------------------------------------------------------------------------
# [topology]


class DropTail(_Section):
    """A FIFO that drops arrivals once ``limit`` (packets or bytes) is reached.

    The queue is a table with a ``kind``; the ``Queue`` union holds drop-tail and :class:`Red`, and
    further disciplines join it without changing the file format. A bare string is shorthand for
    drop-tail.
    """

    kind: Literal["droptail"] = "droptail"
    limit: QueueLimit

    @property
    def limit_pkts(self) -> int | None:
        return self.limit[0] if self.limit[1] == "pkts" else None

    @property
    def limit_bytes(self) -> int | None:
        return self.limit[0] if self.limit[1] == "bytes" else None

    def resolve(self, bdp_pkts: float | None = None) -> dict[str, Any]:
        return {"kind": self.kind, "limit": {self.limit[1]: self.limit[0]}}


# RED (docs/red.md). Defaults: ns-2's classic Queue/RED constants (thresh_ 5, maxthresh_ 15 packets,
# q_weight_ 0.002, linterm_ 10, wait_ true, mean_pktsize_ 500) with gentle_ true as in ns-2.35.
RED_DEFAULT_MIN_TH_PKTS = 5
RED_DEFAULT_MAX_TH_PKTS = 15
RED_DEFAULT_MAX_P = 0.1
RED_DEFAULT_W_Q = 0.002
RED_DEFAULT_MEAN_PKT_BYTES = 500
BDP_UNIT = "bdp"


def _parse_bdp_number(text: str, what: str) -> float:
    number = text.strip()[: -len(BDP_UNIT)].strip()
    try:
        value = float(number)
    except ValueError:
        raise ScenarioError("", f"'{text}' is not a {what}: write a number of bandwidth-delay products, e.g. '1bdp'") from None
    if not math.isfinite(value) or value <= 0:
        raise ScenarioError("", f"'{text}' must be a positive number of bandwidth-delay products, e.g. '1bdp'")
    return value


def _parse_red_limit(value: Any) -> Any:
    """``'100pkt'``, ``'150kB'`` or ``'1bdp'`` (bandwidth-delay products of the bottleneck, in packets)."""
    if isinstance(value, tuple):
        return value
    if isinstance(value, str) and value.strip().endswith(BDP_UNIT):
        return (_parse_bdp_number(value, "queue limit"), BDP_UNIT)
    try:
        return units.parse_queue_limit(value)
    except ScenarioError as e:
        raise ScenarioError("", f"{e.reason} (or a bandwidth-delay product, e.g. '1bdp')") from None


def _format_red_limit(value: tuple[Any, str]) -> str:
    number, unit = value
    if unit == BDP_UNIT:
        return f"{number!r}".removesuffix(".0") + BDP_UNIT
    return units.format_queue_limit(number, unit)


def _parse_threshold(value: Any) -> Any:
    """A percent of the limit (``'20%'``) or a quantity in the limit's unit (``'5pkt'``, ``'7.5kB'``)."""
    if isinstance(value, tuple) or value is None:
        return value
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            pct = float(value.strip()[:-1])
        except ValueError:
            raise ScenarioError("", f"'{value}' is not a percent of the limit, e.g. '20%'") from None
        if not math.isfinite(pct) or not 0 < pct <= 100:
            raise ScenarioError("", f"'{value}' must be a percent of the limit in (0%, 100%]")
        return (pct, "%")
    if isinstance(value, str) or isinstance(value, int):
        try:
            return units.parse_queue_limit(value)
        except ScenarioError as e:
            raise ScenarioError("", f"{e.reason} (or a percent of the limit, e.g. '20%')") from None
    raise ScenarioError("", f"must be a percent of the limit ('20%') or a queue size ('5pkt'), got {value!r}")


def _format_threshold(value: tuple[Any, str] | None) -> Any:
    if value is None:
        return None
    number, unit = value
    if unit == "%":
        return f"{number!r}".removesuffix(".0") + "%"
    return units.format_queue_limit(number, unit)


RedLimit = Annotated[
    tuple[Union[int, float], Literal["pkts", "bytes", "bdp"]],
    BeforeValidator(_parse_red_limit),
    PlainSerializer(_format_red_limit, when_used="json"),
]
Threshold = Annotated[
    Union[tuple[Union[int, float], Literal["pkts", "bytes", "%"]], None],
    BeforeValidator(_parse_threshold),
    PlainSerializer(_format_threshold, when_used="json"),
]


def _open_probability(value: float) -> float:
    if value <= 0:
        raise ScenarioError("", "must be in (0, 1]")
    return value


class Red(_Section):
    """RED (Floyd & Jacobson 1993) as ns-2's ``Queue/RED``; docs/red.md.

    ``limit`` is ``"100pkt"``, ``"150kB"`` or ``"1bdp"`` (bandwidth-delay products of the bottleneck,
    in packets of mss + header); the queue is measured in packets unless the limit is in bytes.
    ``min_th`` / ``max_th`` are percents of the limit (``"20%"``) or sizes in the limit's unit.
    The binomial paper's setup: ``{ kind = "red", limit = "1bdp", min_th = "20%", max_th = "80%" }``.
    """

    kind: Literal["red"]
    limit: RedLimit
    min_th: Threshold = None
    max_th: Threshold = None
    max_p: Probability = RED_DEFAULT_MAX_P
    w_q: Probability = RED_DEFAULT_W_Q
    gentle: StrictBool = True
    wait: StrictBool = True
    mean_pkt_bytes: Size = Field(default=RED_DEFAULT_MEAN_PKT_BYTES, alias="mean_pkt_size")

    _check_p = field_validator("max_p", "w_q")(_open_probability)
    _check_mean = field_validator("mean_pkt_bytes")(_positive)

    @property
    def in_bytes(self) -> bool:
        return self.limit[1] == "bytes"

    @property
    def limit_pkts(self) -> int | None:
        return self.limit[0] if self.limit[1] == "pkts" else None

    @property
    def limit_bytes(self) -> int | None:
        return self.limit[0] if self.limit[1] == "bytes" else None

    @property
    def needs_bdp(self) -> bool:
        return self.limit[1] == BDP_UNIT

    @model_validator(mode="after")
    def _check_red(self) -> "Red":
        unit = "bytes" if self.in_bytes else "pkts"
        for key in ("min_th", "max_th"):
            th = getattr(self, key)
            if th is not None and th[1] not in ("%", unit):
                want = "bytes ('7.5kB')" if unit == "bytes" else "packets ('5pkt')"
                raise ScenarioError(key, f"the limit is in {'bytes' if unit == 'bytes' else 'packets'}: give {key} in {want} or as a percent of the limit ('20%')")
            if th is not None and th[0] <= 0:
                raise ScenarioError(key, "must be > 0")
        if self.limit[0] <= 0 or (not self.needs_bdp and self.limit[0] < 1):
            raise ScenarioError("limit", "must hold at least 1 packet")
        if not self.needs_bdp:
            self.thresholds(self.limit[0])
        elif self.min_th is not None and self.max_th is not None and self.min_th[1] == self.max_th[1] == "%":
            self._check_order(self.min_th[0], self.max_th[0], "%")
        return self

    @staticmethod
    def _check_order(min_th: float, max_th: float, unit: str) -> None:
        if not min_th < max_th:
            raise ScenarioError("max_th", f"{max_th:g}{unit} must be above min_th ({min_th:g}{unit})")

    def resolved_limit(self, bdp_pkts: float | None) -> int:
        """The limit in its queue unit (packets for ``bdp``: rounded, at least 1)."""
        if not self.needs_bdp:
            return self.limit[0]
        if bdp_pkts is None:
            raise ScenarioError("limit", "a 'bdp' limit is defined for the dumbbell bottleneck queue only")
        return max(1, round(self.limit[0] * bdp_pkts))

    def thresholds(self, limit: int) -> tuple[float, float]:
        """(min_th, max_th) in the queue unit for a resolved ``limit``; errors name the key."""
        unit = "B" if self.in_bytes else "pkt"
        scale = self.mean_pkt_bytes if self.in_bytes else 1
        values = []
        for key, th, default in (("min_th", self.min_th, RED_DEFAULT_MIN_TH_PKTS), ("max_th", self.max_th, RED_DEFAULT_MAX_TH_PKTS)):
            if th is None:
                values.append(float(default * scale))
            elif th[1] == "%":
                values.append(round(th[0] / 100 * limit, 9))  # no float noise in meta.json
            else:
                values.append(float(th[0]))
        min_th, max_th = values
        self._check_order(min_th, max_th, unit)
        if max_th > limit:
            default = " (default)" if self.max_th is None else ""
            raise ScenarioError("max_th", f"{max_th:g}{unit}{default} is above the limit ({limit}{unit})")
        return min_th, max_th

    def resolve(self, bdp_pkts: float | None = None) -> dict[str, Any]:
        limit = self.resolved_limit(bdp_pkts)
        min_th, max_th = self.thresholds(limit)
        return {
            "kind": "red",
            "limit": {"bytes" if self.in_bytes else "pkts": limit},
            "min_th": min_th,
            "max_th": max_th,
            "max_p": self.max_p,
            "w_q": self.w_q,
            "gentle": self.gentle,
            "wait": self.wait,
            "mean_pkt_bytes": self.mean_pkt_bytes,
        }


def _queue_shorthand(value: Any) -> Any:
    if isinstance(value, str):
        units.parse_queue_limit(value)  # a unit error here is reported at `queue`, the key the user wrote
        return {"kind": "droptail", "limit": value}
    return value


def _queue_to_toml(queue: "DropTail | Red | None") -> Any:
    if queue is None:
        return None
    if isinstance(queue, Red):
        return queue.model_dump(mode="json", by_alias=True, exclude_none=True)
    return units.format_queue_limit(*queue.limit)  # drop-tail is written in its shorthand


def _kind_or(default: str) -> Callable[[Any], str]:
    """Discriminator of a table with a ``kind`` key that may be left out (then ``default``)."""

    def kind(value: Any) -> str:
        if isinstance(value, dict):
            return str(value.get("kind", default))
        return getattr(value, "kind", default)

    return kind


_AnyQueue = Annotated[
    Union[Annotated[DropTail, Tag("droptail")], Annotated[Red, Tag("red")]],
    Discriminator(_kind_or("droptail")),
]
Queue = Annotated[_AnyQueue, BeforeValidator(_queue_shorthand)]
OptQueue = Annotated[Union[_AnyQueue, None], BeforeValidator(_queue_shorthand)]


class Topology(_Section):
    """``[topology]``: a dumbbell with one bottleneck; each flow gets its own access links."""

    kind: Literal["dumbbell"] = "dumbbell"
    bottleneck_rate_bps: Rate = Field(alias="bottleneck_rate")
    bottleneck_delay_ns: Time = Field(alias="bottleneck_delay")
    queue: Queue
    loss_rate: Loss = Field(default=0.0, alias="loss")
    access_rate_bps: Rate = Field(default=DEFAULT_ACCESS_RATE_BPS, alias="access_rate")
    access_queue: OptQueue = None
    reverse_rate_bps: OptRate = Field(default=None, alias="reverse_rate")
    reverse_delay_ns: OptTime = Field(default=None, alias="reverse_delay")
    reverse_queue: OptQueue = Field(default=None, alias="reverse_queue")
    reverse_loss_rate: OptLoss = Field(default=None, alias="reverse_loss")

    _check_rates = field_validator("bottleneck_rate_bps", "access_rate_bps")(_positive)

    @field_validator("reverse_rate_bps")
    @classmethod
    def _check_reverse_rate(cls, value: int | None) -> int | None:
        return None if value is None else _positive(value)

    @field_serializer("queue", "reverse_queue", "access_queue", when_used="json")
    def _dump_queue(self, queue: Any) -> Any:
        return _queue_to_toml(queue)

    @model_validator(mode="after")
    def _check_queues(self) -> "Topology":
        for key, queue in self.queues():
            if queue.limit[0] < 1 and not getattr(queue, "needs_bdp", False):
                raise ScenarioError(key, "must hold at least 1 packet")
        for key in ("reverse_queue", "access_queue"):
            if getattr(getattr(self, key), "needs_bdp", False):
                raise ScenarioError(f"{key}.limit", "a 'bdp' limit is defined for the bottleneck queue only")
        return self

    def bdp_pkts(self, rtt_ns: float, packet_bytes: int) -> float:
        """Bandwidth-delay product of the bottleneck in packets: rate x RTT / packet size."""
        return self.bottleneck_rate_bps * rtt_ns / 1e9 / (8 * packet_bytes)

    def queues(self) -> list[tuple[str, Any]]:
        """(key, queue) of every configured queue, for checks that span the scenario."""
        configured = (("queue", self.queue), ("reverse_queue", self.reverse_queue), ("access_queue", self.access_queue))
        return [(k, q) for k, q in configured if q is not None]

    @property
    def hop_count(self) -> None:
        return None

    def resolve(self, bdp_pkts: float | None = None, keys: KeyScope | None = None) -> dict[str, Any]:
        """The resolved topology; with ``keys``, each resolved path noted with the key behind it."""
        reverse_queue = self.reverse_queue or DropTail(limit=f"{DEFAULT_REVERSE_QUEUE_PKTS}pkt")
        if keys is not None:
            keys.note("kind", "topology.kind")
            keys.note("bottleneck", "topology")
            keys.note("reverse", "topology")
            _note_link(keys.below("bottleneck"), "topology.bottleneck_rate", "topology.bottleneck_delay", "topology.queue",
                       "topology.loss", self.loss_rate)
            _note_link(keys.below("reverse"), "topology.reverse_rate", "topology.reverse_delay", "topology.reverse_queue",
                       "topology.reverse_loss", self.reverse_loss_rate)
            _note_access(keys)
        return {
            "kind": self.kind,
            "bottleneck": {
                "rate_bps": self.bottleneck_rate_bps,
                "delay_ns": self.bottleneck_delay_ns,
                "queue": self.queue.resolve(bdp_pkts),
                **resolve_loss(self.loss_rate),
            },
            "reverse": {
                "rate_bps": self.bottleneck_rate_bps if self.reverse_rate_bps is None else self.reverse_rate_bps,
                "delay_ns": self.bottleneck_delay_ns if self.reverse_delay_ns is None else self.reverse_delay_ns,
                "queue": reverse_queue.resolve(),
                **resolve_loss(self.reverse_loss_rate),
            },
            "access_rate_bps": self.access_rate_bps,
            **_resolve_access_queues(self.access_queue),
        }


def _note_access(keys: KeyScope) -> None:
    keys.note("access_rate_bps", "topology.access_rate")
    _note_queue(keys, "access_queue", "topology.access_queue")
    _note_queue(keys, "reverse_access_queue", "topology.access_queue")


def _resolve_access_queues(queue: "DropTail | Red | None") -> dict[str, Any]:
    """Both directions of every access link get ``access_queue`` (default: txqueuelen, 1000 packets)."""
    queue = queue or DropTail(limit=f"{DEFAULT_ACCESS_QUEUE_PKTS}pkt")
    return {"access_queue": queue.resolve(), "reverse_access_queue": queue.resolve()}


def _check_access_queue(queue: "DropTail | Red | None") -> None:
    if queue is not None and queue.limit[0] < 1:
        raise ScenarioError("access_queue", "must hold at least 1 packet")
    if getattr(queue, "needs_bdp", False):
        raise ScenarioError("access_queue.limit", "a 'bdp' limit is defined for the dumbbell bottleneck queue only")


class Hop(_Section):
    """One hop of a parking lot: ``{ rate = "10Mbit", delay = "10ms", queue = "50pkt", loss = 0.0 }``."""

    rate_bps: Rate = Field(alias="rate")
    delay_ns: Time = Field(alias="delay")
    queue: Queue
    loss_rate: Loss = Field(default=0.0, alias="loss")

    _check_rate = field_validator("rate_bps")(_positive)

    @field_serializer("queue", when_used="json")
    def _dump_queue(self, queue: Any) -> Any:
        return _queue_to_toml(queue)

    @model_validator(mode="after")
    def _check_bdp(self) -> "Hop":
        if getattr(self.queue, "needs_bdp", False):
            raise ScenarioError("queue.limit", "a 'bdp' limit is defined for the dumbbell bottleneck queue only")
        return self

    def resolve(self) -> dict[str, Any]:
        return {"rate_bps": self.rate_bps, "delay_ns": self.delay_ns, "queue": self.queue.resolve(), **resolve_loss(self.loss_rate)}

    def resolve_reverse(self) -> dict[str, Any]:
        """The uncongested reverse (ACK) hop: this hop's rate and delay, a large queue, no loss."""
        queue = DropTail(limit=f"{DEFAULT_REVERSE_QUEUE_PKTS}pkt").resolve()
        return {"rate_bps": self.rate_bps, "delay_ns": self.delay_ns, "queue": queue, **resolve_loss(None)}


class ParkingLot(_Section):
    """``[topology]`` with ``kind = "parking_lot"``: hops in series (router k to router k + 1); a flow
    crosses hops ``path = [first, last]`` (all by default), so cross traffic can enter and leave at
    every hop. ACKs return over uncongested reverse hops."""

    kind: Literal["parking_lot"]
    hops: list[Hop] = Field(min_length=1)
    access_rate_bps: Rate = Field(default=DEFAULT_ACCESS_RATE_BPS, alias="access_rate")
    access_queue: OptQueue = None

    _check_rates = field_validator("access_rate_bps")(_positive)

    @field_serializer("access_queue", when_used="json")
    def _dump_queue(self, queue: Any) -> Any:
        return _queue_to_toml(queue)

    @model_validator(mode="after")
    def _check_access(self) -> "ParkingLot":
        _check_access_queue(self.access_queue)
        return self

    def queues(self) -> list[tuple[str, Any]]:
        hops = [(f"hops[{k}].queue", h.queue) for k, h in enumerate(self.hops)]
        return hops + ([("access_queue", self.access_queue)] if self.access_queue is not None else [])

    @property
    def hop_count(self) -> int:
        return len(self.hops)

    def resolve(self, bdp_pkts: float | None = None, keys: KeyScope | None = None) -> dict[str, Any]:
        """The resolved topology; with ``keys``, each resolved path noted with the key behind it. A
        reverse hop is derived from its forward hop, whose keys name it."""
        if keys is not None:
            keys.note("kind", "topology.kind")
            keys.note("hops", "topology.hops")
            keys.note("reverse_hops", "topology.hops")
            for k, hop in enumerate(self.hops):
                user = f"topology.hops[{k}]"
                keys.note(f"hops[{k}]", user)
                keys.note(f"reverse_hops[{k}]", user)
                _note_link(keys.below(f"hops[{k}]"), f"{user}.rate", f"{user}.delay", f"{user}.queue", f"{user}.loss", hop.loss_rate)
                _note_link(keys.below(f"reverse_hops[{k}]"), f"{user}.rate", f"{user}.delay", f"{user}.queue", f"{user}.loss", None)
            _note_access(keys)
        return {
            "kind": "parking_lot",
            "hops": [h.resolve() for h in self.hops],
            "reverse_hops": [h.resolve_reverse() for h in self.hops],
            "access_rate_bps": self.access_rate_bps,
            **_resolve_access_queues(self.access_queue),
        }


AnyTopology = Annotated[
    Union[Annotated[Topology, Tag("dumbbell")], Annotated[ParkingLot, Tag("parking_lot")]],
    Discriminator(_kind_or("dumbbell")),
]


# ---------------------------------------------------------------------------------------------------
# [tcp] and [flows.tcp]


SSTHRESH_UNLIMITED = "inf"


def _parse_ssthresh(value: Any) -> Any:
    """``"25pkt"`` (segments of the flow's mss), ``"36kB"`` (bytes) or ``"inf"`` (RFC 5681's
    arbitrarily high initial ssthresh, the default)."""
    if value == SSTHRESH_UNLIMITED or isinstance(value, tuple):
        return value
    try:
        return units.parse_queue_limit(value)
    except ScenarioError as e:
        raise ScenarioError("", f"{e.reason} (a number of segments such as '25pkt', a size, or 'inf')") from None


def _format_ssthresh(value: Any) -> str:
    return value if value == SSTHRESH_UNLIMITED else units.format_queue_limit(*value)


InitialSsthresh = Annotated[
    Union[tuple[int, Literal["pkts", "bytes"]], Literal["inf"]],
    BeforeValidator(_parse_ssthresh),
    PlainSerializer(_format_ssthresh, when_used="json"),
]


_BASE = PROFILES[DEFAULT_PROFILE]


class Tcp(_Section):
    """TCP machine settings. ``[tcp]`` sets them for every flow; ``[flows.tcp]`` overrides some keys.

    ``profile`` names the bundle the other keys start from (``freebsd9``, ``linux``, ``ns2``,
    ``ns3``; see :mod:`ccsim.profiles` and docs/profiles.md); keys written in the table override
    it. Field names are the keys of the resolved JSON; the aliases are the keys users write. The
    defaults are the ``freebsd9`` bundle.
    """

    profile: StrictStr = DEFAULT_PROFILE
    mss_bytes: Size = Field(default=_BASE["mss_bytes"], alias="mss")
    header_bytes: Size = Field(default=_BASE["header_bytes"], alias="header")
    initial_window_pkts: StrictInt = Field(default=_BASE["initial_window_pkts"], alias="initial_window", ge=1)
    # Where the window starts relative to ssthresh (crates/ccsim-core/src/tcp/startup.rs):
    # initial_ssthresh "inf" (RFC 5681), a fixed value, or slow_start = false (start in congestion
    # avoidance at the initial window). An experiment's control, not a platform's: no profile sets
    # it (each platform starts with an unlimited ssthresh; docs/profiles.md).
    initial_ssthresh: InitialSsthresh = SSTHRESH_UNLIMITED
    slow_start: StrictBool = True
    sack: StrictBool = _BASE["sack"]
    delayed_ack: StrictBool = _BASE["delayed_ack"]
    delayed_ack_timeout_ns: Time = Field(default=_BASE["delayed_ack_timeout_ns"], alias="delayed_ack_timeout")
    abc_limit: StrictInt = Field(default=_BASE["abc_limit"], alias="abc", ge=0)
    min_rto_ns: Time = Field(default=_BASE["min_rto_ns"], alias="min_rto")
    initial_rto_ns: Time = Field(default=_BASE["initial_rto_ns"], alias="initial_rto")
    max_rto_ns: Time = Field(default=_BASE["max_rto_ns"], alias="max_rto")
    rwnd_bytes: Size = Field(default=_BASE["rwnd_bytes"], alias="rwnd")
    dupack_threshold: StrictInt = Field(default=_BASE["dupack_threshold"], ge=1)
    limited_transmit: StrictBool = _BASE["limited_transmit"]
    rto_estimator: Literal["rfc6298", "ns2", "linux", "freebsd"] = _BASE["rto_estimator"]
    timer_granularity_ns: Time = Field(default=_BASE["timer_granularity_ns"], alias="timer_granularity")
    max_burst_pkts: StrictInt = Field(default=_BASE["max_burst_pkts"], alias="max_burst", ge=0, lt=2**32)
    ssthresh_whole_packets: StrictBool = _BASE["ssthresh_whole_packets"]
    sack_recovery: Literal["rfc6675", "ns2_sack1"] = _BASE["sack_recovery"]
    # Linux stack rules (docs/linux-tcp.md); the freebsd9 values are the FreeBSD-9-like machine.
    slow_start_rule: Literal["freebsd", "linux"] = _BASE["slow_start_rule"]
    recovery_window: Literal["rfc6675", "prr"] = _BASE["recovery_window"]
    delayed_ack_rule: Literal["rfc5681", "linux"] = _BASE["delayed_ack_rule"]
    loss_detection: Literal["dupack", "rack_tlp"] = _BASE["loss_detection"]
    # NewReno recovery (SACK off): "every" partial ACK restarts the RTO timer (FreeBSD, Linux) or
    # only the "first" (RFC 6582's impatient variant, ns-2.35's default).
    partial_ack_rto: Literal["first", "every"] = _BASE["partial_ack_rto"]
    # Host send jitter: each segment leaves the host U[0, send_jitter] after TCP sent it, in order
    # (interrupt and scheduling latency; breaks the phase lock of equal-rate paths, docs/profiles.md).
    send_jitter_ns: Time = Field(default=_BASE["send_jitter_ns"], alias="send_jitter")

    _check_positive = field_validator(
        "mss_bytes", "delayed_ack_timeout_ns", "min_rto_ns", "initial_rto_ns", "max_rto_ns", "rwnd_bytes",
        "timer_granularity_ns",
    )(_positive)

    @model_validator(mode="after")
    def _check_start(self) -> "Tcp":
        if not self.slow_start and self.initial_ssthresh != SSTHRESH_UNLIMITED:
            raise ScenarioError(
                "slow_start",
                f"slow_start = false starts in congestion avoidance (ssthresh below the initial window); "
                f"it cannot be combined with initial_ssthresh = {_format_ssthresh(self.initial_ssthresh)!r}",
            )
        if self.initial_ssthresh != SSTHRESH_UNLIMITED and self.initial_ssthresh[0] <= 0:
            raise ScenarioError("initial_ssthresh", "must be > 0")
        return self

    @field_validator("profile")
    @classmethod
    def _check_profile(cls, name: str) -> str:
        if name not in PROFILES:
            raise ScenarioError("", f"unknown profile '{name}' (known: {', '.join(PROFILE_NAMES)})")
        return name

    @model_validator(mode="after")
    def _expand_profile(self) -> "Tcp":
        # The keys not written take the profile's values; model_fields_set keeps saying which were
        # written (what a flow's table overrides, what to_toml writes).
        for name, value in PROFILES[self.profile].items():
            if name not in self.model_fields_set:
                object.__setattr__(self, name, value)
        return self

    @property
    def sets_profile(self) -> bool:
        """This table names a profile explicitly (a flow's then replaces the scenario's)."""
        return "profile" in self.model_fields_set

    def overridden(self) -> dict[str, Any]:
        """The knobs this table sets explicitly (field name -> canonical value), profile aside.
        ``slow_start`` and ``initial_ssthresh`` both say where the window starts: a table that sets
        one of them also resets the other, so a flow's setting replaces the ``[tcp]`` one."""
        keys = dict.fromkeys(name for name in self.model_fields_set if name != "profile")
        if "slow_start" in keys or "initial_ssthresh" in keys:
            keys.update(dict.fromkeys(("slow_start", "initial_ssthresh")))
        return {name: getattr(self, name) for name in keys}

    def resolved_initial_ssthresh(self) -> dict[str, Any]:
        if not self.slow_start:
            return {"kind": "below_initial_window"}
        if self.initial_ssthresh == SSTHRESH_UNLIMITED:
            return {"kind": "unlimited"}
        value, unit = self.initial_ssthresh
        return {"kind": "bytes", "bytes": value * self.mss_bytes if unit == "pkts" else value}

    def resolve(self) -> dict[str, Any]:
        # slow_start is folded into initial_ssthresh (one concept for the engine).
        values = self.model_dump(by_alias=False, exclude={"slow_start"})
        values["initial_ssthresh"] = self.resolved_initial_ssthresh()
        return values


# ---------------------------------------------------------------------------------------------------
# [[flows]]


def _hop_pair(value: Any) -> Any:
    """``path = [first, last]``: TOML gives a list."""
    if isinstance(value, list):
        if len(value) != 2:
            raise ScenarioError("", "needs [first, last] hop numbers")
        return tuple(value)
    return value


def _per_second(value: Any) -> float:
    """A plain positive number (TOML may give an integer)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ScenarioError("", f"must be a number > 0 (got {value!r})")
    return float(value)


WEB_KEYS = ("arrival_rate", "size_mean_bytes", "size_shape")
STREAM_KEYS = ("rate_bps", "payload_bytes", "stream_header_bytes", "interval_ns", "mean_on_ns", "mean_off_ns")


class Flow(_Section):
    """One ``[[flows]]`` entry: ``count`` identical flows. ``kind = "tcp"`` (default) is a bulk (or
    finite, with ``bytes``) TCP flow driven by ``algorithm``; ``"cbr"`` and ``"voip"`` are UDP-like
    streams whose receiver measures one-way delay, jitter (RFC 3550) and loss."""

    name: Union[StrictStr, None] = None
    kind: Literal["tcp", "cbr", "voip", "web"] = "tcp"
    algorithm: Union[StrictStr, None] = None
    count: StrictInt = Field(default=1, ge=1, le=MAX_FLOW_COUNT)
    # A fixed time, or { uniform = [low, high] }: drawn per flow from the run's seed (sim/start.rs).
    start_ns: Delay = Field(default=0, alias="start")
    stop_ns: OptTime = Field(default=None, alias="stop")
    # On/off schedule: active in each [start, stop) (instead of start/stop).
    active_ns: Intervals = Field(default=None, alias="active")
    transfer_bytes: OptSize = Field(default=None, alias="bytes")
    # The rate at which a TCP flow's application writes payload (sim/app_rate.rs); None: backlogged.
    rate_limit_bps: OptRate = Field(default=None, alias="rate_limit")
    access_delay_ns: Delay = Field(default=0, alias="access_delay")
    direction: Literal["forward", "reverse"] = "forward"
    path: Annotated[Union[tuple[StrictInt, StrictInt], None], BeforeValidator(_hop_pair)] = None
    params: dict[StrictStr, Any] = Field(default_factory=dict)
    tcp: Tcp = Field(default_factory=Tcp)
    # Streams.
    rate_bps: OptRate = Field(default=None, alias="rate")
    payload_bytes: OptSize = Field(default=None, alias="payload")
    stream_header_bytes: OptSize = Field(default=None, alias="header")
    interval_ns: OptTime = Field(default=None, alias="interval")
    talk_spurts: StrictBool = False
    mean_on_ns: OptTime = Field(default=None, alias="mean_on")
    mean_off_ns: OptTime = Field(default=None, alias="mean_off")
    # Web-like background: Poisson arrivals of finite TCP transfers with Pareto sizes.
    arrival_rate: Annotated[Union[float, None], BeforeValidator(_optional(_per_second))] = None
    size_mean_bytes: OptSize = Field(default=None, alias="size_mean")
    size_shape: Annotated[Union[float, None], BeforeValidator(_optional(_per_second))] = None

    @field_validator("algorithm")
    @classmethod
    def _check_algorithm(cls, name: str | None) -> str | None:
        known = known_algorithms()
        if name is not None and known is not None and name not in known:
            hint = algorithm_hint(name, known)
            raise ScenarioError("", f"unknown algorithm '{name}'{'; ' + hint if hint else ' '}(known: {', '.join(known)})")
        return name

    @model_validator(mode="after")
    def _check_kind(self) -> "Flow":
        if self.rate_limit_bps is not None and self.kind != "tcp":
            raise ScenarioError("rate_limit", f"only for TCP flows (kind = \"tcp\"), not {self.kind}: a stream has its own rate")
        if self.rate_limit_bps is not None and self.rate_limit_bps <= 0:
            raise ScenarioError("rate_limit", "must be > 0")
        if self.kind != "web":
            for key in WEB_KEYS:
                if getattr(self, key) is not None:
                    raise ScenarioError(_alias(Flow, key), f"only for web traffic (kind = \"web\"), not {self.kind}")
        if self.kind == "web":
            if self.algorithm is None:
                raise ScenarioError("algorithm", "missing: web transfers need an algorithm")
            if self.arrival_rate is None:
                raise ScenarioError("arrival_rate", "missing: transfers started per second, e.g. arrival_rate = 2.0")
            if self.size_mean_bytes is None or self.size_mean_bytes <= 0:
                raise ScenarioError("size_mean", "missing: the mean transfer size, e.g. size_mean = \"50kB\"")
            if self.size_shape is not None and self.size_shape <= 1.0:
                raise ScenarioError("size_shape", "the Pareto shape must be > 1 (a finite mean)")
            if self.transfer_bytes is not None:
                raise ScenarioError("bytes", "web transfer sizes are drawn from size_mean and size_shape")
            for key in STREAM_KEYS:
                if getattr(self, key) is not None:
                    raise ScenarioError(_alias(Flow, key), "only for streams (kind = \"cbr\" or \"voip\")")
            return self
        if self.kind == "tcp":
            if self.algorithm is None:
                raise ScenarioError("algorithm", "missing: a TCP flow needs an algorithm (`ccsim list` shows them)")
            for key in STREAM_KEYS:
                if getattr(self, key) is not None:
                    raise ScenarioError(_alias(Flow, key), f"only for streams (kind = \"cbr\" or \"voip\"), not {self.kind}")
            if self.talk_spurts:
                raise ScenarioError("talk_spurts", "only for kind = \"voip\"")
            return self
        if self.algorithm is not None or self.params:
            raise ScenarioError("algorithm", f"a {self.kind} stream has no congestion control")
        if self.transfer_bytes is not None:
            raise ScenarioError("bytes", "a stream has no transfer size; use start/stop or active")
        if self.kind == "cbr" and self.rate_bps is None:
            raise ScenarioError("rate", "a CBR stream needs a rate, e.g. rate = \"4Mbit\"")
        for key in ("rate_bps", "payload_bytes", "interval_ns", "mean_on_ns", "mean_off_ns"):
            value = getattr(self, key)
            if value is not None and value <= 0:
                raise ScenarioError(_alias(Flow, key), "must be > 0")
        if self.kind == "cbr" and (self.interval_ns is not None or self.talk_spurts):
            raise ScenarioError("interval", "a CBR stream's packet interval follows from rate and payload")
        return self

    @field_validator("params")
    @classmethod
    def _check_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        # Names and ranges are the algorithm's business (the engine checks them); only the JSON
        # types it can receive are checked here.
        for key, value in params.items():
            if not isinstance(value, (bool, int, float, str)):
                raise ScenarioError(key, f"must be a number, true/false or a string (got {type(value).__name__})")
            if isinstance(value, float) and not math.isfinite(value):
                raise ScenarioError(key, f"must be a finite number (got {value})")
        return params

    @field_validator("transfer_bytes")
    @classmethod
    def _check_bytes(cls, value: int | None) -> int | None:
        return None if value is None else _positive(value)

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str | None) -> str | None:
        if name is not None and (not name or name != name.strip()):
            raise ScenarioError("", f"{name!r}: must be non-empty without leading or trailing spaces")
        return name

    @field_serializer("tcp", when_used="json")
    def _dump_overrides_only(self, tcp: Tcp) -> dict[str, Any]:
        return tcp.model_dump(mode="json", by_alias=True, exclude_unset=True)


# ---------------------------------------------------------------------------------------------------
# The scenario


# Keys of the resolved dumbbell links -> keys of [topology].
_DUMBBELL_KEYS = {
    "bottleneck": {"rate_bps": "bottleneck_rate", "delay_ns": "bottleneck_delay", "loss_rate": "loss", "queue": "queue"},
    "reverse": {"rate_bps": "reverse_rate", "delay_ns": "reverse_delay", "loss_rate": "reverse_loss", "queue": "reverse_queue"},
}


def _copy_tree(value: Any) -> Any:
    """A copy of a tree of dicts and lists (each flow of a ``count`` gets its own): a third of the
    time of ``copy.deepcopy``, which keeps a memo of everything it copies."""
    if isinstance(value, dict):
        return {k: _copy_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_tree(v) for v in value]
    return value


class Scenario(_Section):
    """A whole scenario file. Build with :func:`load_scenario`, ``from_toml`` or ``from_dict`` (these
    raise ScenarioError and ask the engine too; plain ``model_validate`` raises pydantic's
    ValidationError and checks the file's rules only)."""

    run: Run
    topology: AnyTopology
    tcp: Tcp = Field(default_factory=Tcp)
    flows: list[Flow] = Field(min_length=1)

    @field_serializer("tcp", when_used="json")
    def _dump_profile_and_keys_set(self, tcp: Tcp) -> dict[str, Any]:
        # The profile and the keys written: a flow naming another profile still gets exactly these
        # keys on top of it after a round trip (writing out every value would override its bundle).
        return {"profile": tcp.profile, **tcp.model_dump(mode="json", by_alias=True, exclude_unset=True)}

    @model_validator(mode="after")
    def _check_flows(self) -> "Scenario":
        # Spelling rules of the file; the physics and invariants (times inside the run, intervals in
        # order, paths within the hops, RTO order ...) are the engine's: from_dict asks it
        # (engine.check_scenario) once the model is built.
        if self.flow_count > MAX_TOTAL_FLOWS:  # before anything is built per flow
            raise ScenarioError("flows", f"{self.flow_count} flows in all (counts included); the limit is {MAX_TOTAL_FLOWS}")
        names: dict[str, int] = {}
        # The smallest queue limit in bytes, found once: each flow's packet is compared with it, not
        # with every queue (flows x hops on a parking lot); the queue to blame is looked up on failure.
        queues = [(key, queue) for key, queue in self.topology.queues() if queue.limit_bytes is not None]
        smallest_bytes = min((queue.limit_bytes for _, queue in queues), default=None)
        for i, flow, flow_names in self._named_flows():
            where = f"flows[{i}]"
            if flow.active_ns is not None and (flow.start_ns != 0 or flow.stop_ns is not None):
                if isinstance(flow.start_ns, tuple):
                    raise ScenarioError(f"{where}.start", "a random start is for start/stop flows; with active intervals give their times")
                raise ScenarioError(f"{where}.active", "give either active intervals or start/stop, not both")
            if flow.path is not None and self.topology.hop_count is None:
                raise ScenarioError(f"{where}.path", "only a parking-lot topology has hops")
            if flow.direction == "reverse" and self.topology.hop_count is not None:
                raise ScenarioError(f"{where}.direction", "reverse flows are a dumbbell feature (a parking-lot flow has a path)")
            tcp = self.tcp_for(flow)
            packet_bytes = tcp.mss_bytes + tcp.header_bytes
            for key, queue in queues if smallest_bytes is not None and smallest_bytes < packet_bytes else ():
                if queue.limit_bytes < packet_bytes:
                    raise ScenarioError(
                        f"topology.{key}",
                        f"must hold at least 1 packet: {units.format_size(queue.limit_bytes)} < "
                        f"{packet_bytes}B (mss + header of {where})",
                    )
            for name in flow_names:
                if name in names:
                    raise ScenarioError(f"{where}.name", f"duplicate flow name '{name}' (also used by flows[{names[name]}])")
                names[name] = i
        queue = self.topology.queue if isinstance(self.topology, Topology) else None
        if isinstance(queue, Red) and queue.needs_bdp:
            try:
                queue.thresholds(queue.resolved_limit(self.bottleneck_bdp_pkts()))
            except ScenarioError as e:
                raise e.with_field(f"topology.queue.{e.field}") from None
        return self

    def user_field(self, engine_field: str) -> str:
        """The key of the file behind a path of the resolved document: ``duration_ns`` ->
        ``run.duration``, ``flows[3].intervals[0].start_ns`` -> ``flows[1].active[0]`` (or
        ``flows[1].start``), ``topology.bottleneck.rate_bps`` -> ``topology.bottleneck_rate``, as
        :meth:`_resolve` noted it while writing the document; the path itself if nothing wrote it."""
        return self._key_record.user_key(engine_field)

    @functools.cached_property
    def _key_record(self) -> KeyRecord:
        # Made on the first error only: a run that goes well never needs it.
        record = KeyRecord()
        self._resolve(copies=False, keys=record)
        return record

    def bottleneck_bdp_pkts(self) -> float | None:
        """The dumbbell bottleneck's bandwidth-delay product in packets (what ``'1bdp'`` means):
        rate x base RTT / (8 (mss + header)), base RTT = bottleneck delay + reverse delay + 2 x access
        delay, averaged over the flows (a uniform access delay counts at its midpoint); the packet is
        mss + header of the TCP flows (their ``[flows.tcp]`` overrides included), averaged over them,
        or of ``[tcp]`` when no flow is TCP. None for a parking lot."""
        topo = self.topology
        if not isinstance(topo, Topology):
            return None
        reverse = topo.bottleneck_delay_ns if topo.reverse_delay_ns is None else topo.reverse_delay_ns
        rtts, packets = [], []
        for flow in self.flows:
            delay = flow.access_delay_ns
            access = (delay[0] + delay[1]) / 2 if isinstance(delay, tuple) else delay
            rtts += [topo.bottleneck_delay_ns + reverse + 2 * access] * flow.count
            if flow.kind in ("tcp", "web"):
                tcp = self.tcp_for(flow)
                packets += [tcp.mss_bytes + tcp.header_bytes] * flow.count
        packet_bytes = sum(packets) / len(packets) if packets else self.tcp.mss_bytes + self.tcp.header_bytes
        return topo.bdp_pkts(sum(rtts) / len(rtts), packet_bytes)

    # -- derived views ------------------------------------------------------------------------------

    def tcp_for(self, flow: Flow) -> Tcp:
        """The TCP settings of ``flow`` (docs/profiles.md): the bundle of the flow's profile if it
        names one, else of ``[tcp]``'s; then the keys ``[tcp]`` sets; then the keys the flow sets."""
        base = self.tcp
        if flow.tcp.sets_profile:
            base = Tcp.model_validate({"profile": flow.tcp.profile}).model_copy(update=self.tcp.overridden())
        return base.model_copy(update=flow.tcp.overridden())

    def _named_flows(self) -> Iterator[tuple[int, Flow, list[str]]]:
        """(index, entry, names of its expanded flows) for each ``[[flows]]`` entry: an unnamed one
        is ``flow<engine index>``, counted as it goes (summing the counts before each entry made
        validation quadratic in the entries: 30,000 took 59 s)."""
        first = 0
        for i, flow in enumerate(self.flows):
            if flow.name is None:
                names = [f"flow{first + k}" for k in range(flow.count)]
            elif flow.count == 1:
                names = [flow.name]
            else:
                names = [f"{flow.name}-{k}" for k in range(flow.count)]
            first += flow.count
            yield i, flow, names

    def flow_names(self) -> list[str]:
        """Names of the expanded flows, in engine order."""
        return [name for _, _, names in self._named_flows() for name in names]

    @property
    def flow_count(self) -> int:
        return sum(f.count for f in self.flows)

    @functools.cached_property
    def resolved_json(self) -> str:
        """:meth:`resolve` as JSON text, made once per scenario (the model is frozen) and read by the
        engine's check, the run and the run's record: for thousands of flows, resolving the
        document and encoding it were most of the front end's time, three times over
        (docs/performance.md, "Many flows through ``ccsim run``")."""
        return json.dumps(self._resolve(copies=False))

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> "Scenario":
        if update is not None and not isinstance(update, dict):
            raise ArgumentError(f"update: must be a dict of field names to values, or None; got {kind_of(update)}")
        copied = super().model_copy(update=update, deep=deep)
        copied.__dict__.pop("resolved_json", None)  # other fields: resolved anew
        copied.__dict__.pop("_key_record", None)
        return copied

    def resolve(self) -> dict[str, Any]:
        """The resolved document the engine reads (docs/resolved-scenario.md): canonical units, every
        default written out, no nulls; ``_core.validate_resolved`` checks it."""
        return self._resolve(copies=True)

    def _resolve(self, copies: bool, keys: KeyRecord | None = None) -> dict[str, Any]:
        """:meth:`resolve`; without ``copies`` the flows of one ``count`` share their nested tables
        (``intervals``, ``traffic``): for a document only encoded, never changed. With ``keys``, each
        path written is noted there with the key of the file behind it (:meth:`user_field`)."""
        fresh = _copy_tree if copies else (lambda value: value)
        run = self.run
        hops = self.topology.hop_count
        flows = []
        if keys is not None:
            top = keys.scope()
            top.note("duration_ns", "run.duration")
            top.note("sample_interval_ns", "run.sample_interval")
            top.note("measure_start_ns", "run.measure")
            top.note("measure_end_ns", "run.measure")
        for i, flow, names in self._named_flows():
            if keys is not None:
                self._note_flow(keys.entry(len(flows)), i, flow)
            spread = 0
            if flow.active_ns is not None:
                intervals = [{"start_ns": a, "stop_ns": b} for a, b in flow.active_ns]
            else:
                stop = run.duration_ns if flow.stop_ns is None else flow.stop_ns
                start = flow.start_ns
                if isinstance(start, tuple):  # uniform on [low, high): the engine draws the offset
                    start, spread = start[0], start[1] - start[0]
                intervals = [{"start_ns": start, "stop_ns": stop}]
            delay = flow.access_delay_ns
            if isinstance(delay, tuple):
                access_delay = {"kind": "uniform", "low_ns": delay[0], "high_ns": delay[1]}
            else:
                access_delay = {"kind": "fixed", "delay_ns": delay}
            if hops is None:
                route = {"kind": "dumbbell", "direction": flow.direction}
            else:
                first, last = (0, hops - 1) if flow.path is None else flow.path
                route = {"kind": "parking_lot", "first_hop": first, "last_hop": last}
            traffic = self._resolve_traffic(flow)
            for name in names:
                flows.append({
                    "name": name,
                    "intervals": fresh(intervals),
                    "start_spread_ns": spread,
                    "access_delay": fresh(access_delay),
                    "route": fresh(route),
                    "traffic": fresh(traffic),
                })
        return {
            "ccsim_resolved": RESOLVED_FORMAT,
            "duration_ns": run.duration_ns,
            "sample_interval_ns": run.sample_interval_ns,
            "measure_start_ns": run.measure_start_ns,
            "measure_end_ns": run.measure_end_ns,
            "topology": self.topology.resolve(self.bottleneck_bdp_pkts(), None if keys is None else keys.scope("topology")),
            "flows": flows,
        }

    def _note_flow(self, keys: KeyScope, i: int, flow: "Flow") -> None:
        """Notes the paths :meth:`_resolve` writes for each flow of ``flows[i]`` (relative to one
        flow) with the keys behind them."""
        where = f"flows[{i}]"
        keys.note("name", f"{where}.name")
        if flow.active_ns is not None:
            keys.note("intervals", f"{where}.active")
            for n in range(len(flow.active_ns)):
                keys.note(f"intervals[{n}]", f"{where}.active[{n}]")
        else:
            keys.note("intervals", f"{where}.start")
            keys.note("intervals[0].start_ns", f"{where}.start")
            keys.note("intervals[0].stop_ns", f"{where}.stop")
        keys.note("start_spread_ns", f"{where}.start")
        keys.note("access_delay", f"{where}.access_delay")
        keys.note("route", f"{where}.path" if self.topology.hop_count is not None else f"{where}.direction")
        keys.note("traffic", where)
        traffic = keys.below("traffic")
        traffic.note("kind", f"{where}.kind")
        if flow.kind in ("tcp", "web"):
            traffic.note("algorithm", f"{where}.algorithm")
            traffic.note("params", f"{where}.params", same_below=True)
            flow_sets_tcp = bool(flow.tcp.model_fields_set)
            traffic.note("tcp", f"{where}.tcp" if flow_sets_tcp else "tcp")
            for name, info in Tcp.model_fields.items():
                # initial_ssthresh is also written by slow_start (Tcp.resolve folds it in)
                given = ("initial_ssthresh", "slow_start") if name == "initial_ssthresh" else (name,)
                table = flow.tcp if any(g in flow.tcp.model_fields_set for g in given) else self.tcp
                key = next((g for g in given if g in table.model_fields_set), name)
                user = f"{where}.tcp" if table is flow.tcp else "tcp"
                traffic.note(f"tcp.{name}", f"{user}.{_alias(Tcp, key)}")
            if flow.kind == "tcp":
                traffic.note("transfer", f"{where}.bytes")
                traffic.note("app_rate", f"{where}.rate_limit")
            else:
                for name in WEB_KEYS:
                    traffic.note(name, f"{where}.{_alias(Flow, name)}")
            return
        traffic.note("payload_bytes", f"{where}.payload")
        traffic.note("header_bytes", f"{where}.header")
        if flow.kind == "cbr":
            traffic.note("rate_bps", f"{where}.rate")
        else:
            traffic.note("interval_ns", f"{where}.interval")
            traffic.note("pattern", f"{where}.talk_spurts")
            traffic.note("pattern.mean_on_ns", f"{where}.mean_on")
            traffic.note("pattern.mean_off_ns", f"{where}.mean_off")

    def _resolve_traffic(self, flow: "Flow") -> dict[str, Any]:
        """What ``flow`` carries, each kind with exactly its own fields, defaults written out."""
        if flow.kind in ("tcp", "web"):
            algorithm = flow.algorithm or ""
            params = dict(flow.params)  # the algorithm's defaults apply to the others (params_used)
            cc = {"algorithm": algorithm, "params": params, "tcp": self.tcp_for(flow).resolve()}
            if flow.kind == "tcp":
                transfer = {"kind": "unlimited"} if flow.transfer_bytes is None else {"kind": "finite", "bytes": flow.transfer_bytes}
                app_rate = {"kind": "unlimited"} if flow.rate_limit_bps is None else {"kind": "limited", "rate_bps": flow.rate_limit_bps}
                return {"kind": "tcp", **cc, "transfer": transfer, "app_rate": app_rate}
            return {
                "kind": "web",
                **cc,
                "arrival_rate": flow.arrival_rate,
                "size_mean_bytes": flow.size_mean_bytes,
                "size_shape": WEB_DEFAULT_SIZE_SHAPE if flow.size_shape is None else flow.size_shape,
            }

        def given(value: Any, default: Any) -> Any:
            return default if value is None else value

        if flow.kind == "cbr":
            return {
                "kind": "cbr",
                "rate_bps": flow.rate_bps,
                "payload_bytes": given(flow.payload_bytes, CBR_DEFAULT_PAYLOAD_BYTES),
                "header_bytes": given(flow.stream_header_bytes, CBR_DEFAULT_HEADER_BYTES),
            }
        if flow.talk_spurts:
            pattern = {
                "kind": "talk_spurts",
                "mean_on_ns": given(flow.mean_on_ns, VOIP_DEFAULT_MEAN_ON_NS),
                "mean_off_ns": given(flow.mean_off_ns, VOIP_DEFAULT_MEAN_OFF_NS),
            }
        else:
            pattern = {"kind": "constant"}
        return {
            "kind": "voip",
            "payload_bytes": given(flow.payload_bytes, VOIP_DEFAULT_PAYLOAD_BYTES),
            "header_bytes": given(flow.stream_header_bytes, VOIP_DEFAULT_HEADER_BYTES),
            "interval_ns": given(flow.interval_ns, VOIP_DEFAULT_INTERVAL_NS),
            "pattern": pattern,
        }

    # -- TOML ---------------------------------------------------------------------------------------

    def to_toml(self) -> str:
        """TOML text that loads back to an equal Scenario (defaults written out, units canonical;
        ``[tcp]`` as its profile and the keys it sets, the profile standing for the rest)."""
        data = _drop_empty(self.model_dump(mode="json", by_alias=True, exclude_none=True))
        return tomli_w.dumps(data)

    @classmethod
    def from_toml_str(cls, text: str, source: str = "<string>") -> "Scenario":
        text_argument(text, "text", "TOML text")
        text_argument(source, "source", "a name for the text")
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(source, f"invalid TOML: {e}") from None
        except RecursionError:  # a = [[[[...: the parser recurses once per level
            raise ScenarioError(source, "invalid TOML: nested too deeply") from None
        return cls.from_dict(data)

    @classmethod
    def from_toml(cls, path: str | Path) -> "Scenario":
        path = path_argument(path, "path")
        return cls.from_toml_str(read_scenario_text(path), source=str(path))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Scenario":
        """Validates a parsed document, the file's rules and then the engine's
        (:func:`ccsim.engine.check_scenario`); any problem becomes one ScenarioError naming the key path."""
        try:
            scenario = cls.model_validate(data)
        except ValidationError as e:
            raise scenario_error_from(e) from None
        check_scenario(scenario)
        return scenario


def _alias(model: type[BaseModel], name: str) -> str:
    return model.model_fields[name].alias or name


def _drop_empty(data: Any) -> Any:
    """TOML has no null and an empty [flows.tcp] table is noise."""
    if isinstance(data, dict):
        return {k: _drop_empty(v) for k, v in data.items() if v is not None and v != {}}
    if isinstance(data, list):
        return [_drop_empty(v) for v in data]
    return data


def algorithm_hint(name: str, known: Iterable[str]) -> str:
    """``"did you mean 'newreno'? "`` for ``NewReno`` or ``newrno`` (names are lower case), else ``""``."""
    known = list(known)
    lowered = {k.lower(): k for k in known}
    if str(name).lower() in lowered:
        return f"did you mean '{lowered[str(name).lower()]}'? (names are lower case) "
    close = difflib.get_close_matches(str(name).lower(), known, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'? " if close else ""


def read_scenario_text(path: str | Path) -> str:
    """The text of a scenario file, read with the size and file-type limits of docs/safety.md."""
    return read_toml_text(path)


def load_scenario(source: str | Path) -> Scenario:
    """A Scenario from a TOML file path (``str`` or ``Path``) or from TOML text: a ``str`` holding a
    line break, which no file name does (``"loss=0.01.toml"`` is a file). ``Scenario.from_toml_str``
    takes text explicitly."""
    if isinstance(source, str) and "\n" in source:
        return Scenario.from_toml_str(source)
    if not isinstance(source, (str, os.PathLike)):
        raise ArgumentError(f"source: must be a file path (str or pathlib.Path) or TOML text; got {type(source).__name__}")
    return Scenario.from_toml(source)


# ---------------------------------------------------------------------------------------------------
# pydantic ValidationError -> one line


_REASONS: dict[str, Callable[[dict[str, Any]], str]] = {
    "missing": lambda e: "required key is missing",
    "extra_forbidden": lambda e: "unknown key",
    "bool_type": lambda e: "must be true or false",
    "int_type": lambda e: "must be an integer",
    "float_type": lambda e: "must be a number",
    "string_type": lambda e: "must be a string",
    "dict_type": lambda e: "must be a table",
    "list_type": lambda e: "must be an array",
    "model_type": lambda e: "must be a table",
    "literal_error": lambda e: f"must be {e['ctx']['expected']}",
    "greater_than_equal": lambda e: f"must be >= {e['ctx']['ge']}",
    "greater_than": lambda e: f"must be > {e['ctx']['gt']}",
    "less_than": lambda e: f"must be < {e['ctx']['lt']}",
    "less_than_equal": lambda e: f"must be <= {e['ctx']['le']}",
    "too_short": lambda e: f"needs at least {e['ctx']['min_length']} entr{'y' if e['ctx']['min_length'] == 1 else 'ies'}",
    "too_long": lambda e: f"takes at most {e['ctx']['max_length']} entries",
    "finite_number": lambda e: "must be a finite number",
}


def _loc_text(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif str(part).startswith(("function-", "nullable[")) or (text == "topology" and part in ("dumbbell", "parking_lot")):
            continue  # pydantic's names for validator layers and union tags, not keys of the file
        elif text.endswith("queue") and part in ("droptail", "red"):
            continue  # pydantic's names for validator layers and union tags, not keys of the file
        else:
            text += f".{part}" if text else str(part)
    return text


def scenario_error_from(error: ValidationError) -> ScenarioError:
    """The first error of a ValidationError as a ScenarioError with a ``flows[1].start`` style path."""
    first = error.errors(include_url=False)[0]
    path = _loc_text(tuple(first["loc"]))
    if first["type"] == "union_tag_invalid":  # [topology] kind = "ring"
        ctx = first.get("ctx") or {}
        return ScenarioError(f"{path}.kind", f"unknown kind '{ctx.get('tag')}' (known: {ctx.get('expected_tags')})")
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, ScenarioError):
        # An index joins without a dot: ``flows[0].active[1]``, ``topology.loss[0]``.
        sep = "" if cause.field.startswith("[") else "."
        field = sep.join(p for p in (path, cause.field) if p)
        return cause.with_field(field)
    reason = _REASONS.get(first["type"])
    if reason is not None:
        try:
            text = reason(first)
        except KeyError:
            text = first["msg"]
    else:
        text = first["msg"]
    if first["type"] == "too_short" and path == "flows":
        text = "at least one [[flows]] entry is required"
    elif first["type"] == "extra_forbidden":
        text = "unknown key"
    elif first["type"].endswith("_type") and "input" in first:
        text += f" (got {first['input']!r})"
    return ScenarioError(path, text[0].lower() + text[1:] if text else "invalid")
