import type { ScenarioCounts } from '../bench.options.js';

/** How each scenario is measured, for the markdown page, with the counts of the run. */
export function methodNotes(c: ScenarioCounts): string[] {
  const n = (value: number): string => value.toLocaleString('en-US');
  return [
    [
      '**Implementations.** *ours*: this library through its public API with default options (`ZkLockBackend`, `ReentrantLocker`).',
      '*raw*: node-zookeeper-client 1.1.3 with plain callbacks, the bare recipe (create EPHEMERAL_SEQUENTIAL, getChildren, delete;',
      'a waiter watches its blocker with getData), serial, no pipelining: the floor. *kazoo*: Kazoo 2.8 (Debian `python3-kazoo`),',
      '`Lock`/`ReadLock`/`WriteLock` objects kept and reused, blocking `acquire()`/`release()`. Each runs in its own worker',
      'process(es); the orchestrator only sends commands between timed sections.',
    ].join(' '),
    [
      '**Rounds.** Every round runs each scenario for each implementation, in a fresh random order, after unmeasured warm-up.',
      "Figures are medians over rounds; ratios are the median of each round's ours ÷ other, the two measured side by side.",
    ].join(' '),
    [
      `**1. Uncontended.** One session, one lock name, \`acquire\` + \`release\` in a serial loop. Each round is ${c.uncontended.slices}`,
      `slice(s) per implementation, taken in turns (fresh order each time), each ${n(c.uncontended.cycles)} timed cycles after`,
      `${n(c.uncontended.warmup)} warm-up cycles on a fresh session; the round's figure is all its cycles over all its timed time.`,
    ].join(' '),
    [
      `**2. Handoff.** Two processes pass one lock back and forth, ${n(c.handoff.handoffs)} measured handoffs after ${n(c.handoff.warmup)}.`,
      "Before each release the orchestrator waits until the waiter is queued (its node exists and its watch on the holder's node",
      "is in the server's `wchc` table). Latency: the waiter's clock right after its acquire returned minus the holder's clock",
      'right before its release call. Both are CLOCK_MONOTONIC (Node `process.hrtime.bigint()`, Python `time.monotonic_ns()`),',
      "one clock for every process on the machine; the run checks that each worker's reading falls between two of the orchestrator's.",
    ].join(' '),
    [
      `**3. Drain.** A holder and N = ${c.drain.waiters.join(' and ')} waiters, each its own session in one process, all queued`,
      '(checked as above) before the holder releases; each waiter releases as soon as it is granted. Drain: the holder\'s release',
      "call to the last waiter's release done. Requests and notifications per handoff come from the library's own counter,",
      `summed over the N+1 sessions. Each round drains each size ${c.drain.slices} time(s) per implementation, in turns; the`,
      "round's figure is the median.",
    ].join(' '),
    [
      `**4. Many locks.** ${n(c.manyLocks.locks)} distinct names from one session at once, each acquired and released`,
      `${c.manyLocks.cyclesPerLock} times in a row. The library starts from cold names (it creates their directories itself, as in`,
      "use); the raw loop's directories are made before timing. Heap per held lock: `heapUsed` after full GCs (worker run with",
      `\`--expose-gc\`) while holding the ${n(c.manyLocks.locks)} locks, minus before, divided by ${n(c.manyLocks.locks)}.`,
    ].join(' '),
    [
      `**5. Reentrant.** \`withLock(name, …)\` called inside a \`withLock\` on the same name, ${n(c.reentrant.calls)} times: time`,
      "per nested call. The library's request counter must not move (a timer-driven liveness heartbeat is not counted).",
    ].join(' '),
    [
      `**6. Read-heavy.** ${c.readHeavy.readers} reader sessions loop read acquire + release on one name while a writer session`,
      `takes the write lock every ${c.readHeavy.writerPauseMs} ms, for ${n(c.readHeavy.durationMs)} ms. Every acquire gives up after`,
      `${c.readHeavy.stallTimeoutMs} ms (counted as a stall; the writer's wait then counts as that long), because Kazoo 2.8's`,
      'ReadLock otherwise deadlocks with a writer queued after it (python-zk/kazoo#649).',
    ].join(' '),
    [
      `**7. Multi-lock.** One session, ${c.multiLock.locks} free names (their directories made by warm-up cycles), acquired and`,
      "released as a group: *ours* with `acquireAll` (every name's requests sent together) and `release()`; *kazoo* with one",
      '`Lock` per name, acquired one after another and released in reverse order (Kazoo has no multi-lock; Curator\'s',
      'InterProcessMultiLock also takes them in turn); *raw* sends the requests `acquireAll` sends, with plain callbacks',
      '(one multi creating every node with every children read behind it, then one multi deleting them): the floor of a group. Also a single name',
      '(all three), and ours with the names acquired in turn. Each',
      `implementation runs its variants in turns, a fresh order every cycle, ${n(c.multiLock.cycles)} timed cycles after`,
      `${n(c.multiLock.warmup)} per slice, ${c.multiLock.slices} slice(s) per round taken in turns with the other implementation;`,
      "figures are p50 latencies; *acquireAll ÷ 1 name* is each round's ratio of ours' two p50s, measured in the same cycles.",
    ].join(' '),
    [
      `**8. Leases.** A semaphore of ${c.leases.maxLeases} leases (*ours* \`acquireLease\`, *kazoo* \`Semaphore(max_leases=${c.leases.maxLeases})\`,`,
      `one object per contender, kept and reused). ${c.leases.contenders} contenders, each its own session in one process, loop`,
      `acquire → hold ${c.leases.holdMs} ms → release; grants/s over ${n(c.leases.durationMs)} ms after ${c.leases.warmupGrants} warm-up grants.`,
      `Then, for N = ${c.leases.costContenders.join(' and ')} contenders, ${n(c.leases.costGrants)} grants after N warm-up grants: requests`,
      'sent plus watch notifications received over all N sessions, per grant (both counted at the window\'s two ends, so a',
      'steady state\'s cost, not the first queueing). Every contender counts the leases held at once: never above the limit.',
    ].join(' '),
    [
      "**Round trips.** Requests by op per unit of work: the library's `client.counter`, the raw loop's own count, Kazoo by",
      "wrapping `KazooClient._call`. Kazoo's watch notifications are counted only in scenarios 7 and 8 (by wrapping its",
      "connection's `_read_watch_event`); elsewhere n/c.",
    ].join(' '),
  ];
}
