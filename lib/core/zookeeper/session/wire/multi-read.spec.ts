import { randomBytes } from 'node:crypto';

type AnyRecord = Record<string, unknown> & {
  specification?: Array<{ name: string }>;
  byteLength(): number;
  serialize(buffer: Buffer, offset: number): number;
};
type RecordClass = new (...args: unknown[]) => AnyRecord;
interface Jute {
  protocol: Record<string, RecordClass>;
  data: Record<string, RecordClass>;
  TransactionResponse: new () => {
    results: unknown[];
    setChrootPath(path: string): void;
    deserialize(b: Buffer, o: number): number;
  };
  Request: { prototype: { toBuffer(): Buffer } };
}

/** A fresh copy of the client's jute module: the client's own classes, or (installed) the compiled ones. */
function freshJute(install: boolean): { jute: Jute; wire?: typeof import('./jute-codec.js') } {
  let jute!: Jute;
  let wire: typeof import('./jute-codec.js') | undefined;
  jest.isolateModules(() => {
    jute = require('node-zookeeper-client/lib/jute/index.js') as Jute;
    if (install) {
      wire = require('./jute-codec.js') as typeof import('./jute-codec.js');
      wire.installJuteCodec();
    }
  });
  return { jute, wire };
}

const original = freshJute(false).jute;
const { jute: compiled, wire } = freshJute(true);

/** A reply body: per result a multi header and its record (written with the client's own classes), then the end. */
function replyOf(results: Array<{ type: number; err?: number; record?: AnyRecord }>): Buffer {
  const { MultiHeader } = original.protocol;
  const records = results.flatMap(({ type, err = 0, record }) => [
    new MultiHeader(type, false, err),
    ...(record ? [record] : []),
  ]);
  records.push(new MultiHeader(-1, true, -1));
  const buffer = Buffer.alloc(records.reduce((size, record) => size + record.byteLength(), 0) + 3);
  let offset = 3; // not at 0: offsets are honoured
  for (const record of records) offset += record.serialize(buffer, offset);
  return buffer;
}

/** A record as plain values (the two sides' records are different classes). */
function plain(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString('hex');
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') {
    const spec = (value as AnyRecord).specification;
    const keys = spec ? spec.map(({ name }) => name) : Object.keys(value);
    return Object.fromEntries(keys.map((key) => [key, plain((value as Record<string, unknown>)[key])]));
  }
  return value;
}

function read(jute: Jute, buffer: Buffer, chroot?: string) {
  const response = new jute.TransactionResponse();
  if (chroot) response.setChrootPath(chroot);
  try {
    return { read: response.deserialize(buffer, 3), results: plain(response.results) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** A GetChildrenResponse (the client has none): a vector of strings, each a length and UTF-8 bytes. */
function childrenResponse(children: string[]): AnyRecord {
  const bytes = children.map((child) => Buffer.from(child, 'utf8'));
  const body = Buffer.concat([Buffer.alloc(4), ...bytes.flatMap((b) => [Buffer.alloc(4), b])]);
  body.writeInt32BE(children.length, 0);
  let at = 4;
  for (const b of bytes) {
    body.writeInt32BE(b.length, at);
    at += 4 + b.length;
  }
  return { byteLength: () => body.length, serialize: (buffer: Buffer, offset: number) => body.copy(buffer, offset) };
}

function stat(): AnyRecord {
  const { Stat } = original.data;
  const long = () => randomBytes(8);
  return new Stat(long(), long(), long(), long(), 3, 4, 5, long(), 6, 7, long());
}

describe("the transaction reply (node-zookeeper-client's TransactionResponse, replaced)", () => {
  const { CreateResponse, SetDataResponse, ErrorResponse } = original.protocol;
  const writes = [
    { type: 1, record: new CreateResponse('/app/locks/a/_c_1-lock-0000000001') },
    { type: 2 },
    { type: 5, record: new SetDataResponse(stat()) },
    { type: 13 },
    { type: -1, err: -101, record: new ErrorResponse(-101) },
    { type: 1, record: new CreateResponse('/app') },
  ];

  it.each([undefined, '/app'])("reads a multi's results exactly as the client's own (chroot %s)", (chroot) => {
    const buffer = replyOf(writes);
    const ours = read(compiled, buffer, chroot);
    expect(ours).toEqual(read(original, buffer, chroot));
    expect(ours.read).toBe(buffer.length - 3);
  });

  it('fails on an unknown result type, and on a bad offset, as the client does', () => {
    const unknown = replyOf([{ type: 99 }]);
    expect(read(compiled, unknown)).toEqual(read(original, unknown));
    expect(read(compiled, unknown).error).toBe('Unknown type: 99 in transaction response.');
    const responses = [original, compiled].map((jute) => new jute.TransactionResponse());
    const errors = responses.map((response) => {
      try {
        response.deserialize(Buffer.alloc(4), 4);
      } catch (error) {
        return (error as Error).message;
      }
    });
    expect(errors[1]).toBe(errors[0]);
    expect(errors[0]).toMatch(/out of buffer range/);
  });

  it("reads a multiRead's results: children, data and stat, and each op's error", () => {
    const { GetDataResponse } = original.protocol;
    const theStat = stat();
    const buffer = replyOf([
      { type: 8, record: childrenResponse(['b', 'a', 'ünï']) },
      { type: 4, record: new GetDataResponse(Buffer.from('data'), theStat) },
      { type: -1, err: -101, record: new ErrorResponse(-101) },
      { type: 4, record: new GetDataResponse(undefined, theStat) },
    ]);
    const { read: bytes, results } = read(compiled, buffer, '/app');
    expect(bytes).toBe(buffer.length - 3);
    expect(results).toEqual([
      { type: 8, children: ['b', 'a', 'ünï'] },
      { type: 4, data: Buffer.from('data').toString('hex'), stat: plain(theStat) },
      { type: -1, err: -101 },
      { type: 4, data: undefined, stat: plain(theStat) },
    ]);
    // The client's own cannot read it: why the reply class is replaced.
    expect(read(original, buffer).error).toBe('Unknown type: 8 in transaction response.');
  });
});

describe('a multiRead request', () => {
  /** The frame as ZooKeeper's MultiOperationRecord lays it out, by hand. */
  function expected(xid: number, ops: Array<[number, string]>): Buffer {
    const parts: Buffer[] = [];
    const int = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
    const header = (type: number, done: boolean) => Buffer.concat([int(type), Buffer.from([done ? 1 : 0]), int(-1)]);
    parts.push(int(xid), int(22));
    for (const [type, path] of ops) {
      const bytes = Buffer.from(path, 'utf8');
      parts.push(header(type, false), int(bytes.length), bytes, Buffer.from([0])); // the path, no watch
    }
    parts.push(header(-1, true));
    const body = Buffer.concat(parts);
    return Buffer.concat([int(body.length), body]);
  }

  it.each([undefined, '/app'])(
    'is framed as ZooKeeper reads it: opcode 22, each op its header and path (chroot %s)',
    (chroot) => {
      const request = wire!.newMultiReadRequest([
        { op: 'getChildren', path: '/locks/a' },
        { op: 'getData', path: '/locks/a' },
        { op: 'getChildren', path: '/locks/ünï' },
      ]) as {
        header: { type: number; xid: number };
        payload: { setChrootPath(path: string): void };
        toBuffer(): Buffer;
      };
      request.header.xid = 77; // as the client numbers it when it sends it
      if (chroot) request.payload.setChrootPath(chroot);
      const prefix = chroot ?? '';
      expect(request.toBuffer()).toEqual(
        expected(77, [
          [8, `${prefix}/locks/a`],
          [4, `${prefix}/locks/a`],
          [8, `${prefix}/locks/ünï`],
        ]),
      );
      // The client dispatches the reply by this type: a multi's, read by the reply class above.
      expect(request.header.type).toBe(14);
    },
  );
});
