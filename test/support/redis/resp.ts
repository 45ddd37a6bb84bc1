/**
 * Just enough of Redis's wire protocol (RESP2) for `RedisServer.command`: a command as an
 * array of bulk strings, and one reply read back as text, so the harness needs no client.
 */

/** An error reply (`-ERR ...`): the server refused the command. */
export class RedisReplyError extends Error {
  constructor(readonly reply: string) {
    super(`Redis answered an error: ${reply}`);
    this.name = 'RedisReplyError';
  }
}

/** `args` as a RESP array of bulk strings. */
export function encodeCommand(args: readonly string[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
  return Buffer.from(parts.join(''));
}

type Parsed = { value: string | RedisReplyError; end: number };

/**
 * The first reply in `buffer` as text (see `RedisServer.command`), an error reply as a
 * `RedisReplyError`, or undefined when the buffer does not hold all of it yet.
 */
export function parseReply(buffer: Buffer): string | RedisReplyError | undefined {
  return parseAt(buffer, 0)?.value;
}

function parseAt(buffer: Buffer, start: number): Parsed | undefined {
  const lineEnd = buffer.indexOf('\r\n', start);
  if (lineEnd < 0) return undefined;
  const line = buffer.toString('utf8', start + 1, lineEnd);
  const next = lineEnd + 2;
  switch (String.fromCharCode(buffer[start])) {
    case '+':
    case ':':
      return { value: line, end: next };
    case '-':
      return { value: new RedisReplyError(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: '(nil)', end: next };
      if (buffer.length < next + length + 2) return undefined;
      return { value: buffer.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: '(nil)', end: next };
      const items: string[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const item = parseAt(buffer, at);
        if (!item) return undefined;
        items.push(item.value instanceof RedisReplyError ? item.value.reply : item.value);
        at = item.end;
      }
      return { value: items.join('\n'), end: at };
    }
    default:
      throw new Error(`Not a RESP reply: ${JSON.stringify(buffer.toString('utf8', start, lineEnd))}.`);
  }
}
