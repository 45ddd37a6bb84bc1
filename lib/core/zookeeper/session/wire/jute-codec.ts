// @ts-expect-error -- node-zookeeper-client ships no types for its jute module: JuteModule below says what is used
import jute from 'node-zookeeper-client/lib/jute/index.js';

import { compileRecordClass, type JuteAttribute } from './jute-record-compiler.js';
import { multiReadRequest, multiResponseClass, type MultiReadJute, type ZkReadOp } from './multi-read.js';

type RecordClass = new (...args: unknown[]) => { specification: readonly JuteAttribute[] };

interface RequestLike {
  header: { byteLength(): number; serialize(buffer: Buffer, offset: number): number } | null;
  payload: { byteLength(): number; serialize(buffer: Buffer, offset: number): number } | null;
}

/** The part of node-zookeeper-client's jute module this file changes. */
interface JuteModule {
  data: Record<string, RecordClass>;
  protocol: Record<string, RecordClass>;
  Request: { prototype: { toBuffer(this: RequestLike): Buffer } };
  TransactionResponse: new () => unknown;
  [INSTALLED]?: true;
}

// Symbol.for: the CommonJS and ES module copies of this library share one client module.
const INSTALLED = Symbol.for('nestjs-zk-lock.jute-codec');

/**
 * Replaces node-zookeeper-client's generic jute records with compiled ones
 * (`jute-record.compiler.ts`), and lets a request's frame come from Node's buffer pool
 * instead of a fresh zero-filled allocation (every byte of it is written). The client
 * builds each message through its jute module's exports, so every session in the process
 * uses them from then on. They are equivalent to the client's own, field for field and
 * byte for byte (`jute-record.compiler.spec.ts`), so any other user of the client in the
 * process sees no change but the speed. The transaction reply also reads a `multiRead`'s
 * results (`multi-read.wire.ts`), which the client's own rejects. Idempotent.
 */
export function installJuteCodec(): void {
  const module = jute as JuteModule;
  if (module[INSTALLED]) return;
  const Record = Object.getPrototypeOf(module.protocol.RequestHeader.prototype).constructor as RecordClass;
  const runtime = { Record, data: module.data };
  for (const group of [module.data, module.protocol]) {
    for (const [name, Original] of Object.entries(group)) {
      group[name] = compileRecordClass(name, new Original().specification, runtime) as RecordClass;
    }
  }
  module.Request.prototype.toBuffer = pooledFrame;
  module.TransactionResponse = multiResponseClass(module as unknown as MultiReadJute, runtime);
  module[INSTALLED] = true;
}

/** A `multiRead` of `ops`, as a request for node-zookeeper-client's queue (the codec installed). */
export function newMultiReadRequest(ops: readonly ZkReadOp[]): unknown {
  installJuteCodec();
  return multiReadRequest(jute as MultiReadJute, ops);
}

/** node-zookeeper-client's `Request.toBuffer`, on a pooled buffer: the length, then the header and payload. */
function pooledFrame(this: RequestLike): Buffer {
  const size = (this.header?.byteLength() ?? 0) + (this.payload?.byteLength() ?? 0);
  const buffer = Buffer.allocUnsafe(size + 4);
  let offset = buffer.writeInt32BE(size, 0);
  if (this.header) offset += this.header.serialize(buffer, offset);
  if (this.payload) offset += this.payload.serialize(buffer, offset);
  // Every record writes the bytes it counts; were one not to, the gap leaves as zeros, as
  // from the client's zero-filled frame, never as stale pool bytes.
  if (offset < buffer.length) buffer.fill(0, offset);
  return buffer;
}
