"""The producers' partitioner must place every key exactly where aiokafka's (and the Java
client's) default partitioner does: consumers, the read-your-writes waits and anyone reading a
workspace's events from one partition rely on it."""

import os
import random
import uuid

from aiokafka.partitioner import DefaultPartitioner

from infra.eventlog import key_of, partition_for, partitioner


def test_keyed_records_land_where_the_default_partitioner_puts_them():
    default = DefaultPartitioner()
    rng = random.Random(7)
    keys = [key_of(uuid.UUID(int=rng.getrandbits(128))) for _ in range(300)]
    keys += [b"-", b"", os.urandom(1), os.urandom(37), "é".encode()]
    for n in (1, 2, 3, 6, 12, 50, 64):
        every = list(range(n))
        available = every[: max(1, n // 2)]  # a leader away: keyed records still hash over all partitions
        for key in keys:
            expected = default(key, every, available)
            assert partitioner(key, every, available) == expected, (key, n)
            assert partitioner(key, every, available) == expected  # from the cache, the same
            assert partition_for(key, n) == expected


def test_a_record_without_key_goes_to_an_available_partition():
    every = list(range(12))
    available = [3, 7]
    assert {partitioner(None, every, available) for _ in range(200)} == {3, 7}
    assert {partitioner(None, every, []) for _ in range(500)} == set(every)
