"""Scenario 7 on Kazoo: several free locks from one session. Kazoo has no multi-lock;
what it offers is one Lock per name, taken one after another (as Curator's
InterProcessMultiLock also does), then released in reverse order. The variants run in
turns, a fresh order each cycle, so a burst of machine noise falls on all of them."""
import random

from kazoo_counted import Counted, add, delta, now


def _in_turn(locks):
    for lock in locks:
        lock.acquire()
    for lock in reversed(locks):
        lock.release()


def multi_lock(hosts, base, prefix, locks, cycles, warmup):
    zk = Counted(hosts, notifications=True)
    try:
        lock = lambda suffix: zk.client.Lock(base + "/" + prefix + "-" + suffix, "bench")
        several = [lock("seq-%d" % i) for i in range(locks)]
        one = [lock("one")]
        variants = {"seq": lambda: _in_turn(several), "one": lambda: _in_turn(one)}
        runs = {name: {"latenciesNs": [], "counts": {}} for name in variants}
        order = list(variants)
        for i in range(warmup + cycles):
            random.shuffle(order)
            for name in order:
                before = zk.snapshot()
                start = now()
                variants[name]()
                elapsed = now() - start
                if i >= warmup:
                    runs[name]["latenciesNs"].append(elapsed)
                    add(runs[name]["counts"], delta(before, zk.snapshot()))
        return {"variants": runs}
    finally:
        zk.stop()
