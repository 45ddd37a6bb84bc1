import assert from 'node:assert';

import { compileRecordClass, type JuteRuntime } from './jute-record-compiler.js';

/** ZooKeeper's opcode for `multiRead` (3.6 and later): several reads in one request. */
export const MULTI_READ = 22;
/** The opcode node-zookeeper-client dispatches a reply by: a `multi`'s reply has the same shape. */
const MULTI = 14;
const GET_CHILDREN = 8;
const GET_DATA = 4;
const ERROR = -1;

export interface ZkReadOp {
  readonly op: 'getChildren' | 'getData';
  readonly path: string;
}

/** One op's result, as the client's transaction reply lists it. */
export interface MultiResult {
  readonly type: number;
  readonly err?: number;
  readonly path?: string;
  readonly children?: string[];
  readonly data?: Buffer;
  readonly stat?: unknown;
}

interface JuteRecord {
  byteLength(): number;
  serialize(buffer: Buffer, offset: number): number;
  deserialize(buffer: Buffer, offset: number): number;
  setChrootPath(path: string | undefined): void;
  [field: string]: unknown;
}
type RecordClass = new (...args: unknown[]) => JuteRecord;

/** The part of node-zookeeper-client's jute module these messages are made of. */
export interface MultiReadJute {
  protocol: Record<string, RecordClass>;
  Request: new (header: unknown, payload: unknown) => unknown;
  TransactionResponse: new () => unknown;
}

/**
 * A `multiRead` request for node-zookeeper-client's queue: per op, a multi header and a
 * `GetChildrenRequest` or `GetDataRequest` (no watch: ZooKeeper sets none in a
 * `multiRead`), then the closing header, as ZooKeeper's `MultiOperationRecord`. Its header
 * says `multi` to the client, which then reads the reply as a transaction's (the
 * same shape), and writes 22 on the wire.
 */
export function multiReadRequest(jute: MultiReadJute, ops: readonly ZkReadOp[]): unknown {
  const { MultiHeader, GetChildren2Request, GetDataRequest } = jute.protocol;
  const records: JuteRecord[] = [];
  for (const { op, path } of ops) {
    // getChildren's request is getChildren2's: a path and a watch flag.
    if (op === 'getChildren')
      records.push(new MultiHeader(GET_CHILDREN, false, -1), new GetChildren2Request(path, false));
    else records.push(new MultiHeader(GET_DATA, false, -1), new GetDataRequest(path, false));
  }
  records.push(new MultiHeader(ERROR, true, -1));
  const header = {
    type: MULTI,
    xid: 0, // the client numbers it when it sends it
    byteLength: () => 8,
    serialize(buffer: Buffer, offset: number): number {
      buffer.writeInt32BE(this.xid, offset);
      buffer.writeInt32BE(MULTI_READ, offset + 4);
      return 8;
    },
  };
  const payload = {
    setChrootPath: (chroot: string | undefined) => records.forEach((record) => record.setChrootPath(chroot)),
    byteLength: () => records.reduce((size, record) => size + record.byteLength(), 0),
    serialize(buffer: Buffer, offset: number): number {
      let at = offset;
      for (const record of records) at += record.serialize(buffer, at);
      return at - offset;
    },
  };
  return new jute.Request(header, payload);
}

/**
 * node-zookeeper-client's `TransactionResponse`, which also reads the results of a
 * `multiRead` (a children list; data and stat). For a `multi`'s results it reads and
 * returns exactly what the client's own does (`multi-read.wire.spec.ts`).
 */
export function multiResponseClass(jute: MultiReadJute, runtime: JuteRuntime): new () => unknown {
  const GetChildrenResponse = compileRecordClass(
    'GetChildrenResponse',
    [{ name: 'children', type: 'vector<ustring>' }],
    runtime,
  ) as RecordClass;
  const { protocol } = jute;
  return class TransactionResponse {
    results: MultiResult[] = [];
    chrootPath: string | undefined = undefined;

    setChrootPath(path: string | undefined): void {
      this.chrootPath = path;
    }

    deserialize(buffer: Buffer, offset: number): number {
      assert(Buffer.isBuffer(buffer), 'buffer must an instance of Node.js Buffer class.');
      assert(offset >= 0 && offset < buffer.length, `offset: ${offset} is out of buffer range.`);
      let read = 0;
      const next = (Record: RecordClass): JuteRecord => {
        const record = new Record();
        record.setChrootPath(this.chrootPath);
        read += record.deserialize(buffer, offset + read);
        return record;
      };
      for (;;) {
        const header = next(protocol.MultiHeader);
        if (header.done) return read;
        const type = header.type as number;
        this.results.push(resultOf(type, () => next(RESULT_RECORDS[type]?.(protocol, GetChildrenResponse))));
      }
    }
  };
}

/** The record each result type is followed by (none for a delete or a check). */
const RESULT_RECORDS: Record<number, (protocol: Record<string, RecordClass>, children: RecordClass) => RecordClass> = {
  1: (protocol) => protocol.CreateResponse,
  5: (protocol) => protocol.SetDataResponse,
  [ERROR]: (protocol) => protocol.ErrorResponse,
  [GET_CHILDREN]: (_, children) => children,
  [GET_DATA]: (protocol) => protocol.GetDataResponse,
};

function resultOf(type: number, read: () => JuteRecord): MultiResult {
  switch (type) {
    case 2: // delete
    case 13: // check
      return { type };
    case 1: // create
      return { type, path: read().path as string };
    case 5: // setData
      return { type, stat: read().stat };
    case ERROR:
      return { type, err: read().err as number };
    case GET_CHILDREN:
      return { type, children: read().children as string[] };
    case GET_DATA: {
      const { data, stat } = read();
      return { type, data: data as Buffer | undefined, stat };
    }
    default:
      throw new Error(`Unknown type: ${type} in transaction response.`);
  }
}
