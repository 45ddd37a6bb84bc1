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
