// A chaos worker's loop (see chaos.worker.ts): take a grant, run one critical section on
// every resource it guards, release, again, until stopped. The log format is described in
// test/support/chaos-log.ts.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { LockTimeoutError, LockUnavailableError } from '../../lib/index.js';

export const randomInt = (min: number, max: number): number => min + Math.floor(Math.random() * (max - min + 1));

/** One resource a grant guards: its section id, its fencing token, and its counter file if it has one. */
export interface Part {
  readonly id: string;
  readonly token: string;
  readonly counter?: string;
}

/** What a workload's `take` returns. `signal` is read at each use: on a ZooKeeper handle each read checks the clock. */
export interface Grant {
  readonly parts: readonly Part[];
  readonly holder: { readonly signal: AbortSignal };
  readonly flags?: readonly string[];
  release(): Promise<void>;
}

export interface LoopContext {
  readonly process: string;
  /** Appends one line to the shared log, in one write(2), stamped now. */
  log(kind: string, id: string, token: string, ...details: string[]): void;
  /** The same, stamped `t`. */
  logAt(t: bigint, kind: string, id: string, token: string, ...details: string[]): void;
  readonly stop: AbortSignal;
  readonly longSectionRatio: number;
  readonly askedLongMs: number;
}

export interface Loop {
  readonly label: string;
  /** When the test last asked (SIGUSR2) for a long section: the next one lasts `askedLongMs`... */
  longAskedAt?: bigint;
  /** ...if it starts within this many ms of the ask (none: whenever it starts). */
  readonly longAskWindowMs?: number;
}

/**
 * Runs `take` again and again until `ctx.stop` aborts. `group(n)` names the n-th grant; a
 * wait longer than the acquire timeout is logged as `timeout` (trouble) and tried again.
 */
export async function runLoop(
  ctx: LoopContext,
  loop: Loop,
  group: (n: number) => string,
  take: (group: string) => Promise<Grant>,
): Promise<void> {
  for (let n = 0; !ctx.stop.aborted; n++) {
    let grant: Grant;
    try {
      grant = await take(group(n));
    } catch (error) {
      if (ctx.stop.aborted) break;
      // Its deadline passed, with a holder in the way or (LockUnavailableError) no session connected.
      if (!(error instanceof LockTimeoutError || error instanceof LockUnavailableError)) throw error;
      ctx.log('timeout', ctx.process, '-', `loop=${loop.label}`);
      continue;
    }
    const token = grant.parts.length === 1 ? grant.parts[0].token : '-';
    await runSection(ctx, loop, group(n), token, grant);
    await grant.release();
    ctx.log('exit', group(n), token);
    await sleep(randomInt(0, 2));
  }
}

/**
 * Inside: read each counter, pause, and write each only if the grant is still trusted.
 * The pause is mostly a few ms, now and then (or when asked) seconds, logged as
 * long=<ms>, for faults to strike inside.
 */
async function runSection(ctx: LoopContext, loop: Loop, group: string, token: string, grant: Grant): Promise<void> {
  const { holder, parts } = grant;
  const onAbort = (): void =>
    ctx.log('aborted', group, token, String((holder.signal.reason as Error).message).replace(/\s+/g, '_'));
  holder.signal.addEventListener('abort', onAbort);

  const t = process.hrtime.bigint();
  const { longAskedAt, longAskWindowMs } = loop;
  const asked =
    longAskedAt !== undefined &&
    (longAskWindowMs === undefined || t - longAskedAt <= BigInt(longAskWindowMs) * 1_000_000n);
  loop.longAskedAt = undefined;
  const pause = asked ? ctx.askedLongMs : Math.random() < ctx.longSectionRatio ? randomInt(500, 3000) : randomInt(1, 4);
  const reads = parts.map((part) => (part.counter ? readFileSync(part.counter, 'utf8').trim().split(' ') : ['-', '-']));
  const flags = [
    ...(pause >= 500 ? [`long=${pause}`] : []),
    ...(holder.signal.aborted ? ['aborted-at-entry'] : []),
    ...(grant.flags ?? []),
  ];
  parts.forEach((part, i) => ctx.logAt(t, 'enter', part.id, part.token, ...reads[i], ...flags));
  if (holder.signal.aborted) onAbort(); // aborted before we could listen
  await sleep(pause);
  parts.forEach((part, i) => {
    if (holder.signal.aborted) return ctx.log('abandon', part.id, part.token);
    if (!part.counter) return ctx.log('done', part.id, part.token);
    const next = Number(reads[i][0]) + 1;
    // Replaced atomically (write aside, rename over): a SIGKILL between the truncate and
    // the write of a plain overwrite would leave an empty counter for the next holder.
    const aside = `${part.counter}.${part.id}`;
    writeFileSync(aside, `${next} ${part.id}`);
    renameSync(aside, part.counter);
    ctx.log('done', part.id, part.token, String(next));
  });
}
