"""message.send's per-user limit shared by every process through Redis (chat/ratelimit.py)."""

import secrets

from chat.ratelimit import RateLimiter, SharedRateLimiter, send_limiter
from tests.support.production import REDIS_URL, require_servers


def two_processes(burst: int) -> tuple[SharedRateLimiter, SharedRateLimiter]:
    prefix = f"agentweb-test-{secrets.token_hex(4)}"
    return (
        SharedRateLimiter(per_minute=1, burst=burst, redis_url=REDIS_URL, prefix=prefix),
        SharedRateLimiter(per_minute=1, burst=burst, redis_url=REDIS_URL, prefix=prefix),
    )


async def test_the_limit_holds_across_processes():
    require_servers()
    first, second = two_processes(burst=2)

    assert [await first.aallow(7), await second.aallow(7), await first.aallow(7), await second.aallow(7)] == [
        True,
        True,
        False,
        False,
    ]


async def test_each_user_has_a_bucket_of_their_own():
    require_servers()
    first, second = two_processes(burst=1)

    assert [await first.aallow(7), await second.aallow(8)] == [True, True]


async def test_without_redis_each_process_limits_on_its_own():
    limiter = SharedRateLimiter(per_minute=1, burst=1, redis_url="redis://127.0.0.1:1/0")

    assert [await limiter.aallow(7), await limiter.aallow(7)] == [True, False]


def test_one_process_keeps_its_buckets_in_memory(settings):
    settings.REDIS_URL = ""

    assert isinstance(send_limiter(settings), RateLimiter)


async def test_a_token_given_back_can_be_taken_again_in_any_process_never_past_the_burst():
    require_servers()
    first, second = two_processes(burst=1)

    taken = [await first.aallow(7), await second.aallow(7)]
    await first.agive_back(7)
    await first.agive_back(7)  # a second give-back does not raise the bucket past its burst

    assert [*taken, await second.aallow(7), await first.aallow(7)] == [True, False, True, False]
