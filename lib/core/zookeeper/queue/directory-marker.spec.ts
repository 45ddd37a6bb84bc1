import { directoryKindOf, leaseDirectoryData } from './directory-marker.js';

describe("a semaphore directory's data", () => {
  it('records the number of leases in a form no other recipe writes', () => {
    expect(leaseDirectoryData(3).toString()).toBe('{"kind":"nestjs-zk-lock/lease","maxLeases":3}');
    expect(directoryKindOf(leaseDirectoryData(3))).toEqual({ kind: 'lease', maxLeases: 3 });
  });

  it('no data is a lock directory (ours, Kazoo’s or Curator’s)', () => {
    expect(directoryKindOf(Buffer.alloc(0))).toEqual({ kind: 'lock' });
    expect(directoryKindOf(undefined)).toEqual({ kind: 'lock' });
  });

  it("a bare count is Kazoo's Semaphore (as Python's int() reads it)", () => {
    for (const data of ['3', ' 3\n', '+3', '-1'])
      expect(directoryKindOf(Buffer.from(data))).toEqual({ kind: 'kazoo-semaphore', maxLeases: Number(data) });
  });

  it('anything else is unknown, including a marker with a bad count', () => {
    for (const data of [
      'hello',
      '{"kind":"other","maxLeases":3}',
      '{"kind":"nestjs-zk-lock/lease","maxLeases":0}',
      '{"kind":"nestjs-zk-lock/lease","maxLeases":1.5}',
      '{"kind":"nestjs-zk-lock/lease"}',
      'null',
      '[1]',
      '\xff\xfe',
    ]) {
      expect(directoryKindOf(Buffer.from(data))).toEqual({ kind: 'unknown' });
    }
  });
});
