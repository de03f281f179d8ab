"""The destination guard, pure: the SSRF table through a resolver the test controls."""

from __future__ import annotations

import ipaddress

import pytest

from infra.netguard import (
    NO_ALLOWANCE,
    Allowance,
    DestinationRefused,
    allowance_for,
    check_address,
    embedded_ipv4,
    parse_numeric_ipv4,
    vet,
)
from tests.support.netguard import REFUSED


class FakeResolver:
    """Answers from a table; records every lookup."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.lookups: list[str] = []

    async def resolve(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        if host not in self.answers:
            raise OSError("NXDOMAIN")
        return list(self.answers[host])


DNS = {
    "public.example": ["93.184.215.14"],
    "public6.example": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "loop.example": ["127.0.0.1"],
    "loop6.example": ["::1"],
    "private.example": ["10.1.2.3"],
    "mixed.example": ["93.184.215.14", "192.168.1.1"],
    "metadata.example": ["169.254.169.254"],
    "mapped.example": ["::ffff:10.0.0.1"],
    "cgnat.example": ["100.64.1.1"],
    "ula.example": ["fd12:3456::1"],
    "nat64.example": ["64:ff9b::a9fe:a9fe"],
    "zero.example": ["0.0.0.0"],
}

ACCEPTED = [
    "https://public.example/hook",
    "https://public6.example:8443/hook?x=1",
    "https://93.184.215.14/",
    "https://1572394766/",  # 93.184.215.14 as one decimal number: checked like any other
    "https://[2606:4700:4700::1111]/",
    "https://[64:ff9b::808:808]/",  # NAT64 of a public address
]


def test_the_table_has_at_least_forty_forms():
    assert len(REFUSED) >= 40


@pytest.mark.parametrize("url", REFUSED)
async def test_refused(url):
    with pytest.raises(DestinationRefused):
        await vet(url, FakeResolver(DNS))


@pytest.mark.parametrize("url", ACCEPTED)
async def test_accepted(url):
    vetted = await vet(url, FakeResolver(DNS))
    ipaddress.ip_address(vetted.address)


async def test_numeric_hosts_become_the_address_they_mean_and_are_never_looked_up():
    resolver = FakeResolver(DNS)
    vetted = await vet("https://1572394766/x", resolver)
    assert vetted.address == "93.184.215.14" and resolver.lookups == []


@pytest.mark.parametrize("host,address", [
    ("2130706433", "127.0.0.1"), ("0x7f000001", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"),
    ("127.1", "127.0.0.1"), ("127.0.1", "127.0.0.1"), ("10.258", "10.0.1.2"), ("0", "0.0.0.0"),
])
def test_inet_aton_forms(host, address):
    assert str(parse_numeric_ipv4(host)) == address


def test_every_address_of_a_name_must_pass_and_the_name_is_resolved_once():
    import asyncio

    resolver = FakeResolver(DNS)
    with pytest.raises(DestinationRefused, match="192.168.1.1"):
        asyncio.run(vet("https://mixed.example/", resolver))
    assert resolver.lookups == ["mixed.example"]


def test_unwrapping_finds_the_embedded_ipv4():
    teredo = ipaddress.ip_address("2001:0:4136:e378:8000:63bf:80ff:fffe")
    assert ipaddress.ip_address("127.0.0.1") in embedded_ipv4(teredo)
    assert embedded_ipv4(ipaddress.ip_address("2002:c000:0204::1")) == [ipaddress.ip_address("192.0.2.4")]
    assert embedded_ipv4(ipaddress.ip_address("64:ff9b::10.0.0.1")) == [ipaddress.ip_address("10.0.0.1")]


def test_allowance_lets_named_test_networks_through_and_is_off_by_default():
    allow = Allowance.parse("127.0.0.0/8, receiver.test")
    check_address("127.0.0.5", allow)
    with pytest.raises(DestinationRefused):
        check_address("127.0.0.5", NO_ALLOWANCE)
    with pytest.raises(DestinationRefused):
        check_address("10.0.0.1", allow)
    assert not allowance_for("", "development", "sandbox")
    assert allowance_for("127.0.0.0/8", "development", "production")
    assert allowance_for("127.0.0.0/8", "production", "sandbox")
    # Refused for production keys' deliveries when the service runs in production mode.
    assert not allowance_for("127.0.0.0/8", "production", "production")


async def test_allowed_name_resolving_to_loopback_passes_only_with_the_allowance():
    resolver = FakeResolver({"receiver.test": ["127.0.0.9"]})
    with pytest.raises(DestinationRefused):
        await vet("https://receiver.test/", resolver)
    vetted = await vet("https://receiver.test/", resolver, Allowance.parse("127.0.0.9/32"))
    assert vetted.address == "127.0.0.9" and vetted.host == "receiver.test"


async def test_verdicts_are_memoised_but_every_vet_resolves_and_checks_the_answer_it_got():
    """The pure parts (the URL, the name, an address) are memoised; the lookup is not: a name
    that answered a public address and then a private one is refused the second time."""
    resolver = FakeResolver({"flip.example": ["93.184.215.14"]})
    first = await vet("https://flip.example/h", resolver)
    resolver.answers["flip.example"] = ["10.1.2.3"]
    with pytest.raises(DestinationRefused, match="10.0.0.0/8"):
        await vet("https://flip.example/h", resolver)
    resolver.answers["flip.example"] = ["93.184.215.15"]
    third = await vet("https://flip.example/h", resolver)
    assert resolver.lookups == ["flip.example"] * 3
    assert (first.address, third.address) == ("93.184.215.14", "93.184.215.15")
    for _ in range(2):  # a refused URL stays refused, with its reason, however often it is vetted
        with pytest.raises(DestinationRefused, match="credentials"):
            await vet("https://user:pw@flip.example/h", resolver)
    assert resolver.lookups == ["flip.example"] * 3
