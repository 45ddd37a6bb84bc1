import { ASK_AGAIN_MS, ServerFactsCache, serverFacts, unfitness, type ServerFacts } from './server-check';

const SRVR = (mode: string) =>
  `Zookeeper version: 3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC\nLatency min/avg/max: 0/0.0/0\nZxid: 0x0\nMode: ${mode}\nNode count: 5\n`;
const CONF =
  'clientPort=2181\nsecureClientPort=-1\ndataDir=/var/lib/zookeeper/version-2\ntickTime=400\nmaxClientCnxns=60\nminSessionTimeout=400\nmaxSessionTimeout=8000\nserverId=0\n';
const REFUSED = (word: string) => `${word} is not executed because it is not in the whitelist.\n`;

describe('serverFacts (srvr and conf replies of ZooKeeper 3.8)', () => {
  it('reads the mode, the version, tickTime and minSessionTimeout', () => {
    expect(serverFacts(SRVR('observer'), CONF)).toEqual({
      takesMultiRead: true,
      mode: 'observer',
      tickTimeMs: 400,
      minSessionTimeoutMs: 400,
    });
  });

  it('leaves out what a word the server refused would have said', () => {
    expect(serverFacts(SRVR('follower'), REFUSED('conf'))).toEqual({ takesMultiRead: true, mode: 'follower' });
    expect(serverFacts(REFUSED('srvr'), CONF)).toEqual({
      takesMultiRead: false,
      tickTimeMs: 400,
      minSessionTimeoutMs: 400,
    });
  });
});

describe('unfitness', () => {
  const facts = (more: Partial<ServerFacts>): ServerFacts => ({ takesMultiRead: true, ...more });

  it('refuses an observer, and a timeout under 2 × tickTime, naming tickTime and minSessionTimeout', () => {
    expect(unfitness(facts({ mode: 'observer' }), 10_000)).toEqual({ reason: 'observer' });
    expect(unfitness(facts({ mode: 'follower', tickTimeMs: 2000, minSessionTimeoutMs: 2000 }), 3999)).toEqual({
      reason: 'session-timeout',
      tickTimeMs: 2000,
      minSessionTimeoutMs: 2000,
    });
  });

  it('takes a participant at 2 × tickTime or more, and a server that did not say', () => {
    expect(unfitness(facts({ mode: 'leader', tickTimeMs: 2000 }), 4000)).toBeUndefined();
    expect(unfitness(facts({ mode: 'standalone' }), 100)).toBeUndefined();
    expect(unfitness(facts({}), 100)).toBeUndefined();
  });
});

describe('ServerFactsCache', () => {
  it('asks each server once; one that did not answer again only after a while', async () => {
    let now = 0;
    const asked: string[] = [];
    const cache = new ServerFactsCache(
      (server) => {
        asked.push(server);
        return Promise.resolve(server === 'a:1' ? { takesMultiRead: true } : undefined);
      },
      () => now,
    );
    await Promise.all([cache.get('a:1'), cache.get('a:1'), cache.get('b:2')]);
    now = ASK_AGAIN_MS - 1;
    await Promise.all([cache.get('a:1'), cache.get('b:2')]);
    expect(asked).toEqual(['a:1', 'b:2']);
    now = ASK_AGAIN_MS * 10;
    expect(await cache.get('a:1')).toEqual({ takesMultiRead: true });
    await cache.get('b:2');
    expect(asked).toEqual(['a:1', 'b:2', 'b:2']);
  });
});
