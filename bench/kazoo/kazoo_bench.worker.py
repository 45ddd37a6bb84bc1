"""Kazoo 2.8 (Debian's python3-kazoo) as a benchmark worker, the Python side of
bench/workers/impl.protocol.ts: run with /usr/bin/python3 kazoo_bench.worker.py
<connectionString> <baseZnode>, then one JSON command per line on stdin, one JSON answer
per line on stdout.

Kazoo is used as its documentation shows: one KazooClient per session, one Lock /
ReadLock / WriteLock object per lock and contender, kept and reused across acquires, with
blocking acquire() and release(). Times are time.monotonic_ns(), CLOCK_MONOTONIC as
Node's process.hrtime.bigint(), so the orchestrator can subtract times from both.

Requests are counted by wrapping KazooClient._call, which every request goes through
(pings do not); watch notifications only in the multi-lock and lease ops (see
kazoo_counted.py). Those two ops live in kazoo_multi_lock.py and kazoo_leases.py.
"""
import json
import sys
import threading
import time
import uuid

import kazoo.version
from kazoo.exceptions import LockTimeout

from kazoo_counted import Counted, add, delta, now, start_all
from kazoo_leases import leases
from kazoo_multi_lock import multi_lock

CONNECTION = sys.argv[1]
BASE = sys.argv[2]
VERSION = "kazoo %s (Python %s)" % (kazoo.version.__version__, sys.version.split()[0])


def path_of(name):
    return BASE + "/" + name


class Worker:
    def __init__(self):
        self.handoff = None
        self.drain = None
        self.open = set()

    # Scenario 1
    def uncontended(self, name, cycles, warmup):
        zk = Counted(CONNECTION)
        try:
            lock = zk.client.Lock(path_of(name), "bench")
            for _ in range(warmup):
                lock.acquire()
                lock.release()
            before = zk.snapshot()
            start = now()
            for _ in range(cycles):
                lock.acquire()
                lock.release()
            elapsed = now() - start
            return {"cycles": cycles, "elapsedNs": elapsed, "counts": delta(before, zk.snapshot())}
        finally:
            zk.stop()

    # Scenario 2
    def handoff_open(self, name):
        zk = Counted(CONNECTION)
        self.handoff = {"zk": zk, "lock": zk.client.Lock(path_of(name), "bench"), "start": zk.snapshot()}
        return {}

    def handoff_hold(self, name):
        self.handoff["lock"].acquire()
        return {"grantedAt": str(now())}

    def handoff_release(self):
        released_at = now()
        self.handoff["lock"].release()
        return {"releasedAt": str(released_at)}

    def handoff_close(self):
        state, self.handoff = self.handoff, None
        result = {"counts": delta(state["start"], state["zk"].snapshot())}
        state["zk"].stop()
        return result

    # Scenario 3
    def drain_setup(self, name, waiters):
        clients = start_all(CONNECTION, waiters + 1)
        path = path_of(name)
        holder = clients[0].client.Lock(path, "bench")
        holder.acquire()
        ends = [None] * waiters
        errors = []

        def wait(i):
            try:
                lock = clients[i + 1].client.Lock(path, "bench")
                lock.acquire()
                lock.release()
                ends[i] = now()
            except Exception as error:  # reported by drain.go
                errors.append(repr(error))

        threads = [threading.Thread(target=wait, args=(i,)) for i in range(waiters)]
        for thread in threads:
            thread.start()
        self.drain = {"clients": clients, "holder": holder, "threads": threads, "ends": ends, "errors": errors}
        return {}

    def drain_go(self):
        state, self.drain = self.drain, None
        clients = state["clients"]
        try:
            before = [c.snapshot() for c in clients]
            start = now()
            state["holder"].release()
            for thread in state["threads"]:
                thread.join()
            if state["errors"]:
                raise RuntimeError("waiters failed: " + "; ".join(state["errors"]))
            counts = {}
            for c, b in zip(clients, before):
                add(counts, delta(b, c.snapshot()))
            return {"drainNs": max(state["ends"]) - start, "counts": counts}
        finally:
            for c in clients:
                c.stop()

    # Scenario 6
    def read_heavy(self, name, readers, durationMs, writerPauseMs, stallTimeoutMs):
        clients = start_all(CONNECTION, readers + 1)
        path = path_of(name)
        stall_timeout = stallTimeoutMs / 1000
        stopped = threading.Event()
        reader_cycles = [0] * readers
        reader_stalls = [0] * readers
        writer_stalls = [0]
        counted = [0] * (readers + 1)
        waits = []
        errors = []

        def read(i):
            try:
                lock = clients[i].client.ReadLock(path, "bench")
                while not stopped.is_set():
                    try:
                        lock.acquire(timeout=stall_timeout)
                    except LockTimeout:
                        reader_stalls[i] += 1
                        continue
                    lock.release()
                    if not stopped.is_set():
                        reader_cycles[i] += 1
                    counted[i] += 1
            except Exception as error:
                errors.append(repr(error))

        def write():
            try:
                lock = clients[readers].client.WriteLock(path, "bench")
                while True:
                    if stopped.wait(writerPauseMs / 1000):
                        return
                    asked = now()
                    try:
                        lock.acquire(timeout=stall_timeout)
                    except LockTimeout:
                        waits.append(now() - asked)
                        writer_stalls[0] += 1
                        continue
                    waits.append(now() - asked)
                    lock.release()
                    counted[readers] += 1
            except Exception as error:
                errors.append(repr(error))

        try:
            before = [c.snapshot() for c in clients]
            threads = [threading.Thread(target=read, args=(i,)) for i in range(readers)]
            threads.append(threading.Thread(target=write))
            start = now()
            for thread in threads:
                thread.start()
            time.sleep(durationMs / 1000)
            stopped.set()
            elapsed = now() - start
            for thread in threads:
                thread.join()
            if errors:
                raise RuntimeError("; ".join(errors))
            counts = {}
            for c, b in zip(clients, before):
                add(counts, delta(b, c.snapshot()))
            return {
                "readerCycles": sum(reader_cycles),
                "elapsedNs": elapsed,
                "writerWaitsNs": waits,
                "readerStalls": sum(reader_stalls),
                "writerStalls": writer_stalls[0],
                "counts": counts,
                "countedCycles": sum(counted),
            }
        finally:
            for c in clients:
                c.stop()

    def close(self):
        if self.handoff:
            self.handoff["zk"].stop()
        if self.drain:
            for c in self.drain["clients"]:
                c.stop()


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    worker = Worker()
    ops = {
        "clock": lambda: {"now": str(now())},
        "cpu": lambda: {"cpuNs": str(time.process_time_ns())},
        "uncontended": worker.uncontended,
        "handoff.open": worker.handoff_open,
        "handoff.hold": worker.handoff_hold,
        "handoff.release": worker.handoff_release,
        "handoff.close": worker.handoff_close,
        "drain.setup": worker.drain_setup,
        "drain.go": worker.drain_go,
        "readHeavy": worker.read_heavy,
        "multiLock": lambda **params: multi_lock(CONNECTION, BASE, **params),
        "leases": lambda **params: leases(CONNECTION, BASE, **params),
    }
    send({"ready": True, "impl": "kazoo", "pid": __import__("os").getpid(), "version": VERSION})
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        command = json.loads(line)
        op, params, id_ = command["op"], command.get("params") or {}, command.get("id")
        if op == "quit":
            break
        try:
            handler = ops.get(op)
            if handler is None:
                raise RuntimeError(op + " is not supported by kazoo")
            send({"id": id_, "result": handler(**params)})
        except Exception as error:
            send({"id": id_, "error": "%s: %s" % (type(error).__name__, error)})
    worker.close()


if __name__ == "__main__":
    uuid.uuid4()  # warm the uuid module (Lock objects use it)
    main()
