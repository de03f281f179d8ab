"""Our Kafka clients on the real broker: a consumer whose start fails does not stay in its group.

The fault is injected at the one moment that matters: the consumer has joined its group and got
its partitions, then its start fails (as when the broker goes away during a process's start).
"""

from __future__ import annotations

import sys
import uuid

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaConnectionError

from infra.eventlog import make_consumer, start_or_stop


async def test_a_consumer_whose_start_fails_leaves_its_group_and_its_partitions(settings):
    group = f"{settings.consumer_group_prefix}start-fails-{uuid.uuid4().hex[:8]}"
    failing = make_consumer(settings, group_id=group)
    failing.subscribe([settings.events_topic])
    waiting = failing._subscription.wait_for_assignment
    assigned: set[int] = set()

    def broker_gone_once_assigned():
        """The start's own wait (not the fetcher's or the coordinator's) ends in the error."""
        waiter = waiting()
        if sys._getframe(1).f_code is not AIOKafkaConsumer.start.__code__:
            return waiter

        async def then_fail():
            await waiter
            assigned.update(tp.partition for tp in failing.assignment())
            raise KafkaConnectionError("injected: the broker went away during the start")
        return then_fail()

    failing._subscription.wait_for_assignment = broker_gone_once_assigned
    with pytest.raises(KafkaConnectionError):
        await start_or_stop(failing)
    assert assigned == set(range(settings.events_partitions))  # it had joined and held them all

    # The next member of the group gets every partition: nothing stays with a member nobody reads.
    taker = make_consumer(settings, group_id=group)
    taker.subscribe([settings.events_topic])
    await start_or_stop(taker)
    try:
        assert {tp.partition for tp in taker.assignment()} == set(range(settings.events_partitions))
    finally:
        await taker.stop()
