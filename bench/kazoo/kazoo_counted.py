"""A KazooClient that counts what it sends (and, when asked, the watch events it reads),
by the op names the library's counter uses, plus the small helpers every Kazoo op of the
benchmark shares. Imported by kazoo_bench.worker.py and its op modules."""
import threading
import time

from kazoo.client import KazooClient

# Kazoo's request classes, by the op names the library's counter uses.
OP_NAMES = {
    "Create": "create",
    "Create2": "create",
    "GetChildren": "getChildren",
    "GetChildren2": "getChildren",
    "GetData": "getData",
    "Exists": "exists",
    "Delete": "remove",
    "SetData": "setData",
}

now = time.monotonic_ns


class Counted:
    """A started KazooClient whose requests are counted by op name.

    Requests are counted by wrapping KazooClient._call, which every request goes through
    (pings do not). With notifications=True the watch events the connection reads are
    counted too ("notification"), by wrapping its _read_watch_event before the connection
    thread starts: one per event the server sent, however many Python watchers it wakes.
    """

    def __init__(self, hosts, notifications=False):
        self.counts = {}
        self.lock = threading.Lock()
        self.client = KazooClient(hosts=hosts, timeout=10)
        call = self.client._call

        def counted(request, async_object):
            self.count(OP_NAMES.get(type(request).__name__, type(request).__name__))
            return call(request, async_object)

        self.client._call = counted
        if notifications:
            connection = self.client._connection
            read_event = connection._read_watch_event

            def counted_event(buffer, offset):
                self.count("notification")
                return read_event(buffer, offset)

            connection._read_watch_event = counted_event
        self.client.start(timeout=15)

    def count(self, op):
        with self.lock:
            self.counts[op] = self.counts.get(op, 0) + 1

    def snapshot(self):
        with self.lock:
            return dict(self.counts)

    def stop(self):
        try:
            self.client.stop()
            self.client.close()
        except Exception:  # closing after a failure: nothing more to do
            pass


def delta(before, after):
    out = {}
    for op, n in after.items():
        d = n - before.get(op, 0)
        if d:
            out[op] = d
    return out


def add(into, more):
    for op, n in more.items():
        into[op] = into.get(op, 0) + n
    return into


def start_all(hosts, n, notifications=False):
    """n started clients, started in parallel; none left running if one fails."""
    clients = [None] * n

    def start(i):
        clients[i] = Counted(hosts, notifications)

    threads = [threading.Thread(target=start, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if any(c is None for c in clients):
        for c in clients:
            if c:
                c.stop()
        raise RuntimeError("a Kazoo client failed to start")
    return clients
