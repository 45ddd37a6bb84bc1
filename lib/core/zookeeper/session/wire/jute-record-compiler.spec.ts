import { randomBytes, randomInt } from 'node:crypto';

import type { JuteAttribute } from './jute-record-compiler.js';

type AnyRecord = Record<string, unknown> & {
  specification: JuteAttribute[];
  chrootPath?: string;
  byteLength(): number;
  serialize(buffer: Buffer, offset: number): number;
  deserialize(buffer: Buffer, offset: number): number;
  setChrootPath(path: string): void;
};
type RecordClass = new (...args: unknown[]) => AnyRecord;
interface Jute {
  data: Record<string, RecordClass>;
  protocol: Record<string, RecordClass>;
  Request: new (header: unknown, payload: unknown) => { toBuffer(): Buffer };
}

/** A fresh copy of the client's jute module: the client's own classes, or (installed) the compiled ones. */
function freshJute(install: boolean): Jute {
  let jute!: Jute;
  jest.isolateModules(() => {
    jute = require('node-zookeeper-client/lib/jute/index.js') as Jute;
    if (install) (require('./jute-codec.js') as typeof import('./jute-codec.js')).installJuteCodec();
  });
  return jute;
}

const original = freshJute(false);
const compiled = freshJute(true);
const classes = (['data', 'protocol'] as const).flatMap((group) =>
  Object.keys(original[group]).map((name) => ({ group, name })),
);

/** Random values for a record's fields, built for one side (its own nested record classes). */
function randomArgs(spec: readonly JuteAttribute[], depth = 0): Array<(jute: Jute) => unknown> {
  return spec.map(({ type }) => randomValue(type, depth));
}

const STRINGS = ['/', '/a', '/locks/ünïcødé-\u{1F512}', '', 'x'.repeat(300), '/lone\uD800surrogate'];

function randomValue(type: string, depth: number): (jute: Jute) => unknown {
  const absent = randomInt(6) === 0;
  switch (type) {
    case 'int': {
      const n = [0, -1, 1, 2 ** 31 - 1, -(2 ** 31), randomInt(-1e9, 1e9)][randomInt(6)];
      return () => (absent ? undefined : n);
    }
    case 'long': {
      const bytes = randomBytes(randomInt(4) === 0 ? randomInt(9) : 8);
      return () => (absent ? undefined : Buffer.from(bytes));
    }
    case 'buffer': {
      const bytes = randomBytes(randomInt(40));
      return () => (absent ? undefined : Buffer.from(bytes));
    }
    case 'ustring': {
      const s = STRINGS[randomInt(STRINGS.length)];
      return () => (absent ? undefined : s);
    }
    case 'boolean': {
      const b = [true, false, 1, ''][randomInt(4)]; // given raw, a field may hold any value
      return () => (absent ? undefined : b);
    }
  }
  const vector = /^vector<([\w.]+)>$/.exec(type);
  if (vector) {
    const items = Array.from({ length: depth > 1 ? 0 : randomInt(4) }, () => randomValue(vector[1], depth + 1));
    return (jute) => (absent ? undefined : items.map((item) => item(jute)));
  }
  const data = /^data\.(\w+)$/.exec(type)!;
  const args = randomArgs(new original.data[data[1]]().specification, depth + 1);
  return (jute) => (absent ? undefined : new jute.data[data[1]](...args.map((arg) => arg(jute))));
}

/** A record as plain data: every own field (absent ones included), buffers as hex, nested records recursively. */
function plain(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return { buffer: value.toString('hex') };
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.keys(value).map((key) => [key, plain((value as Record<string, unknown>)[key])]));
  return value;
}

/** What an operation did on one side: its result, or its error's class and message. */
function outcome<T>(run: () => T): { ok: unknown } | { threw: string } {
  try {
    return { ok: plain(run()) };
  } catch (error) {
    return { threw: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

describe('compiled jute records (node-zookeeper-client 1.1.3)', () => {
  it('replace every record class the client generates', () => {
    for (const { group, name } of classes) {
      expect(compiled[group][name]).not.toBe(original[group][name]);
      expect(new compiled[group][name]().specification).toEqual(new original[group][name]().specification);
    }
    expect(classes.length).toBe(28);
  });

  describe.each(classes)('$group.$name', ({ group, name }) => {
    const spec = new original[group][name]().specification;
    const chrooted = spec.some((a) => a.name === 'path' || a.name.endsWith('Watches'));

    it('builds, measures and writes what the client does, for random fields (with and without a chroot)', () => {
      for (let trial = 0; trial < 60; trial++) {
        const args = randomArgs(spec);
        const chroot = chrooted && trial % 2 === 1 ? '/app' : undefined;
        // The client also sets fields after building a record (header.xid, payload.path):
        // some are then given raw, as the constructor would not have kept them (a short long).
        const raw = spec.map(({ type }) => (randomInt(3) === 0 ? randomValue(type, 1) : undefined));
        const make = (jute: Jute): AnyRecord => {
          const record = new jute[group][name](...args.map((arg) => arg(jute)));
          spec.forEach(({ name: field }, i) => {
            if (raw[i]) record[field] = raw[i](jute);
          });
          if (chroot) record.setChrootPath(chroot);
          return record;
        };
        const [a, b] = [make(original), make(compiled)];
        expect(plain(b)).toStrictEqual(plain(a));
        expect(b).toBeInstanceOf(Object.getPrototypeOf(compiled.protocol.RequestHeader.prototype).constructor);
        const size = outcome(() => a.byteLength());
        expect(outcome(() => b.byteLength())).toStrictEqual(size);
        // Into garbage at an offset, exactly sized, and one byte short.
        const offset = randomInt(5);
        const room = 'ok' in size ? (size.ok as number) : 0;
        for (const length of [offset + room + 3, offset + room - 1]) {
          const garbage = randomBytes(Math.max(length, 1));
          const [ba, bb] = [Buffer.from(garbage), Buffer.from(garbage)];
          expect(outcome(() => b.serialize(bb, offset))).toStrictEqual(outcome(() => a.serialize(ba, offset)));
          expect(bb.toString('hex')).toBe(ba.toString('hex'));
        }
      }
    });

    it('reads back what it wrote as the client does, with and without a chroot', () => {
      for (let trial = 0; trial < 60; trial++) {
        const args = randomArgs(spec);
        const source = new original[group][name](...args.map((arg) => arg(original)));
        if ('threw' in outcome(() => source.byteLength())) continue; // unwritable fields
        const bytes = Buffer.alloc(source.byteLength() + 7);
        if ('threw' in outcome(() => source.serialize(bytes, 3))) continue;
        for (const chroot of chrooted ? [undefined, '/app', '/'] : [undefined]) {
          const read = (jute: Jute) => {
            const record = new jute[group][name]();
            if (chroot) record.setChrootPath(chroot);
            const result = outcome(() => record.deserialize(bytes, 3));
            return { result, record: plain(record) };
          };
          expect(read(compiled)).toStrictEqual(read(original));
        }
      }
    });

    it('fails as the client does on a bad buffer or offset', () => {
      const make = (jute: Jute) => new jute[group][name]();
      for (const [buffer, offset] of [
        ['not a buffer', 0],
        [Buffer.alloc(4), -1],
        [Buffer.alloc(4), 4],
        [Buffer.alloc(0), 0],
      ] as const) {
        const a = make(original);
        const b = make(compiled);
        expect(outcome(() => b.serialize(buffer as Buffer, offset))).toStrictEqual(
          outcome(() => a.serialize(buffer as Buffer, offset)),
        );
        expect(outcome(() => b.deserialize(buffer as Buffer, offset))).toStrictEqual(
          outcome(() => a.deserialize(buffer as Buffer, offset)),
        );
      }
    });
  });

  it('reads absent and empty values (-1 and 0 lengths) as the client does', () => {
    // GetDataResponse: data (-1: absent, then 0: empty) and a Stat; GetChildren2Response: a vector.
    const stat = Buffer.alloc(68, 7);
    const cases: Array<[string, Buffer]> = [
      ['GetDataResponse', Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff]), stat])],
      ['GetDataResponse', Buffer.concat([Buffer.alloc(4), stat])],
      ['GetChildren2Response', Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff]), stat])],
      ['GetChildren2Response', Buffer.concat([Buffer.alloc(4), stat])],
      ['CreateResponse', Buffer.from([0xff, 0xff, 0xff, 0xff])],
    ];
    for (const [name, bytes] of cases) {
      const read = (jute: Jute) => {
        const record = new jute.protocol[name]();
        return { result: outcome(() => record.deserialize(bytes, 0)), record: plain(record) };
      };
      expect(read(compiled)).toStrictEqual(read(original));
    }
  });

  it('frames a request as the client does', () => {
    for (let trial = 0; trial < 40; trial++) {
      const headerArgs = randomArgs(new original.protocol.RequestHeader().specification);
      const payloadArgs = randomArgs(new original.protocol.CreateRequest().specification);
      const frame = (jute: Jute) =>
        outcome(() =>
          new jute.Request(
            new jute.protocol.RequestHeader(...headerArgs.map((arg) => arg(jute))),
            trial % 3 === 0 ? null : new jute.protocol.CreateRequest(...payloadArgs.map((arg) => arg(jute))),
          ).toBuffer(),
        );
      expect(frame(compiled)).toStrictEqual(frame(original));
    }
  });
});
