"""The SSRF guard: a tool's HTTP request may reach the public internet, never the machine or its network.

A URL is checked before every hop: http(s) only; the host is resolved once (getaddrinfo, in a thread) and
every address it resolves to must be public. The connection then goes to the checked address itself, with
the original name in the ``Host`` header and as TLS server name (SNI and certificate check), so a DNS answer
that changes between the check and the connection (DNS rebinding) cannot redirect it. Redirects are
followed by hand, each target checked again. Hosts on the allow-list skip the address check.
"""

import asyncio
import ipaddress
import socket
from collections.abc import Collection
from dataclasses import dataclass, field

import httpx

__all__ = ["BlockedURL", "CheckedURL", "Fetched", "blocked_reason", "check_url", "guarded_request"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_REDIRECTS = 5
MAX_BYTES = 2 * 1024 * 1024
USER_AGENT = "agentweb-fetch/0.1"
_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_REDIRECTS = {301, 302, 303, 307, 308}
# Headers that may follow a redirect to another origin; anything else could be a credential.
_CROSS_ORIGIN_SAFE = {"accept", "accept-language", "user-agent"}


class BlockedURL(ValueError):
    """The URL is refused by the guard; the message says why, in words the model can act on."""


@dataclass(frozen=True)
class CheckedURL:
    url: httpx.URL
    host: str  # ASCII (IDNA) host, no brackets
    addresses: tuple[str, ...]  # where to connect, all checked (or allow-listed)


@dataclass
class Fetched:
    url: httpx.URL  # after redirects
    status_code: int
    reason: str
    headers: httpx.Headers
    body: bytes
    truncated: bool  # the body was longer than max_bytes and reading stopped
    redirects: list[str] = field(default_factory=list)


def blocked_reason(address: IPAddress) -> str | None:
    """Why connecting to ``address`` is refused, or None when it is a public unicast address."""
    if address in _METADATA:
        return "a cloud metadata address"
    embedded = _embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else None
    inner = blocked_reason(embedded) if embedded is not None else None
    if inner:
        return f"an IPv6 form of {embedded}, {inner}"
    # Then the IPv6 address's own ranges: Teredo and mapped forms count as private even around a public IPv4.
    for reason, flag in (
        ("an unspecified address", address.is_unspecified),
        ("a loopback address", address.is_loopback),
        ("a link-local address", address.is_link_local),
        ("a multicast address", address.is_multicast),
        ("a private address", address.is_private),
        ("a reserved address", address.is_reserved),
    ):
        if flag:
            return reason
    # is_global is False for what the flags above miss, e.g. 100.64.0.0/10 (carrier-grade NAT).
    return None if address.is_global else "not a public address"


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address inside an IPv4-mapped, -compatible, 6to4, Teredo or NAT64 IPv6 address."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in network for network in _NAT64) or (int(address) >> 32 == 0 and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)  # NAT64, or ::a.b.c.d (IPv4-compatible)
    return None


async def check_url(url: str | httpx.URL, allowed_hosts: Collection[str] = ()) -> CheckedURL:
    """Parse, resolve and check ``url``. Raises BlockedURL."""
    try:
        parsed = httpx.URL(url) if isinstance(url, str) else url
    except httpx.InvalidURL as exc:
        raise BlockedURL(f"Invalid URL: {exc}") from None
    if parsed.scheme not in ("http", "https"):
        raise BlockedURL(f"Only http and https URLs can be fetched, not {parsed.scheme or 'a relative URL'!r}.")
    host = parsed.raw_host.decode("ascii").lower()
    if not host:
        raise BlockedURL("The URL has no host.")
    addresses = await _resolve(host, parsed.port or (443 if parsed.scheme == "https" else 80))
    if host not in {entry.strip().lower().strip("[]") for entry in allowed_hosts}:
        for address in addresses:
            reason = blocked_reason(address)
            if reason:
                raise BlockedURL(f"Refused to fetch {host}: it resolves to {address}, {reason}.")
    return CheckedURL(parsed, host, tuple(dict.fromkeys(str(address) for address in addresses)))


async def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass  # a name (or a legacy IPv4 spelling such as "127.1", which getaddrinfo resolves like any name)
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise BlockedURL(f"Cannot resolve {host}: {exc.strerror or exc}.") from None
    # A scope id ("fe80::1%eth0") is not part of the address; drop it before checking.
    return [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]


async def guarded_request(
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    allowed_hosts: Collection[str] = (),
    max_redirects: int = MAX_REDIRECTS,
    max_bytes: int = MAX_BYTES,
    timeout: float = 10.0,
) -> Fetched:
    """Send one request through the guard, following redirects by hand; the body is read up to ``max_bytes``.

    Raises BlockedURL for a refused hop or too many redirects, httpx.HTTPError when the request fails.
    ``timeout`` bounds each network operation; the caller sets the total deadline.
    """
    headers = {"User-Agent": USER_AGENT, **(headers or {})}
    redirects: list[str] = []
    target = await check_url(url, allowed_hosts)
    while True:
        fetched = await _send_checked(method, target, headers, content, max_bytes, timeout)
        location = fetched.headers.get("location")
        if fetched.status_code not in _REDIRECTS or not location:
            fetched.redirects = redirects
            return fetched
        if len(redirects) >= max_redirects:
            raise BlockedURL(f"Too many redirects (more than {max_redirects}) starting at {url}.")
        next_url = target.url.join(location)
        redirects.append(str(next_url))
        if fetched.status_code in (301, 302, 303) and method != "HEAD":
            method, content = "GET", None  # what browsers do; 307 and 308 keep the method and the body
        if not _same_origin(next_url, target.url):
            headers = {key: value for key, value in headers.items() if key.lower() in _CROSS_ORIGIN_SAFE}
        target = await check_url(next_url, allowed_hosts)


def _same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    return (a.scheme, a.raw_host.lower(), a.port) == (b.scheme, b.raw_host.lower(), b.port)


async def _send_checked(
    method: str, target: CheckedURL, headers: dict[str, str], content: bytes | None, max_bytes: int, timeout: float
) -> Fetched:
    """Connect to the first checked address that accepts a connection."""
    error: httpx.ConnectError | None = None
    for address in target.addresses:
        try:
            return await _send(method, target, address, headers, content, max_bytes, timeout)
        except httpx.ConnectError as exc:
            error = exc
    assert error is not None  # check_url never returns an empty address list
    raise error


async def _send(
    method: str,
    target: CheckedURL,
    address: str,
    headers: dict[str, str],
    content: bytes | None,
    max_bytes: int,
    timeout: float,
) -> Fetched:
    request_headers = {**headers, "Host": target.url.netloc.decode("ascii")}
    extensions = {"sni_hostname": target.host} if target.url.scheme == "https" else {}
    # A client per connection: proxies from the environment would resolve the name again (trust_env=False),
    # and a pooled TLS connection could be reused for another name on the same address.
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False, timeout=timeout) as client:
        request = client.build_request(
            method,
            target.url.copy_with(host=address),
            headers=request_headers,
            content=content,
            extensions=extensions,
        )
        response = await client.send(request, stream=True)
        try:
            body, truncated = await _read_capped(response, max_bytes)
        finally:
            await response.aclose()
    return Fetched(target.url, response.status_code, response.reason_phrase, response.headers, body, truncated)


async def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    if response.status_code in _REDIRECTS:
        return b"", False
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            return bytes(body[:max_bytes]), True
    return bytes(body), False
