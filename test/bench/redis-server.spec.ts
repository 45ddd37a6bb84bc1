import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { isAlive } from '../support/is-alive';
import { RedisServer } from '../support/redis/redis-server';
import { RedisReplyError } from '../support/redis/resp';
import { waitUntil } from '../support/wait-until';

/**
 * The throwaway Redis of the peers pass: what the fault trials rely on it for (a crash
 * loses what a server without persistence held and keeps what its AOF had fsynced; a
 * replica has the primary's keys and can be promoted), and that it leaves nothing behind.
 */
describe('RedisServer', () => {
  const servers: RedisServer[] = [];
  const server = (options?: ConstructorParameters<typeof RedisServer>[0]): RedisServer => {
    const made = new RedisServer(options);
    servers.push(made);
    return made;
  };

  afterAll(async () => {
    await Promise.all(servers.map((made) => made.destroy()));
  });

  it('answers PING on a loopback port of its own, and refuses a bad command with a typed error', async () => {
    const redis = server();
    await redis.start();
    expect(redis.port).toBeGreaterThan(0);
    expect(redis.endpoint).toBe(`127.0.0.1:${redis.port}`);
    expect(await redis.command('PING')).toBe('PONG');
    await expect(redis.command('NO-SUCH-COMMAND')).rejects.toBeInstanceOf(RedisReplyError);
  });

  it('without persistence, loses its keys over a crash and comes back on the same port', async () => {
    const redis = server();
    await redis.start();
    const port = redis.port;
    const pid = redis.pid!;
    expect(await redis.command('SET', 'k', 'v')).toBe('OK');
    expect(await redis.command('GET', 'k')).toBe('v');
    await redis.restart();
    expect(isAlive(pid)).toBe(false);
    expect(redis.port).toBe(port);
    expect(await redis.command('GET', 'k')).toBe('(nil)');
  });

  it('with aof-everysec, keeps a key written over a second before a kill -9', async () => {
    const redis = server({ persistence: 'aof-everysec' });
    await redis.start();
    expect(await redis.command('SET', 'k', 'kept')).toBe('OK');
    await sleep(1_500); // appendfsync everysec: the write is on disk within a second
    const pid = redis.pid!;
    await redis.kill();
    expect(isAlive(pid)).toBe(false);
    expect(redis.pid).toBeUndefined();
    await redis.restart();
    expect(await redis.command('GET', 'k')).toBe('kept');
  });

  it('starts a replica in sync with its primary, which REPLICAOF NO ONE promotes', async () => {
    const primary = server();
    await primary.start();
    await primary.command('SET', 'before', '1');
    const replica = server({ replicaOf: primary.endpoint });
    await replica.start();
    expect(await replica.command('GET', 'before')).toBe('1');
    await primary.command('SET', 'after', '2');
    await waitUntil(async () => (await replica.command('GET', 'after')) === '2', 'the replica to get "after"');
    await expect(replica.command('SET', 'x', 'y')).rejects.toThrow(/READONLY/);

    expect(await replica.command('REPLICAOF', 'NO', 'ONE')).toBe('OK');
    expect(await replica.command('INFO', 'replication')).toContain('role:master');
    expect(await replica.command('SET', 'x', 'y')).toBe('OK');
  });

  it('destroy leaves no process and no folder, and may be called twice or before any start', async () => {
    const redis = server();
    await redis.start();
    const pid = redis.pid!;
    expect(isAlive(pid)).toBe(true);
    await redis.destroy();
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(redis.dir)).toBe(false);
    await redis.destroy();

    const never = server();
    await never.destroy();
    expect(existsSync(never.dir)).toBe(false);
    await expect(never.start()).rejects.toThrow(/destroyed/);
  });
});
