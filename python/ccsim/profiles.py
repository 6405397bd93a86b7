"""TCP profiles: named bundles of the TCP machine's knobs (docs/profiles.md).

A profile says which platform a flow's TCP behaves like:

* ``freebsd9``: FreeBSD 9, the CHD paper's testbed, and ccsim's default (minimum RTO aside, which
  follows Linux and ns-2: docs/choices.md);
* ``linux``: Linux 6.x, what the kernel twins run on;
* ``ns2``: ns-2.35's ``Agent/TCP/Sack1`` with ``Agent/TCPSink/Sack1`` (``sack = false`` gives
  ``Agent/TCP/Newreno`` with ``Agent/TCPSink``), what the Leith, Budzisz and Bansal papers ran;
* ``ns3``: ns-3.44's TCP with its attribute defaults (``TcpSocket``, ``TcpSocketBase``,
  ``TcpL4Protocol``), the simulator users compare with.

Each bundle sets every knob, by the field names and canonical units of the resolved document (bytes,
ns, packets). The values live in one file, ``profiles.toml`` beside this module, which the engine's
test fixtures read too (``crates/ccsim-core/src/fixtures.rs``): ``Tcp``'s defaults are the
``freebsd9`` bundle, and docs/profiles.md gives each value's source. Precedence
(``Scenario.tcp_for``): a flow's ``[flows.tcp] profile`` replaces the base bundle of ``[tcp]
profile``; the keys ``[tcp]`` sets explicitly apply on top, then the keys ``[flows.tcp]`` sets.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

__all__ = ["DEFAULT_PROFILE", "PROFILES", "PROFILE_NAMES", "PROFILES_FILE", "bundle"]

DEFAULT_PROFILE = "freebsd9"
PROFILES_FILE = Path(__file__).with_name("profiles.toml")

with PROFILES_FILE.open("rb") as _file:
    PROFILES: Mapping[str, Mapping[str, Any]] = MappingProxyType(
        {name: MappingProxyType(knobs) for name, knobs in tomllib.load(_file).items()}
    )
PROFILE_NAMES: tuple[str, ...] = tuple(PROFILES)


def bundle(name: str) -> dict[str, Any]:
    """The knobs of profile ``name`` (a copy), by resolved field name."""
    return dict(PROFILES[name])
