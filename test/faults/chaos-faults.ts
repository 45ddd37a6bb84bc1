import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { waitFor } from '../support/wait-for';
import { expireSession } from '../support/zookeeper/expire-session';
import type { PartitionableEnsemble } from '../support/zookeeper/partitionable-ensemble';
import { MS, now, processOf, type Rng, type Step, type Worker } from './chaos-rig';
import type { LogState } from './chaos-state';

/** What the faults act on: the chaos test's workers, ensemble, log and its state. */
export interface Rig {
  readonly rng: Rng;
  readonly step: Step;
  readonly workers: readonly Worker[];
  readonly state: LogState;
  readonly ensemble: PartitionableEnsemble;
  readonly logPath: string;
  /** How long a section lasts when the test asks for a long one (SIGUSR2). */
  readonly askedLongMs: number;
  /** How many loops each worker runs. */
  readonly loopsPerWorker: number;
  /** The workers' session timeout. */
  readonly sessionMs: number;
  /** Starts (again) the process of `worker`. */
  start(worker: Worker): void;
  /** Waits until its (new) process reports a session. */
  connectedAgain(worker: Worker): Promise<unknown>;
}

/** A fault with its random choices drawn: how long it should take, and how to run it. */
export interface Plan {
  readonly estimateMs: number;
  run(): Promise<string>;
}

/**
 * The faults, each drawing its random choices from `rig.rng` when planned (so a seed
 * replays the schedule). Each resolves with a line for the report once healed.
 */
export function faultPlans(rig: Rig): Record<string, () => Plan> {
  const { rng, step, workers, state, ensemble, logPath } = rig;
  /** The worker inside a section of the single lock, if any. */
  const holder = (): Worker | undefined => workers.find((w) => state.update().lockSection(processOf(w)));
  const blackhole = async (w: Worker, ms: number): Promise<void> => {
    for (const p of w.proxies) p.blackhole();
    await sleep(ms);
    for (const p of w.proxies) p.heal();
  };
  return {
    kill: () => {
      const random = rng.pick(workers);
      const aimAtHolder = rng.int(0, 1) === 1;
      return {
        // What the killed process held stays held until its session expires: the run
        // should not end on a kill whose aftermath the recovery would have to wait out.
        estimateMs: 1500 + rig.sessionMs,
        async run() {
          const w = aimAtHolder ? (holder() ?? random) : random;
          const inside = state.update().sectionsOf(processOf(w));
          await step(`SIGKILL ${w.name}`, w.process.kill(), 5000);
          appendFileSync(logPath, `killed ${processOf(w)} - ${now()}\n`);
          w.incarnation++;
          rig.start(w);
          await rig.connectedAgain(w);
          return `SIGKILL ${w.name}${inside.length > 0 ? ` inside ${inside.join(', ')}` : ''}, restarted as ${processOf(w)}`;
        },
      };
    },
    expire: () => {
      const w = rng.pick(workers);
      return {
        estimateMs: 1000,
        async run() {
          const proc = processOf(w);
          const credentials = w.credentials!;
          const stoppedAt = now();
          await step(`cut ${proc} off`, Promise.all(w.proxies.map((p) => p.stop())), 5000);
          // A session closed by someone else is a fault no holder can see coming (unlike
          // an expiry, which the lock-lost signal anticipates): expiring it mid-section
          // would only show that, so wait until the worker has processed everything it
          // received (it saw the disconnect) and is outside any section of any loop. Cut
          // off, it can enter none until it reconnects; one inside a long section leaves
          // it when its signal aborts (at most a session timeout after its last answer).
          const quiet = await waitFor(
            () => {
              state.update();
              const cutOff = state.connected.get(proc) === false || (state.lastDisconnect.get(proc) ?? 0n) > stoppedAt;
              return cutOff && state.sectionsOf(proc).length === 0;
            },
            { timeoutMs: 8000, intervalMs: 5, what: `${proc} to be cut off and outside any section` },
          ).catch(() => false);
          if (quiet)
            await step(
              `expire ${proc}'s session`,
              expireSession(ensemble.connectionString, credentials, 10_000, { blockEventLoop: false }),
              15_000,
            );
          await step(`reconnect ${proc}`, Promise.all(w.proxies.map((p) => p.start())), 5000);
          return quiet ? `expired the session of ${proc}` : `expire of ${proc} skipped: not quiet within 8 s`;
        },
      };
    },
    blackhole: () => {
      const random = rng.pick(workers);
      const aimAtHolder = rng.int(0, 1) === 1;
      const ms = rng.int(300, 6000);
      return {
        estimateMs: ms,
        async run() {
          const w = aimAtHolder ? (holder() ?? random) : random;
          await blackhole(w, ms);
          return `black-holed ${processOf(w)} for ${ms} ms`;
        },
      };
    },
    partition: () => {
      const drawn = rng.pick(workers);
      // Longer than the server can take to expire the session (its last contact + 4 s,
      // rounded up to the next tick), shorter than the section.
      const ms = rng.int(4600, rig.askedLongMs);
      return {
        estimateMs: rig.askedLongMs + 500,
        async run() {
          // Asks every loop of the worker for a section longer than a session, and cuts the
          // worker off once its single-lock loop is inside: its session expires while it
          // holds the lock (and whatever multi-lock and leases its other loops hold by
          // then), and others get them. Aimed at a connected worker (one still
          // reconnecting would not enter in time).
          const isConnected = (x: Worker) => state.update().connected.get(processOf(x)) === true;
          const w = isConnected(drawn) ? drawn : (workers.find(isConnected) ?? drawn);
          const proc = processOf(w);
          const askedAt = now();
          w.process.signal('SIGUSR2');
          const entered = await waitFor(
            () => {
              const inside = state.update().lockSection(proc);
              return inside?.longUntil !== undefined && inside.longUntil - askedAt >= BigInt(rig.askedLongMs) * MS
                ? inside.section
                : undefined;
            },
            { timeoutMs: 8000, intervalMs: 2, what: `${proc} to enter a long section` },
          ).catch(() => undefined);
          if (!entered) return `partition of ${proc} skipped: it entered no long section within 8 s`;
          // A moment for its other loops to enter long sections too: at most 500 ms, as the
          // lock's must outlast the session's expiry (about 4.2 s after the cut).
          const until = askedAt + BigInt(rig.askedLongMs) * MS;
          await waitFor(() => state.update().loopsInsideUntil(proc, until) === rig.loopsPerWorker, {
            timeoutMs: 500,
            intervalMs: 2,
          }).catch(() => undefined);
          const alsoInside = state
            .update()
            .sectionsOf(proc)
            .filter((s) => s !== entered);
          await blackhole(w, ms);
          // Let the sections end (abandoned, if the signals did their job) before the next fault.
          const cut = [entered, ...alsoInside];
          await waitFor(
            () =>
              !state
                .update()
                .sectionsOf(proc)
                .some((s) => cut.includes(s)),
            { timeoutMs: rig.askedLongMs, what: `${cut.join(', ')} to end` },
          );
          const others = alsoInside.map((s) => `${s} ${state.endings.get(s) ?? '?'}`);
          return `partitioned ${proc} for ${ms} ms inside ${entered}, which ended with ${state.endings.get(entered) ?? '?'}${others.length > 0 ? `; also inside: ${others.join(', ')}` : ''}`;
        },
      };
    },
    // A server cut off from its peers, not from its clients: it answers reads from its
    // own copy for syncLimit × tickTime while the others go on (and may expire sessions).
    isolate: () => {
      const cutMs = rng.int(500, 4000);
      const atLeader = rng.int(0, 1) === 1;
      const other = rng.int(0, 2);
      return {
        estimateMs: cutMs + 3000,
        async run() {
          const leader = await step('find the leader', ensemble.leader(10_000), 12_000);
          const target = atLeader ? leader : other;
          ensemble.isolate(target);
          await sleep(cutMs);
          ensemble.heal(target);
          await step(`server ${target + 1} serves again`, ensemble.servers[target].waitServing(20_000), 22_000);
          return `isolated server ${target + 1}${target === leader ? ' (the leader)' : ''} from its peers for ${cutMs} ms`;
        },
      };
    },
    leader: () => {
      const downMs = rng.int(300, 3000);
      return {
        estimateMs: downMs + 3000,
        async run() {
          const leader = await step('find the leader', ensemble.leader(10_000), 12_000);
          await step('kill the leader', ensemble.kill(leader), 5000);
          const next = await step('elect a new leader', ensemble.leader(15_000), 17_000);
          await sleep(downMs);
          await step(`restart server ${leader + 1}`, ensemble.restart(leader), 30_000);
          return `killed leader ${leader + 1} (new leader ${next + 1}), restarted it after ${downMs} ms`;
        },
      };
    },
  };
}

/**
 * Runs faults one after another, with pauses, as long as the next one fits in `budgetMs`;
 * the kinds come from a shuffled bag of every kind, refilled when empty, so that a short
 * run still sees them all. Notes each fault and its heal in the log; resolves with the
 * report lines.
 */
export async function runSchedule(
  plans: Record<string, () => Plan>,
  rng: Rng,
  budgetMs: number,
  note: (text: string) => void,
): Promise<string[]> {
  const bag: string[] = [];
  const nextKind = (): string => {
    if (bag.length === 0) {
      const kinds = Object.keys(plans);
      while (kinds.length > 0) bag.push(kinds.splice(rng.int(0, kinds.length - 1), 1)[0]);
    }
    return bag.shift()!;
  };
  const schedule: string[] = [];
  const startedAt = Date.now();
  for (;;) {
    const pause = rng.int(100, 1000);
    const kind = nextKind();
    const plan = plans[kind]();
    if (Date.now() + pause + plan.estimateMs > startedAt + budgetMs) return schedule;
    await sleep(pause);
    note(`fault ${kind}`);
    const done = await plan.run();
    schedule.push(done);
    note(`healed: ${done}`);
  }
}
