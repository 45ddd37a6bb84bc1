import { InvalidLockNameError, InvalidOptionError, type AcquireOptions, type LockBackend } from '../../../lib/index';
import { NODE_NAME } from '../../support/node-names';
import { acquireAll, rejectionOf } from '../conformance.helpers';
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
  ['an unknown node format', { nodeFormat: 'curator' }, 'nodeFormat'],
  [
    'a reader in "curator-mutex" (Curator\'s InterProcessMutex is exclusive)',
    { mode: 'read', nodeFormat: 'curator-mutex' },
    'nodeFormat',
  ],
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

  it.each(BAD_OPTIONS)(
    'rejects %s with InvalidOptionError naming it, and queues nothing',
    async (_, options, option) => {
      const name = ctx.name('bad-option');
      const [a] = await ctx.world.backends(1);
      for (const call of callsWith(a, name, options)) {
        const error = await rejectionOf(call());
        expect(error).toBeInstanceOf(InvalidOptionError);
        expect(error).toMatchObject({ code: 'INVALID_OPTION', option });
        expect((error as Error).message).toContain(option);
      }
      expect(await a.contenders(name)).toEqual([]);
    },
  );

  it.each(['kazoo', 'curator-mutex', 'curator-rw'] as const)(
    "names nodes in the call's nodeFormat %s, and contenders() says which",
    async (nodeFormat) => {
      const name = ctx.name(`format-${nodeFormat}`);
      const [a] = await ctx.world.backends(1);
      const lock = await a.acquire(name, { nodeFormat, timeoutMs: 0 });
      const readers =
        nodeFormat === 'curator-mutex'
          ? []
          : [await a.acquire(`${name}-r`, { mode: 'read', nodeFormat, timeoutMs: 0 })];
      const [writer] = await a.contenders(name);
      expect(writer).toMatchObject({ mode: 'write', format: nodeFormat, holding: true });
      expect(writer.node).toMatch(NODE_NAME[`${nodeFormat}/write`]);
      for (const reader of readers) {
        const [listed] = await a.contenders(reader.name);
        expect(listed).toMatchObject({ mode: 'read', format: nodeFormat });
        expect(listed.node).toMatch(NODE_NAME[`${nodeFormat}/read`]);
        await reader.release();
      }
      await lock.release();
      const group = await acquireAll(a, [name, `${name}-r`], { nodeFormat });
      for (const held of group.handles) expect((await a.contenders(held.name))[0].format).toBe(nodeFormat);
      await group.release();
    },
  );

  it('refuses a group with a reader in "curator-mutex" before taking any of it', async () => {
    const name = ctx.name('format-group');
    const [a] = await ctx.world.backends(1);
    const error = await rejectionOf(
      acquireAll(a, [`${name}-a`, { name: `${name}-b`, mode: 'read' }], { nodeFormat: 'curator-mutex' }),
    );
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ option: 'nodeFormat' });
    for (const lock of [`${name}-a`, `${name}-b`]) expect(await a.contenders(lock)).toEqual([]);
  });

  it.each([
    ['a negative timeout', { timeoutMs: -1 }, 'timeoutMs'],
    ['a string timeout', { timeoutMs: '100' }, 'timeoutMs'],
    ['an unknown option', { timeout: 100 }, 'timeout'],
    ['null options', null, 'options'],
  ])('refuses reads and requestRevocation with %s: InvalidOptionError', async (_, options, option) => {
    const [a] = await ctx.world.backends(1);
    const given = options as { timeoutMs?: number };
    const calls = [
      () => a.contenders('read-options', given),
      () => a.locks('read-options', given),
      () => a.requestRevocation('read-options', given),
      () => a.leaseContenders('read-options', given),
    ];
    for (const call of calls) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ option });
    }
    expect(await a.contenders('read-options', { timeoutMs: 0 })).toEqual([]); // 0: answers if connected now
  });

  it('checks the options before the name', async () => {
    const [a] = await ctx.world.backends(1);
    expect(await rejectionOf(a.acquire('', { mode: 'exclusive' as never }))).toBeInstanceOf(InvalidOptionError);
  });
}
