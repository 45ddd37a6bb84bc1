/**
 * The first message on a ZooKeeper 3.8 election connection (QuorumCnxManager.startConnection):
 *
 *   long protocolVersion   -65536 (V1: one address) or -65535 (V2: `a|b|…`)
 *   long sid               the id of the server that connected
 *   int  length            of the address string
 *   byte address[length]   `host:port` of the connecting server's own election listener
 *
 * A server that receives a connection from a lower id drops it and connects back to that
 * announced address (QuorumCnxManager.handleConnection). Behind proxies the announced
 * address is the real one, so the call back would skip the proxies: the rewriter swaps it
 * for the proxy through which the receiver reaches the sender.
 */
const PROTOCOL_V1 = -65536n;
const PROTOCOL_V2 = -65535n;
const HEADER_BYTES = 8 + 8 + 4;
/** QuorumCnxManager's default maxBuffer; the receiver refuses longer address strings. */
const MAX_ADDRESS_BYTES = 512 * 1024;

export interface ElectionGreeting {
  sid: bigint;
  /** The address the sender announced, as it came. */
  announced: string;
  /** The address the receiver was given in its place. */
  rewrittenTo: string;
}

type Parsed =
  | { kind: 'incomplete' }
  | { kind: 'foreign' }
  | { kind: 'greeting'; sid: bigint; version: bigint; end: number; announced: string };

function parse(bytes: Buffer): Parsed {
  if (bytes.length < 8) return { kind: 'incomplete' };
  const version = bytes.readBigInt64BE(0);
  // A non-negative first long is the pre-3.5 greeting (a bare sid, no address): nothing to swap.
  if (version !== PROTOCOL_V1 && version !== PROTOCOL_V2) return { kind: 'foreign' };
  if (bytes.length < HEADER_BYTES) return { kind: 'incomplete' };
  const length = bytes.readInt32BE(16);
  if (length <= 0 || length > MAX_ADDRESS_BYTES) return { kind: 'foreign' };
  const end = HEADER_BYTES + length;
  if (bytes.length < end) return { kind: 'incomplete' };
  return {
    kind: 'greeting',
    version,
    sid: bytes.readBigInt64BE(8),
    end,
    announced: bytes.toString('utf8', HEADER_BYTES, end),
  };
}

function encode(version: bigint, sid: bigint, address: string): Buffer {
  const text = Buffer.from(address, 'utf8');
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeBigInt64BE(version, 0);
  header.writeBigInt64BE(sid, 8);
  header.writeInt32BE(text.length, 16);
  return Buffer.concat([header, text]);
}

/**
 * Rewrites the greeting at the start of one election connection, then passes bytes through.
 * It holds bytes back until the greeting is whole and hands it on in one piece, because the
 * receiver reads the address with a single `read` and fails on a short one.
 */
export class ElectionGreetingRewriter {
  private pending: Buffer | undefined = Buffer.alloc(0);

  constructor(
    /** The `host:port` to announce instead of the sender's own. */
    private readonly callback: string,
    private readonly onRewrite: (greeting: ElectionGreeting) => void = () => undefined,
  ) {}

  /** The bytes to forward for `chunk`: none until the greeting is whole, then everything. */
  feed(chunk: Buffer): Buffer {
    if (!this.pending) return chunk;
    const bytes = Buffer.concat([this.pending, chunk]);
    const parsed = parse(bytes);
    if (parsed.kind === 'incomplete') {
      this.pending = bytes;
      return Buffer.alloc(0);
    }
    this.pending = undefined;
    if (parsed.kind === 'foreign') return bytes;
    this.onRewrite({ sid: parsed.sid, announced: parsed.announced, rewrittenTo: this.callback });
    return Buffer.concat([encode(parsed.version, parsed.sid, this.callback), bytes.subarray(parsed.end)]);
  }

  /** What is still held back when the sender stops mid-greeting: forwarded as it came. */
  flush(): Buffer {
    const rest = this.pending ?? Buffer.alloc(0);
    this.pending = undefined;
    return rest;
  }
}
