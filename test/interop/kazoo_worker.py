"""A Kazoo client driven line by line over stdin/stdout, for the interoperability tests.

Commands (one JSON object per line): {"op": "acquire", "kind": "lock"|"read"|"write",
"path": ..., "blocking": bool, "timeout": seconds|null}, {"op": "release", "path": ...},
{"op": "contenders", "kind": ..., "path": ...}, {"op": "quit"}. Each answers one JSON line.
"""
import json
import sys

from kazoo.client import KazooClient

client = KazooClient(hosts=sys.argv[1], timeout=10)
client.start()
locks = {}
KINDS = {"lock": client.Lock, "read": client.ReadLock, "write": client.WriteLock}


def answer(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


answer(ready=True)
for line in sys.stdin:
    command = json.loads(line)
    op = command["op"]
    try:
        if op == "quit":
            break
        if op == "acquire":
            lock = KINDS[command["kind"]](command["path"], identifier=command.get("identifier", "kazoo-worker"))
            got = lock.acquire(blocking=command["blocking"], timeout=command.get("timeout"))
            if got:
                locks[command["path"]] = lock
            answer(op=op, acquired=bool(got), node=lock.node if got else None)
        elif op == "release":
            locks.pop(command["path"]).release()
            answer(op=op, released=True)
        elif op == "contenders":
            lock = KINDS[command["kind"]](command["path"])
            answer(op=op, contenders=lock.contenders())
    except Exception as error:  # report it to the test, which fails with the message
        answer(op=op, error=f"{type(error).__name__}: {error}")
for lock in locks.values():
    lock.release()
client.stop()
client.close()
