/**
 * Compile-time checks of @WithLock, @WithLease and @WhenLeader, type-checked by `npm test` (tsc): each
 * `@ts-expect-error` must meet an error, or the type check fails. Never run.
 */
import type { Readable } from 'node:stream';
import type { StreamableFile } from '@nestjs/common';
import type { Observable } from 'rxjs';

import { WhenLeader, WithLease, WithLock, type WithLockOptions } from '../../lib/index';
import { LeaderOnly as LeaderOnlyJob } from '../../lib/schedule';

export class Fits {
  @WithLock((id: string) => `order:${id}`)
  async byId(_id: string): Promise<void> {}

  // A key function may use only the first parameters.
  @WithLock((from: string) => `account:${from}`)
  async transfer(_from: string, _to: string, _amount: number): Promise<void> {}

  // Several names from one call.
  @WithLock((from: string, to: string) => [`account:${from}`, `account:${to}`])
  async move(from: string, to: string): Promise<number> {
    return from.length + to.length;
  }

  // A fixed name: any async method.
  @WithLock('nightly', { ifLocked: 'skip' })
  async nightly(_date: Date): Promise<void> {}

  @WithLease((partner: string) => `partner:${partner}`, { maxLeases: 5 })
  async quote(partner: string, _amount: number): Promise<string> {
    return partner;
  }

  @WithLock('static-job')
  static async run(): Promise<void> {}

  // Results it cannot see through are let through (and checked at run time).
  @WithLock('loose')
  async loose(): Promise<any> {}

  @WithLock('maybe')
  async maybe(): Promise<unknown> {
    return 1;
  }

  @WithLock('list')
  async list(): Promise<number[]> {
    return [1];
  }
}

export class Refused {
  // @ts-expect-error: the key function takes a number, the method a string
  @WithLock((id: number) => `order:${id}`)
  async byId(_id: string): Promise<void> {}

  // @ts-expect-error: the key function takes two parameters, the method one (it would lock `x:a:undefined`)
  @WithLock((a: string, b: string) => `x:${a}:${b}`)
  async one(_a: string): Promise<void> {}

  // @ts-expect-error: a synchronous method would return a Promise where its type says number
  @WithLock('sync')
  count(): number {
    return 1;
  }

  // @ts-expect-error: an async generator's body runs after the call returns, unlocked
  @WithLock('stream')
  async *rows(): AsyncGenerator<number> {
    yield 1;
  }

  // @ts-expect-error: an Observable runs when subscribed, after the lock would be released
  @WithLock('events')
  events(): Observable<number> {
    throw new Error('never called');
  }

  // @ts-expect-error: a Promise of an Observable: it runs when subscribed, unlocked
  @WithLock('later-events')
  async laterEvents(): Promise<Observable<number>> {
    throw new Error('never called');
  }

  // @ts-expect-error: Nest sends a StreamableFile after the handler resolved, unlocked
  @WithLock('download')
  async download(): Promise<StreamableFile> {
    throw new Error('never called');
  }

  // @ts-expect-error: a stream is read after the method returned, unlocked
  @WithLock('export')
  async export(): Promise<Readable> {
    throw new Error('never called');
  }

  // @ts-expect-error: a property is not a method
  @WithLock('value') value = 1;

  // @ts-expect-error: @WithLease checks its key function the same way
  @WithLease((partner: number) => `partner:${partner}`, { maxLeases: 2 })
  async quote(partner: string): Promise<string> {
    return partner;
  }
}

export class LeaderOnly {
  @WhenLeader('reports', { onLockLost: 'ignore' })
  async report(): Promise<void> {}

  // @ts-expect-error: onLockLost is 'reject' or 'ignore'
  @WhenLeader('reports', { onLockLost: 'retry' })
  async retry(): Promise<void> {}

  // @ts-expect-error: @WhenLeader has no ifLocked (it is not a lock of the method's own)
  @WhenLeader('reports', { ifLocked: 'skip' })
  async skip(): Promise<void> {}
}

/** Options only known at run time: any of them may say `ifLocked: 'skip'`. */
declare const someOptions: WithLockOptions;

/** Under a decorator that can skip the call, the declared type must admit the `undefined` it then resolves. */
export class MaySkip {
  @WithLock('skip', { ifLocked: 'skip' })
  async counted(): Promise<number | undefined> {
    return 1;
  }

  @WithLock('skip-void', { ifLocked: 'skip', holdAtLeastMs: 500 })
  async tick(): Promise<void> {}

  @WithLock('wait', { ifLocked: 'wait' })
  async waits(): Promise<number> {
    return 1;
  }

  @WithLock('throw', { ifLocked: 'throw', timeoutMs: 0 })
  async throws(): Promise<number> {
    return 1;
  }

  @WithLock('none', undefined)
  async none(): Promise<number> {
    return 1;
  }

  @WithLock('runtime', someOptions)
  async runtime(): Promise<number | undefined> {
    return 1;
  }

  @WhenLeader('reports')
  async report(): Promise<string | undefined> {
    return 'done';
  }

  @WhenLeader('reports')
  static async nightly(): Promise<void> {}

  // @ts-expect-error: ifLocked: 'skip' resolves undefined when the lock is taken, which number does not admit
  @WithLock('skip', { ifLocked: 'skip' })
  async count(): Promise<number> {
    return 1;
  }

  // @ts-expect-error: options whose type allows 'skip' may skip
  @WithLock('runtime', someOptions)
  async anyOptions(): Promise<number> {
    return 1;
  }

  // @ts-expect-error: the key function's names, skipped the same way
  @WithLock((id: string) => [`a:${id}`, `b:${id}`], { ifLocked: 'skip' })
  async both(id: string): Promise<string> {
    return id;
  }

  // @ts-expect-error: @WhenLeader resolves undefined on every instance that does not lead
  @WhenLeader('reports')
  async leaderOnly(): Promise<string> {
    return 'done';
  }

  // @ts-expect-error: a synchronous method would return a Promise where its type says string
  @WhenLeader('reports')
  leaderSync(): string {
    return 'done';
  }

  // @ts-expect-error: a synchronous method would return a Promise where its type says void
  @WhenLeader('reports')
  leaderSyncVoid(): void {}

  // @ts-expect-error: a property is not a method
  @WhenLeader('reports') value = 1;

  // @ts-expect-error: a misspelt option is refused, as in any options object
  @WithLock('typo', { timeoutMs: 0, ifLoked: 'skip' })
  async typo(): Promise<void> {}

  // @ts-expect-error: and an option of another decorator
  @WithLock('lease', { ifLocked: 'wait', maxLeases: 2 })
  async lease(): Promise<void> {}
}

/**
 * A key function's parameters are not inferred from the method's (the decorator's
 * argument is typed before the method it decorates): unannotated, they are `any`, and
 * the compiler cannot compare them with the method's. Annotate them.
 */
export class Unannotated {
  @WithLock((id) => `order:${id}`)
  async byId(_id: number): Promise<void> {}
}

/** `@LeaderOnly` (nestjs-zk-lock/schedule): a job method, sync (`void`) or async resolving `undefined` off leadership. */
export class LeaderJobs {
  @LeaderOnlyJob('jobs')
  tick(): void {}

  @LeaderOnlyJob('jobs')
  async report(): Promise<void> {}

  @LeaderOnlyJob('jobs')
  async total(): Promise<number | undefined> {
    return 1;
  }

  // @ts-expect-error a value returned synchronously would be a Promise at run time
  @LeaderOnlyJob('jobs')
  count(): number {
    return 1;
  }

  // @ts-expect-error off leadership the call resolves undefined: Promise<number | undefined>
  @LeaderOnlyJob('jobs')
  async sum(): Promise<number> {
    return 1;
  }
}
