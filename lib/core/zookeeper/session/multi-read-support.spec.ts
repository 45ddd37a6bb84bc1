import { MultiReadSupport, PROBE_RETRY_MS, takesMultiRead, type MultiReadProbe } from './multi-read-support';

/** A probe whose answers the test gives, one call at a time. */
function scriptedProbe() {
  const calls: Array<{ server: string; signal: AbortSignal; answer(value: boolean | undefined): void }> = [];
  const probe: MultiReadProbe = (server, signal) =>
    new Promise((resolve) => calls.push({ server, signal, answer: resolve }));
  return { probe, calls };
}

describe('MultiReadSupport (which servers are sent a multiRead)', () => {
  let server: string | undefined;
  let clock: number;
  let scripted: ReturnType<typeof scriptedProbe>;
  let support: MultiReadSupport;

  beforeEach(() => {
    server = '127.0.0.1:2181';
    clock = 0;
    scripted = scriptedProbe();
    support = new MultiReadSupport(
      () => server,
      scripted.probe,
      () => clock,
    );
  });
  afterEach(() => support.close());

  it('says no until the server answered, asks it once, and says yes once it said 3.6 or later', async () => {
    expect(support.usable()).toBe(false); // asks, in the background
    expect(support.usable()).toBe(false);
    const ready = [support.ready(), support.ready()];
    expect(scripted.calls.map((call) => call.server)).toEqual(['127.0.0.1:2181']);
    expect(ready[0]).toBe(ready[1]);
    scripted.calls[0].answer(true);
    await ready[0];
    expect(support.usable()).toBe(true);
    expect(support.ready()).toBeUndefined(); // known: nothing to wait for
    expect(scripted.calls).toHaveLength(1);
  });

  it('a server that said an older version, or refused to say, is never asked again', async () => {
    const ready = support.ready();
    scripted.calls[0].answer(false);
    await ready;
    clock += 10 * PROBE_RETRY_MS;
    expect(support.usable()).toBe(false);
    expect(support.ready()).toBeUndefined();
    expect(scripted.calls).toHaveLength(1);
  });

  it('a server that could not be asked is asked again after PROBE_RETRY_MS, not before', async () => {
    const first = support.ready();
    scripted.calls[0].answer(undefined);
    await first;
    expect(support.usable()).toBe(false);
    clock += PROBE_RETRY_MS - 1;
    expect(support.ready()).toBeUndefined();
    clock += 1;
    const second = support.ready();
    expect(scripted.calls).toHaveLength(2);
    scripted.calls[1].answer(true);
    await second;
    expect(support.usable()).toBe(true);
  });

  it('a probe that fails counts as unanswered', async () => {
    const failing = new MultiReadSupport(
      () => server,
      () => Promise.reject(new Error('ECONNRESET')),
      () => clock,
    );
    await failing.ready();
    expect(failing.usable()).toBe(false);
    failing.close();
  });

  it('a server that refused a multiRead is sent no other, even when its probe answers yes later', async () => {
    const ready = support.ready();
    support.refused('127.0.0.1:2181');
    scripted.calls[0].answer(true);
    await ready;
    expect(support.usable()).toBe(false);
    expect(support.ready()).toBeUndefined();
  });

  it('keeps one answer per server: after a reconnect elsewhere the new server is asked', async () => {
    const first = support.ready();
    scripted.calls[0].answer(true);
    await first;
    server = '127.0.0.1:2182';
    expect(support.usable()).toBe(false);
    expect(scripted.calls.map((call) => call.server)).toEqual(['127.0.0.1:2181', '127.0.0.1:2182']);
    scripted.calls[1].answer(false);
    await support.ready();
    expect(support.usable()).toBe(false);
    server = '127.0.0.1:2181';
    expect(support.usable()).toBe(true);
  });

  it('while not connected says no and asks nobody', () => {
    server = undefined;
    expect(support.usable()).toBe(false);
    expect(support.ready()).toBeUndefined();
    expect(scripted.calls).toHaveLength(0);
  });

  it('close() aborts the probe in flight and asks nothing more', () => {
    void support.ready();
    support.close();
    expect(scripted.calls[0].signal.aborted).toBe(true);
    server = '127.0.0.1:2182';
    expect(support.ready()).toBeUndefined();
    expect(scripted.calls).toHaveLength(1);
  });
});

describe('takesMultiRead (a srvr reply)', () => {
  it.each([
    [
      'Zookeeper version: 3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC\nLatency min/avg/max: 0/0.0/0\n',
      true,
    ],
    ['Zookeeper version: 3.6.0--1, built on 02/25/2020 14:38 GMT\n', true],
    ['Zookeeper version: 3.9.2-e454e8c7283100c7caec6dcae2bc82aaecb63023, built on 2024-02-12 20:59 UTC\n', true],
    ['Zookeeper version: 4.0.0, built on 2030-01-01\n', true],
    ['Zookeeper version: 3.5.10-c2a6ba5e7d4f3bd1d2c5a49dc6bfcf9bd1b0b1e9, built on 2022-05-30 08:39 UTC\n', false],
    ['Zookeeper version: 3.4.14-4c25d480e66aadd371de8bd2fd8da255ac140bcf, built on 03/06/2019 16:18 GMT\n', false],
    ['srvr is not executed because it is not in the whitelist.\n', false],
    ['', false],
  ])('%j → %s', (reply, expected) => {
    expect(takesMultiRead(reply)).toBe(expected);
  });
});
