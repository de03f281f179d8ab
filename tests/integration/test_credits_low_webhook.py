"""credits.low from end to end: charges cross the warning threshold, the credits watch appends
CreditsLow once per crossing, and the dispatcher delivers exactly one signed `credits.low` per
crossing to a real HTTPS receiver; a top-up and a new crossing give a second one."""

from __future__ import annotations

import uuid

from services.application.workspaces import AddCredits, CreateWorkspace
from services.processes.credits_watch import CreditsWatch
from services.processes.dispatcher import run_dispatcher
from services.processes.relay import Relay
from tests.helpers import handle
from tests.support.monitoring import charge, wait_for
from tests.support.webhooks import Receiver, TestCA, _register, verify, wait_dispatched, webhook_settings


async def test_each_downward_crossing_gives_exactly_one_credits_low_delivery(settings, store, pool, background,
                                                                             tmp_path):
    ca = TestCA(tmp_path)
    settings = webhook_settings(settings, ca)
    receiver = await Receiver(ca, "127.0.0.6").start()
    try:
        ws, _ = await handle(store, CreateWorkspace(name="low", plan="pro", credits=100, rate_limit=1000))
        _, secret = await _register(store, settings, ws, receiver.url(), ["credits.low", "job.completed"])
        background.start(Relay(settings).run)
        background.start(lambda stop: run_dispatcher(settings, stop))
        watch = CreditsWatch(settings)
        background.start(watch.run)

        async def lows() -> list:
            return [e for e in await store.read_stream(ws) if e.type == "CreditsLow"]

        async def delivered(n: int):
            await wait_dispatched(settings, pool)
            return len(receiver.hits) >= n

        await charge(store, ws, 70)  # 30 % left: above the warning threshold (20 %)
        await charge(store, ws, 15)  # 15 % left: crosses
        await wait_for(lambda: delivered(1), what="first credits.low delivery")
        await charge(store, ws, 5)   # 10 % left: still under, no new crossing
        await charge(store, ws, 6)   # 4 % left: critical, still the same crossing
        await wait_for(lambda: _len_is(lows, 1), what="watch settled")
        await wait_dispatched(settings, pool)
        assert len(receiver.hits) == 1
        first = verify(secret, receiver.hits[0])
        assert first["type"] == "credits.low" and first["workspace_id"] == str(ws)

        await handle(store, AddCredits(ws, amount=100))  # 104 left of 200: 52 %
        await charge(store, ws, 70)  # 17 % left: crosses again
        await wait_for(lambda: delivered(2), what="second credits.low delivery")
        await wait_for(lambda: _len_is(lows, 2), what="second CreditsLow")
        await wait_dispatched(settings, pool)
        assert len(receiver.hits) == 2
        second = verify(secret, receiver.hits[1])
        assert second["type"] == "credits.low"
        assert uuid.UUID(first["id"]) != uuid.UUID(second["id"])  # two crossings, two deliveries
    finally:
        await receiver.stop()


async def _len_is(fetch, n: int) -> bool:
    return len(await fetch()) == n
