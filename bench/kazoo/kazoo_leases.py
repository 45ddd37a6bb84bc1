"""Scenario 8 on Kazoo: `contenders` sessions loop on one Semaphore(max_leases=...),
each taking a lease, holding it `holdMs`, releasing it. One Semaphore object per
contender, kept and reused, blocking acquire()/release(), as Kazoo documents it.

The measured window opens at grant number `warmupGrants` and closes after `grants` more
grants, or `durationMs` after it opened. Requests and watch events are summed over every
session between the window's ends, so per grant they are a steady state's, not a start's.
"""
import threading
import time

from kazoo_counted import add, delta, now, start_all


class GrantWindow:
    def __init__(self, clients, warmup_grants, grants):
        self.clients = clients
        self.warmup_grants = warmup_grants
        self.grants = grants
        self.lock = threading.Lock()
        self.granted = 0
        self.holding = 0
        self.max_holding = 0
        self.opened = threading.Event()
        self.stopped = threading.Event()
        self.start = self.end = None
        self.before = self.after = None
        self.first = self.last = 0
        if warmup_grants == 0:
            self._open()

    def on_grant(self):
        with self.lock:
            self.holding += 1
            self.max_holding = max(self.max_holding, self.holding)
            self.granted += 1
            if self.granted == self.warmup_grants:
                self._open()
            elif self.grants is not None and self.granted == self.warmup_grants + self.grants:
                self._close()

    def on_release(self):
        with self.lock:
            self.holding -= 1

    def close(self):
        with self.lock:
            if not self.stopped.is_set():
                self._close()

    def _open(self):
        self.before = [c.snapshot() for c in self.clients]
        self.first = self.granted
        self.start = now()
        self.opened.set()

    def _close(self):
        self.end = now()
        self.after = [c.snapshot() for c in self.clients]
        self.last = self.granted
        self.stopped.set()

    def result(self):
        counts = {}
        for before, after in zip(self.before, self.after):
            add(counts, delta(before, after))
        return {
            "grants": self.last - self.first,
            "elapsedNs": self.end - self.start,
            "counts": counts,
            "maxHolding": self.max_holding,
        }


def leases(hosts, base, name, contenders, maxLeases, holdMs, warmupGrants, grants=None, durationMs=None):
    clients = start_all(hosts, contenders, notifications=True)
    path = base + "/" + name
    window = GrantWindow(clients, warmupGrants, grants)
    errors = []

    def contend(client):
        try:
            semaphore = client.client.Semaphore(path, "bench", max_leases=maxLeases)
            while not window.stopped.is_set():
                semaphore.acquire()
                window.on_grant()
                time.sleep(holdMs / 1000)
                window.on_release()
                semaphore.release()
        except Exception as error:  # reported below, after every contender stopped
            errors.append(repr(error))
            window.close()

    try:
        threads = [threading.Thread(target=contend, args=(c,)) for c in clients]
        for thread in threads:
            thread.start()
        if durationMs is not None:
            while not window.opened.wait(0.1) and not window.stopped.is_set():
                pass  # a contender that failed first closes the window unopened
            window.stopped.wait(durationMs / 1000)
            window.close()
        for thread in threads:
            thread.join()
        if errors:
            raise RuntimeError("contenders failed: " + "; ".join(errors))
        return window.result()
    finally:
        for c in clients:
            c.stop()
