import { InvalidLockNameError, InvalidOptionError, type AcquireOptions, type LockBackend } from '../../../lib/index';
import { rejectionOf } from '../conformance.helpers';
import type { ConformanceContext } from '../lock-backend.conformance';

const BAD_NAMES: Array<[string, unknown]> = [
  ['empty', ''],
  ['not a string', 42],
  ['undefined', undefined],
  ['a lone surrogate', 'a\ud800b'],
  ['too long', 'x'.repeat(2000)],
];

const BAD_OPTIONS: Array<[string, unknown, string]> = [
  ['an unknown mode', { mode: 'exclusive' }, 'mode'],
  ['a mode of the wrong type', { mode: 1 }, 'mode'],
  ['a negative timeout', { timeoutMs: -1 }, 'timeoutMs'],
  ['a NaN timeout', { timeoutMs: NaN }, 'timeoutMs'],
  ['a string timeout', { timeoutMs: '100' }, 'timeoutMs'],
  ['a signal that is not an AbortSignal', { signal: {} }, 'signal'],
  ['null options', null, 'options'],
];

/** Every call that takes a lock name, with `name` and `options` passed as given. */
const callsWith = (backend: LockBackend, name: unknown, options?: unknown): Array<() => Promise<unknown>> => [
  () => backend.acquire(name as string, options as AcquireOptions),
  () => backend.tryAcquire(name as string, options as AcquireOptions),
];

export function validationCases(ctx: ConformanceContext): void {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => process.off('unhandledRejection', onUnhandled));
  // A refused call disturbs nothing else in the process: no stray rejection.
  afterEach(() => expect(unhandled).toEqual([]));

  it.each(BAD_NAMES)('rejects a lock name that is %s with InvalidLockNameError, everywhere', async (_, name) => {
    const [a] = await ctx.world.backends(1);
    for (const call of [...callsWith(a, name), () => a.contenders(name as string)]) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(InvalidLockNameError);
      expect(error).toMatchObject({ code: 'INVALID_LOCK_NAME' });
      expect((error as Error).message).toMatch(/Invalid lock name/);
    }
  });

  it.each(BAD_OPTIONS)('rejects %s with InvalidOptionError naming it, and queues nothing', async (_, options, option) => {
    const name = ctx.name('bad-option');
    const [a] = await ctx.world.backends(1);
    for (const call of callsWith(a, name, options)) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ code: 'INVALID_OPTION', option });
      expect((error as Error).message).toContain(option);
    }
    expect(await a.contenders(name)).toEqual([]);
  });

  it('checks the options before the name', async () => {
    const [a] = await ctx.world.backends(1);
    expect(await rejectionOf(a.acquire('', { mode: 'exclusive' as never }))).toBeInstanceOf(InvalidOptionError);
  });
}
