import { aclBytes, inRequests, MAX_REQUEST_BYTES, type ZkOp } from './request-batches.js';

const read = (path: string): ZkOp => ({ op: 'getData', path });
const create = (path: string, bytes: number): ZkOp => ({
  op: 'create',
  path,
  data: Buffer.alloc(bytes),
  mode: 'ephemeral-sequential',
});
const none = { chrootBytes: 0, aclBytes: 0 };

describe('inRequests: many ops as requests ZooKeeper reads (under its jute.maxbuffer)', () => {
  it('about half the default jute.maxbuffer (0xfffff) per request', () => {
    expect(MAX_REQUEST_BYTES).toBe(512 * 1024);
  });

  it('few ops: one run, in order', () => {
    const paths = ['/a', '/b', '/c'];
    expect(inRequests(paths, (path) => [read(path)], none)).toEqual([paths]);
    expect(inRequests([], (path: string) => [read(path)], none)).toEqual([]);
  });

  it('1,000 paths of 1 KiB: runs in order, none over MAX_REQUEST_BYTES, together all of them', () => {
    const paths = Array.from({ length: 1000 }, (_, i) => `/${String(i).padStart(1023, '0')}`);
    const runs = inRequests(paths, (path) => [read(path)], none);
    expect(runs.flat()).toEqual(paths);
    expect(runs.length).toBe(3); // 1,000 x (1,024 + 32) bytes: just over 2 x 512 KiB
    for (const run of runs) expect(run.length * (1024 + 32)).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
  });

  it('counts data, the ACL of each create and the chroot of each path', () => {
    const ops = Array.from({ length: 4 }, (_, i) => create(`/${i}`, 100_000));
    expect(inRequests(ops, (op) => [op], none)).toHaveLength(1);
    expect(inRequests(ops, (op) => [op], { chrootBytes: 0, aclBytes: 40_000 })).toHaveLength(2);
    const reads = Array.from({ length: 4 }, (_, i) => read(`/${i}`));
    expect(inRequests(reads, (op) => [op], { chrootBytes: 140_000, aclBytes: 0 })).toHaveLength(2);
  });

  it('at most maxOps ops per run, an item of several ops never split', () => {
    const dirs = Array.from({ length: 5 }, (_, i) => `/${i}`);
    const runs = inRequests(dirs, (dir) => [read(dir), read(dir)], none, 4);
    expect(runs).toEqual([['/0', '/1'], ['/2', '/3'], ['/4']]);
  });

  it('an op over the limit alone is a run of its own', () => {
    const ops = [read('/a'), create('/big', MAX_REQUEST_BYTES), read('/b')];
    expect(inRequests(ops, (op) => [op], none)).toEqual([[ops[0]], [ops[1]], [ops[2]]]);
  });

  it('an ACL list: 4 bytes for its count, per entry its permissions, scheme and id with their lengths', () => {
    const acl = [{ permission: 31, id: { scheme: 'world', id: 'anyone' } }];
    expect(aclBytes(acl as never)).toBe(4 + 4 + 4 + 5 + 4 + 6);
  });
});
