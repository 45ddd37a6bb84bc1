import { CliUsageError, parseCliArgs } from './args.js';

describe('parseCliArgs --timeout (the connect timeout)', () => {
  it('accepts the largest whole number of milliseconds the connect deadline waits', () => {
    expect(parseCliArgs(['list', '--timeout', String(Number.MAX_SAFE_INTEGER)], {}).timeoutMs).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });

  it.each(['9007199254740992', '0', '1.5', 'soon'])('refuses %s, naming the range', (value) => {
    expect(() => parseCliArgs(['list', '--timeout', value], {})).toThrow(CliUsageError);
    expect(() => parseCliArgs(['list', '--timeout', value], {})).toThrow(
      `--timeout needs a whole number of milliseconds from 1 to 9007199254740991, not "${value}"`,
    );
  });
});

describe('parseCliArgs exec', () => {
  it('takes everything after -- as the command line, its own options included; write, waiting without limit, by default', () => {
    expect(
      parseCliArgs(['exec', 'nightly', '--root', '/jobs', '--', 'sh', '-c', 'exit 7', '--timeout'], {}),
    ).toMatchObject({
      command: 'exec',
      target: 'nightly',
      root: '/jobs',
      timeoutMs: 5000,
      exec: {
        command: 'sh',
        args: ['-c', 'exit 7', '--timeout'],
        mode: 'write',
        skipIfLocked: false,
        waitMs: Infinity,
        maxHoldMs: Infinity,
        killGraceMs: 10_000,
      },
    });
  });

  it('--timeout bounds connecting and the wait together; --mode, --skip-if-locked, --max-hold, --kill-grace', () => {
    const args = ['--mode', 'read', '--skip-if-locked', '--timeout', '900', '--max-hold', '60000', '--kill-grace', '0'];
    expect(parseCliArgs(['exec', 'n', ...args, '--', 'true'], {})).toMatchObject({
      timeoutMs: 900,
      exec: { mode: 'read', skipIfLocked: true, waitMs: 900, maxHoldMs: 60_000, killGraceMs: 0 },
    });
  });

  it.each([
    [['exec', 'n', 'true'], 'exec needs -- and the command to run'],
    [['exec', 'n', '--'], 'exec needs a command after --'],
    [['exec', '--', 'true'], 'exec needs a lock name'],
    [['exec', 'n', '--mode', 'exclusive', '--', 'true'], '--mode is read or write, not "exclusive"'],
    [['exec', 'n', '--max-hold', '0', '--', 'true'], '--max-hold needs a whole number of milliseconds from 1'],
    [['exec', 'n', '--max-hold', '', '--', 'true'], '--max-hold needs a whole number of milliseconds from 1'],
    [['exec', 'n', '--kill-grace=-1', '--', 'true'], '--kill-grace needs a whole number of milliseconds from 0'],
    [['exec', 'n', '--timeout', '2s', '--', 'true'], '--timeout needs a whole number of milliseconds from 1'],
    [['show', 'n', '--', 'true'], 'only exec takes a command after --, not show'],
    [['list', '--skip-if-locked'], '--skip-if-locked is an option of exec, not of list'],
  ])('refuses %j, naming what is wrong', (argv, message) => {
    expect(() => parseCliArgs(argv, {})).toThrow(CliUsageError);
    expect(() => parseCliArgs(argv, {})).toThrow(message);
  });
});

describe('parseCliArgs --connect and --root', () => {
  it('default to $ZK_LOCK_CONNECT and $ZK_LOCK_ROOT; the flags win over the variables', () => {
    const env = { ZK_LOCK_CONNECT: 'zk-1:2181', ZK_LOCK_ROOT: '/jobs' };
    expect(parseCliArgs(['list'], {})).toMatchObject({ connect: '127.0.0.1:2181', root: '/locks' });
    expect(parseCliArgs(['list'], env)).toMatchObject({ connect: 'zk-1:2181', root: '/jobs' });
    expect(parseCliArgs(['list', '--connect', 'zk-2:2181', '--root', '/other'], env)).toMatchObject({
      connect: 'zk-2:2181',
      root: '/other',
    });
  });
});
