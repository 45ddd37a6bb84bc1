"""Kazoo 2.8's SetPartitioner (Debian's python3-kazoo) as a member of the partition pass
(bench/partitions): run with /usr/bin/python3 kazoo_partitioner.worker.py <connectionString>
<path> <memberId> <parts> <sessionTimeoutMs> <timeBoundaryMs>.

Used as Kazoo's documentation shows: one KazooClient, one SetPartitioner, and the loop on
its states, woken by its state_change_event. It prints one JSON line per change of what it
may work on: the partition set while ACQUIRED, nothing otherwise (RELEASE means stop work
and release). Times are time.monotonic_ns(), CLOCK_MONOTONIC as Node's
process.hrtime.bigint(). "stop" on stdin: finish() (release the set, leave the party),
close the client, exit.
"""
import json
import sys
import threading
import time

from kazoo.client import KazooClient

CONNECTION, PATH, MEMBER = sys.argv[1], sys.argv[2], sys.argv[3]
PARTS, SESSION_MS, BOUNDARY_MS = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])


def emit(**fields):
    print(json.dumps(dict(hr=str(time.monotonic_ns()), **fields)), flush=True)


def main():
    client = KazooClient(hosts=CONNECTION, timeout=SESSION_MS / 1000.0)
    client.start()
    changed = threading.Event()
    stopping = threading.Event()

    def read_stdin():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stopping.set()
        changed.set()

    threading.Thread(target=read_stdin, daemon=True).start()
    partitioner = client.SetPartitioner(
        path=PATH,
        set=list(range(PARTS)),
        identifier=MEMBER,
        time_boundary=BOUNDARY_MS / 1000.0,
        state_change_event=changed,
    )
    emit(event="ready")
    owned = []

    def own(parts):
        nonlocal owned
        if parts != owned:
            owned = parts
            emit(owned=parts)

    changed.set()
    while True:
        changed.wait()
        changed.clear()
        if stopping.is_set():
            own([])
            partitioner.finish()
            break
        if partitioner.failed:
            own([])
            emit(event="failed")
            break
        if partitioner.release:
            own([])
            partitioner.release_set()
        elif partitioner.acquired:
            own(sorted(partitioner))
    client.stop()
    client.close()
    emit(event="stopped")


main()
