"""The destination guard of webhooks: which URLs and addresses the service may POST to.

Used at registration, by the test endpoint and before every attempt. Rules, in order:

1. The URL: ``https`` only, a host, no credentials (``user:pass@``), no control characters or
   spaces, at most 2,048 characters.
2. The host: names of cloud metadata services and local names (``localhost``, ``*.localhost``,
   ``metadata.google.internal``, ``instance-data``, ...) are refused by name. A host written as a
   number in any form ``inet_aton`` accepts (``2130706433``, ``0177.0.0.1``, ``0x7f000001``,
   ``127.1``) is turned into the address it means and checked like any other; a numeric-looking
   host that is not a valid number is refused (resolvers disagree on what it means).
3. Resolution, once, through a ``Resolver`` port (tests control it); every address must pass.
4. Each address: transition forms are unwrapped first (IPv4-mapped ``::ffff:a.b.c.d``,
   IPv4-compatible ``::a.b.c.d``, SIIT ``::ffff:0:a.b.c.d``, 6to4 ``2002::/16``, Teredo
   ``2001::/32`` server and client, NAT64 ``64:ff9b::/96`` and ``64:ff9b:1::/48``) and the
   embedded IPv4 address is checked; then the address itself must be global unicast
   (``ipaddress.is_global``, not multicast) and outside the explicit deny list below. Python's
   ``is_global`` alone is not enough (it has called 6to4 and NAT64 global, and knows nothing of
   metadata addresses), hence both.

The caller then connects to the address that was vetted (``infra.webhook_http``), never
resolving again: a name whose answer changes between check and connection (DNS rebinding) can
not redirect the request.

``Allowance`` lets named hosts and networks through despite these rules (the test receivers on
127.0.0.x). It is empty by default, and ``allowance_for`` ignores it for production keys when the
service runs in production mode.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import re
import socket
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_URL = 2048

DENIED_NAMES = frozenset({
    "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", "broadcasthost",
    "metadata", "metadata.google.internal", "metadata.goog", "metadata.azure.com", "metadata.packet.net",
    "instance-data", "instance-data.ec2.internal", "metadata.ec2.internal", "metadata.tencentyun.com",
    "metadata.platformequinix.com", "kubernetes.default", "kubernetes.default.svc",
})
DENIED_SUFFIXES = (".localhost", ".local", ".internal", ".localdomain", ".home.arpa", ".in-addr.arpa", ".ip6.arpa")

# Addresses of metadata services (several are not in a non-global range: Azure's wireserver).
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "169.254.169.123", "168.63.129.16", "100.100.100.200",
    "192.0.0.192", "fd00:ec2::254", "fd00:ec2::23",
))

DENIED_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    # IPv4
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
    "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
    # IPv6
    "::/128", "::1/128", "::ffff:0:0/96", "::/96", "::ffff:0:0:0/96", "64:ff9b:1::/48", "100::/64",
    "2001::/23", "2001:db8::/32", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
))

NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
SIIT = ipaddress.ip_network("::ffff:0:0:0/96")
COMPAT = ipaddress.ip_network("::/96")


class DestinationRefused(ValueError):
    """The URL or one of its addresses is not a public HTTPS destination.

    ``permanent`` is False only when the name could not be resolved at all (no answer, a lookup
    error): that says nothing about the destination and may pass on a later try. Every other
    refusal is a verdict on the destination itself (its URL, its name, or an address it resolves
    to), which a sender does not retry.
    """

    def __init__(self, reason: str, *, url: str = "", address: str | None = None, permanent: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.url = url
        self.address = address
        self.permanent = permanent


@dataclass(frozen=True)
class Allowance:
    """Hosts and networks allowed despite the rules (tests only; empty by default)."""

    names: frozenset[str] = frozenset()
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @classmethod
    def parse(cls, spec: str) -> Allowance:
        names, networks = set(), []
        for item in (s.strip() for s in spec.split(",")):
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                names.add(item.lower().rstrip("."))
        return cls(frozenset(names), tuple(networks))

    def __bool__(self) -> bool:
        return bool(self.names or self.networks)

    def allows_address(self, ip: IPAddress) -> bool:
        return any(ip in n for n in self.networks if n.version == ip.version)


NO_ALLOWANCE = Allowance()


@functools.lru_cache(maxsize=64)
def allowance_for(spec: str, mode: str, environment: str) -> Allowance:
    """The test allowance, unless it would apply to a production key's delivery in production mode."""
    if not spec or (mode == "production" and environment == "production"):
        return NO_ALLOWANCE
    return Allowance.parse(spec)


@dataclass(frozen=True)
class Destination:
    url: str
    host: str  # as written (lowercase, no trailing dot): the Host header and the TLS server name
    port: int
    literal: IPAddress | None  # the host is an address (any numeric form)


@dataclass(frozen=True)
class Vetted:
    """A destination and the address the request must go to (chosen once, never looked up again)."""

    destination: Destination
    address: str
    addresses: tuple[str, ...] = field(default=())

    @property
    def url(self) -> str:
        return self.destination.url

    @property
    def host(self) -> str:
        return self.destination.host


class Resolver(Protocol):
    async def resolve(self, host: str, port: int) -> list[str]: ...


class SystemResolver:
    """getaddrinfo off the event loop (the loop's default executor)."""

    async def resolve(self, host: str, port: int) -> list[str]:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        out: list[str] = []
        for _family, _type, _proto, _canon, sockaddr in infos:
            if sockaddr[0] not in out:
                out.append(sockaddr[0])
        return out


RESOLVE_TIMEOUT_S = 5.0  # how long a check made while a request waits gives a name to resolve


class BoundedResolver(SystemResolver):
    """The system resolver with a bound (``RESOLVE_TIMEOUT_S``), for checks made while a request
    waits: a name that does not answer is refused, not waited on."""

    async def resolve(self, host: str, port: int) -> list[str]:
        try:
            return await asyncio.wait_for(super().resolve(host, port), RESOLVE_TIMEOUT_S)
        except TimeoutError:
            raise OSError(f"no answer within {RESOLVE_TIMEOUT_S:g} s") from None


# ------------------------------------------------------------------------------ pure checks

_NUMERIC_LOOKING = re.compile(r"^(0x[0-9a-f]*|[0-9][0-9a-fx]*)(\.(0x[0-9a-f]*|[0-9][0-9a-fx]*))*\.?$")
_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")


def parse_numeric_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """What ``inet_aton`` makes of ``host`` (1 to 4 parts, each decimal, 0-octal or 0x-hex; the
    last part fills the remaining bytes), or None if it is not such a number."""
    parts = host.rstrip(".").split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values = []
    for p in parts:
        try:
            if p[:2] == "0x":
                v = int(p[2:] or "0", 16)
            elif len(p) > 1 and p[0] == "0":
                v = int(p, 8)
            else:
                v = int(p, 10)
        except ValueError:
            return None
        values.append(v)
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for v in head:
        number = number * 256 + v
    number = number * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(number)


def parse_destination(url: str) -> Destination:
    if not isinstance(url, str) or len(url) > MAX_URL:
        raise DestinationRefused(f"the url must be a string of at most {MAX_URL} characters", url=str(url)[:100])
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url) or "\\" in url:
        raise DestinationRefused("the url contains spaces, control characters or backslashes", url=url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise DestinationRefused(f"the url cannot be parsed: {exc}", url=url) from None
    if parts.scheme.lower() != "https":
        raise DestinationRefused("only https:// destinations are accepted", url=url)
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        raise DestinationRefused("credentials in the url are not accepted", url=url)
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise DestinationRefused("the url has no host", url=url)
    if port == 0:
        raise DestinationRefused("port 0 is not a destination", url=url)
    literal: IPAddress | None = None
    if ":" in host:  # bracketed IPv6 literal (urlsplit removed the brackets)
        try:
            literal = ipaddress.IPv6Address(host.split("%")[0])
        except ValueError:
            raise DestinationRefused("the IPv6 address in the url is not valid", url=url) from None
        if "%" in host:
            raise DestinationRefused("zone identifiers are not accepted", url=url)
    elif _NUMERIC_LOOKING.match(host):
        literal = parse_numeric_ipv4(host)
        if literal is None:
            raise DestinationRefused("the host looks numeric but is not an IPv4 address", url=url)
    else:
        labels = host.split(".")
        if not all(_LABEL.match(label) for label in labels):
            raise DestinationRefused("the host is not a valid DNS name", url=url)
    return Destination(url=url, host=host, port=port or 443, literal=literal)


def check_name(host: str, allowance: Allowance = NO_ALLOWANCE) -> None:
    if host in allowance.names:
        return
    if host in DENIED_NAMES or host.endswith(DENIED_SUFFIXES) or "." not in host:
        raise DestinationRefused(f"{host} is a local or metadata service name")


def embedded_ipv4(ip: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 transition form carries (empty for anything else)."""
    if ip.version == 4:
        return []
    out: list[ipaddress.IPv4Address] = []
    n = int(ip)
    if ip.ipv4_mapped is not None:
        out.append(ip.ipv4_mapped)
    if ip in SIIT or (ip in COMPAT and n > 1):
        out.append(ipaddress.IPv4Address(n & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        out.append(ip.sixtofour)
    if ip.teredo is not None:
        out.extend(ip.teredo)  # (server, client)
    if ip in NAT64_WELL_KNOWN:
        out.append(ipaddress.IPv4Address(n & 0xFFFFFFFF))
    if ip in NAT64_LOCAL:
        # RFC 6052 with a /48 prefix: bits 48-63 and 72-87 (bits 64-71 are the "u" octet); some
        # translators use the /96 layout inside it, so both are checked.
        high = (n >> 64) & 0xFFFF
        low = (n >> 40) & 0xFFFF
        out.append(ipaddress.IPv4Address((high << 16) | low))
        out.append(ipaddress.IPv4Address(n & 0xFFFFFFFF))
    return out


def _refusal(ip: IPAddress) -> str | None:
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata service address"
    for net in DENIED_NETWORKS:
        if net.version == ip.version and ip in net:
            return f"in the non-public range {net}"
    if ip.is_multicast:
        return "a multicast address"
    if not ip.is_global:
        return "not a global unicast address"
    return None


def check_address(ip: IPAddress | str, allowance: Allowance = NO_ALLOWANCE) -> None:
    """Raise ``DestinationRefused`` unless ``ip`` (and whatever it wraps) is a public unicast address."""
    if isinstance(ip, str):
        ip = ipaddress.ip_address(ip.split("%")[0])
    if allowance.allows_address(ip):
        return
    for inner in embedded_ipv4(ip):
        if allowance.allows_address(inner):
            return
        why = _refusal(inner)
        if why:
            raise DestinationRefused(f"{ip} wraps {inner}, {why}", address=str(ip))
    why = _refusal(ip)
    if why:
        raise DestinationRefused(f"{ip} is {why}", address=str(ip))


# ------------------------------------------------------------------------------ the whole check


async def vet(url: str, resolver: Resolver, allowance: Allowance = NO_ALLOWANCE) -> Vetted:
    """Parse, check the name, resolve once, check every address; the first one is the one to use.

    Only the pure steps are memoised (``_vet_pure``, ``_address_refusal``: the same URL or address
    and allowance always give the same verdict); a name is resolved again on every call, and its
    answer checked, so a sender that vets before every attempt connects to what it just checked.
    """
    dest, vetted, refused = _vet_pure(url, allowance)
    if refused is not None:
        raise DestinationRefused(refused[0], url=url, address=refused[1])
    if vetted is not None:
        return vetted
    try:
        addresses = await resolver.resolve(dest.host, dest.port)
    except (OSError, UnicodeError) as exc:
        raise DestinationRefused(f"{dest.host} does not resolve: {exc}", url=url, permanent=False) from None
    if not addresses:
        raise DestinationRefused(f"{dest.host} does not resolve", url=url, permanent=False)
    name_allowed = dest.host in allowance.names
    for address in addresses:
        try:
            ip = ipaddress.ip_address(address.split("%")[0])
        except ValueError:
            raise DestinationRefused(f"{dest.host} resolved to {address!r}, not an address", url=url) from None
        if name_allowed:
            continue
        why = _address_refusal(ip, allowance)
        if why is not None:
            raise DestinationRefused(f"{dest.host} resolves to {why[0]}", url=url, address=address) from None
    return Vetted(dest, addresses[0].split("%")[0], tuple(addresses))


@functools.lru_cache(maxsize=4096)
def _vet_pure(url: str, allowance: Allowance) -> tuple[Destination | None, Vetted | None, tuple | None]:
    """(destination, vetted, refusal): everything ``vet`` decides without DNS. ``vetted`` is set
    for a numeric host (nothing to resolve); ``refusal`` is ``(reason, address)``."""
    try:
        dest = parse_destination(url)
    except DestinationRefused as exc:
        return None, None, (exc.reason, exc.address)
    if dest.literal is not None:
        why = _address_refusal(dest.literal, allowance)
        if why is not None:
            return dest, None, why
        return dest, Vetted(dest, str(dest.literal), (str(dest.literal),)), None
    try:
        check_name(dest.host, allowance)
    except DestinationRefused as exc:
        return dest, None, (exc.reason, None)
    return dest, None, None


@functools.lru_cache(maxsize=4096)
def _address_refusal(ip: IPAddress, allowance: Allowance) -> tuple[str, str] | None:
    try:
        check_address(ip, allowance)
    except DestinationRefused as exc:
        return exc.reason, exc.address
    return None
