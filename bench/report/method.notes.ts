import type { ScenarioCounts } from '../bench.options.js';

/** How each scenario is measured, for the markdown page, with the counts of the run (and its warm-up, in ms). */
export function methodNotes(c: ScenarioCounts, warmupMs: number, freshWorkers = false): string[] {
  const n = (value: number): string => value.toLocaleString('en-US');
  return [
    [
      '**Implementations.** *ours*: this library through its public API with default options (`ZkLockBackend`, `ReentrantLocker`).',
      '*raw*: node-zookeeper-client 1.1.3 as its users get it, with plain callbacks, the bare recipe (create EPHEMERAL_SEQUENTIAL,',
      'getChildren, delete; a waiter watches its blocker with getData), serial, no pipelining: the floor of round trips (ours',
      "encodes with its compiled jute records, raw with the client's own, so ours can take less client CPU per message).",
      '*kazoo*: Kazoo 2.8 (Debian `python3-kazoo`),',
      '`Lock`/`ReadLock`/`WriteLock` objects kept and reused, blocking `acquire()`/`release()`. *curator*: Apache Curator 5.4',
      "(Debian `libcurator-recipes-java`, ZooKeeper client 3.8) on Java 17 with the JVM's default flags, one `CuratorFramework`",
      'per session (`ExponentialBackoffRetry(1000, 3)`, default timeouts), `InterProcessMutex`, `InterProcessReadWriteLock`,',
      '`InterProcessMultiLock` and `InterProcessSemaphoreV2` objects kept and reused, blocking `acquire()`/`release()`; its worker',
      '(bench/curator) is compiled with javac when the run starts. Each runs in its own worker process(es); the orchestrator only',
      'sends commands between timed sections.',
    ].join(' '),
    warmupMs > 0
      ? [
          `**JIT warm-up.** Before it reports ready, each Curator and Node worker (ours, raw) runs its own recipes in a loop for`,
          `${n(warmupMs / 1e3)} s (uncontended cycles, a multi-lock, a lease semaphore, a read-write lock, as far as it has them), so`,
          'its JIT has compiled their code paths: a JVM starts interpreted, and so does V8; CPython has no JIT to warm.',
          `Then ${n(warmupMs / 1e3)} s of pipelined raw cycles get the server's JIT hot, and the unmeasured warm-up round(s) run every`,
          'scenario for every implementation.',
        ].join(' ')
      : '**JIT warm-up.** None in this run (`--quick` or `--warmup 0`): neither the server nor the Curator and Node workers were warmed up first.',
    [
      freshWorkers
        ? '**Rounds.** Each scenario runs in workers started and warmed for it alone (`--fresh-workers`, as JMH forks a JVM per benchmark): its rounds one after another, each implementation in a fresh random order, after unmeasured warm-up.'
        : '**Rounds.** Every round runs each scenario for each implementation, in a fresh random order, after unmeasured warm-up; one set of workers runs every scenario.',
      "Figures are medians over rounds; ratios are the median of each round's ours ÷ other, the two measured side by side.",
    ].join(' '),
    [
      `**1. Uncontended.** One session, one lock name, \`acquire\` + \`release\` in a serial loop. Each round is ${c.uncontended.slices}`,
      `slice(s) per implementation, taken in turns (fresh order each time), each ${n(c.uncontended.cycles)} timed cycles after`,
      `${n(c.uncontended.warmup)} warm-up cycles on a fresh session; the round's figure is all its cycles over all its timed time.`,
      "In each of raw's slices, right after its serial cycles, as many again with the children read sent behind the create, as",
      'ours sends it (after as many warm-up cycles): the floor of round trips for any client whose `release()` answers once its',
      'delete is committed; targets 1f and E1f give it ÷ Curator, per round. Then as many again (after as many warm-up cycles)',
      'on a session of its own spoken by hand: every frame encoded by the benchmark and written on a bare socket, the read in',
      'the same write as the create, no client library at all (`bench/support/wire.session.ts`): about the most any Node client',
      'sending these requests could reach, however lean its transport; targets 1g and E1g give it ÷ Curator.',
    ].join(' '),
    [
      `**2. Handoff.** Two processes pass one lock back and forth, ${n(c.handoff.handoffs)} measured handoffs after ${n(c.handoff.warmup)}.`,
      "Before each release the orchestrator waits until the waiter is queued (its node exists and its watch on the holder's node",
      "is in the server's `wchc` table). Latency: the waiter's clock right after its acquire returned minus the holder's clock",
      'right before its release call. Both are CLOCK_MONOTONIC (Node `process.hrtime.bigint()`, Python `time.monotonic_ns()`,',
      'Java `System.nanoTime()` on Linux),',
      "one clock for every process on the machine; the run checks that each worker's reading falls between two of the orchestrator's.",
    ].join(' '),
    [
      `**3. Drain.** A holder and N = ${c.drain.waiters.join(' and ')} waiters, each its own session in one process, all queued`,
      "(checked as above) before the holder releases; each waiter releases as soon as it is granted. Drain: the holder's release",
      "call to the last waiter's release done. Requests and notifications per handoff come from the library's own counter,",
      `summed over the N+1 sessions. Each round drains each size ${c.drain.slices} time(s) per implementation, in turns; the`,
      "round's figure is the median.",
    ].join(' '),
    [
      `**4. Many locks.** ${n(c.manyLocks.locks)} distinct names from one session at once, each acquired and released`,
      `${c.manyLocks.cyclesPerLock} times in a row. The library starts from cold names (it creates their directories itself, as in`,
      "use); the raw loop's directories are made before timing. Heap per held lock: `heapUsed` after full GCs while holding",
      `${n(c.manyLocks.locks)} fresh locks, minus before, divided by ${n(c.manyLocks.locks)}, in a short-lived process of its own`,
      '(`bench/impl/ours-heap.probe.ts`), so that its forced collections never run in the worker the other scenarios time.',
    ].join(' '),
    [
      `**5. Reentrant.** \`withLock(name, …)\` called inside a \`withLock\` on the same name, ${n(c.reentrant.calls)} times: time`,
      "per nested call. The library's request counter must not move (a timer-driven liveness heartbeat is not counted).",
    ].join(' '),
    [
      `**6. Read-heavy.** ${c.readHeavy.readers} reader sessions loop read acquire + release on one name while a writer session`,
      `takes the write lock every ${c.readHeavy.writerPauseMs} ms, for ${n(c.readHeavy.durationMs)} ms. Every acquire gives up after`,
      `${c.readHeavy.stallTimeoutMs} ms (counted as a stall; the writer's wait then counts as that long), because Kazoo 2.8's`,
      'ReadLock otherwise deadlocks with a writer queued after it (python-zk/kazoo#649). Curator: one `InterProcessReadWriteLock`',
      'per session, its `readLock()` or `writeLock()` with `acquire(time, unit)`.',
    ].join(' '),
    [
      `**7. Multi-lock.** One session, ${c.multiLock.locks} free names (their directories made by warm-up cycles), acquired and`,
      "released as a group: *ours* with `acquireAll` (every name's requests sent together) and `release()`; *kazoo* with one",
      '`Lock` per name, acquired one after another and released in reverse order (Kazoo has no multi-lock); *curator* with one',
      '`InterProcessMultiLock` over the names, which takes them one after another and releases them in reverse order (and the',
      'same by hand, one `InterProcessMutex` per name, as *in turn*); *raw* sends the requests `acquireAll` sends, with plain callbacks',
      '(one multi creating every node with every children read behind it, then one multi deleting them), except that it reads',
      "each name's children with a read of its own (node-zookeeper-client has no `multiRead`) where ours sends the reads as one",
      '`multiRead` on ZooKeeper 3.6 and later: the floor of a group in round trips, not in messages. Also a single name',
      '(all four), and ours and Curator with the names acquired in turn. Each',
      `implementation runs its variants in turns, a fresh order every cycle, ${n(c.multiLock.cycles)} timed cycles after`,
      `${n(c.multiLock.warmup)} per slice, ${c.multiLock.slices} slice(s) per round taken in turns with the other implementations;`,
      "figures are p50 latencies; *acquireAll ÷ 1 name* is each round's ratio of ours' two p50s, measured in the same cycles.",
    ].join(' '),
    [
      `**8. Leases.** A semaphore of ${c.leases.maxLeases} leases (*ours* \`acquireLease\`, *kazoo* \`Semaphore(max_leases=${c.leases.maxLeases})\`,`,
      `*curator* \`InterProcessSemaphoreV2(client, path, ${c.leases.maxLeases})\` with \`returnLease\`; one object per contender, kept and`,
      `reused). ${c.leases.contenders} contenders, each its own session in one process, loop`,
      `acquire → hold ${c.leases.holdMs} ms → release; grants/s over ${n(c.leases.durationMs)} ms after ${c.leases.warmupGrants} warm-up grants.`,
      `Then, for N = ${c.leases.costContenders.join(' and ')} contenders, ${n(c.leases.costGrants)} grants after N warm-up grants: requests`,
      "sent plus watch notifications received over all N sessions, per grant (both counted at the window's two ends, so a",
      "steady state's cost, not the first queueing). Every contender counts the leases held at once: never above the limit.",
    ].join(' '),
    [
      `**9. Idle.** ${c.idle.clients} sessions of ${n(c.idle.sessionTimeoutMs)} ms (ours only: an idle Kazoo or Curator client`,
      'sends pings, which are not transactions) stay idle for 0.6 of their timeout, long enough for the proof of their last',
      "write to go stale; transactions are counted by the growth of the server's last zxid (`srvr`), which counts every",
      'write of every client, so this scenario runs alone. Then each session acquires a lock (call to grant: *after idle*); one',
      `keeps it for ${n(c.idle.holdMs)} ms with the others closed (transactions per holding session); then it takes the lock`,
      `${c.idle.warmAcquires} times in a row (*warm*). *after idle ÷ warm* is each round's ratio of the two p50s.`,
    ].join(' '),
    [
      "**Round trips.** Requests by op per unit of work: the library's `client.counter`, the raw loop's own count, Kazoo by",
      "wrapping `KazooClient._call`. Kazoo's watch notifications are counted only in scenarios 7 and 8 (by wrapping its",
      "connection's `_read_watch_event`); elsewhere n/c. Curator through `CuratorFrameworkFactory.builder().zookeeperFactory(…)`:",
      'its ZooKeeper handle is a `ZooKeeperAdmin` (what Curator makes by default) that counts every request method it is called',
      'through (create, getChildren, getData, exists, delete as remove, setData, multi, sync, removeWatches, getConfig; pings and',
      "the session's close go around them), and its watch notifications in every scenario, by wrapping each watcher set through",
      'it (one per node and session in these recipes, so one per event the server sends). Curator also reads /zookeeper/config',
      'twice per session as it connects (its EnsembleTracker): counted before any window opens. Each missed ratio target is',
      'explained in the notes from its two round-trip rows: the difference in time per unit split into what the difference in',
      'requests (+ notifications) costs and what is time per message (unit time ÷ messages; requests that travel together share a wait).',
    ].join(' '),
    [
      '**Ensemble.** Scenarios 1 and 2 again (a full run, or `--ensemble`), on three ZooKeeper servers on loopback with the',
      "standalone server's flags and forceSync: every session of every implementation, and the orchestrator's probe, on the",
      'same follower, so each write goes through the leader and waits for a quorum (a session per random server would add a',
      'leader-or-not lottery to every per-round ratio). Fresh workers, the same warm-up and the same rounds as above.',
    ].join(' '),
  ];
}
