/**
 * Compiles node-zookeeper-client 1.1.3's jute record specifications into classes of their
 * own. The client's generic `Record` walks its specification for every field of every
 * message, matches two regular expressions per vector or nested field, and allocates a
 * fresh 8-byte buffer per long (a `Stat` has six): most of the client's CPU per message.
 * The compiled classes do the same, field by field, in straight-line code: the same fields
 * in the same order, the same values, the same bytes and the same errors (proved against the
 * client's own classes by `jute-record.compiler.spec.ts`).
 */

/** One field of a jute record, as `specification.json` lists it. */
export interface JuteAttribute {
  readonly name: string;
  readonly type: string;
}

/** What the compiled classes need from the client's jute module. */
export interface JuteRuntime {
  /** The client's `Record`, kept as the classes' prototype (for its `instanceof` checks and `setChrootPath`). */
  readonly Record: new (...args: never[]) => object;
  /** The module's `data` classes, read when a record is built, so the compiled ones are used once installed. */
  readonly data: Record<string, new () => object>;
}

export type CompiledRecordClass = new (...args: unknown[]) => object;

const WATCH_LISTS = new Set(['dataWatches', 'existWatches', 'childWatches']);
const VECTOR = /^vector<([\w.]+)>$/;
const DATA = /^data\.(\w+)$/;

/** The class for one record: `spec` is the client's own specification array (kept on each record, as the client does). */
export function compileRecordClass(
  className: string,
  spec: readonly JuteAttribute[],
  runtime: JuteRuntime,
): CompiledRecordClass {
  const fields = spec.map((attribute, i) => ({ ...attribute, arg: `a${i}`, ref: `this.${checkName(attribute.name)}` }));
  const source = [
    `function ${checkName(className)}(${fields.map((f) => f.arg).join(', ')}) {`,
    '  this.specification = SPEC;',
    '  this.chrootPath = undefined;',
    ...fields.map((f) => `  ${init(f.type, f.ref, f.arg)}`),
    '}',
    `${className}.prototype = Object.create(Record.prototype, { constructor: { value: ${className}, writable: true, configurable: true } });`,
    `${className}.super_ = Record;`,
    `${className}.prototype.byteLength = function () {`,
    '  let size = 0;',
    ...fields.map((f) => `  { const v = ${outgoing(f)}; size += ${sizeOf(f.type, 'v')}; }`),
    '  return size;',
    '};',
    `${className}.prototype.serialize = function (buffer, offset) {`,
    "  if (!Buffer.isBuffer(buffer)) throw new Error('buffer must an instance of Node.js Buffer class.');",
    "  if (offset < 0 || offset >= buffer.length) throw new Error('offset: ' + offset + ' is out of buffer range.');",
    '  const size = this.byteLength();',
    "  if (offset + size > buffer.length) throw new Error('buffer does not have enough space.');",
    '  let o = offset;',
    ...fields.map((f) => `  { const v = ${outgoing(f)}; ${write(f.type, 'v')} }`),
    '  return size;',
    '};',
    `${className}.prototype.deserialize = function (buffer, offset) {`,
    "  if (!Buffer.isBuffer(buffer)) throw new Error('buffer must an instance of Node.js Buffer class.');",
    "  if (offset < 0 || offset >= buffer.length) throw new Error('offset: ' + offset + ' is out of buffer range.');",
    '  let o = offset;',
    ...fields.map((f) => `  { let v; ${read(f.type, 'v')} ${f.ref} = v; }${f.name === 'path' ? STRIP_CHROOT : ''}`),
    '  return o - offset;',
    '};',
    `return ${className};`,
  ].join('\n');
  // A generated function per record type is what makes each field access monomorphic;
  // the source is built only from the client's fixed specification, never from input.
  const build = new Function('SPEC', 'Record', 'DATA', 'prepend', 'readLong', 'newLong', source) as (
    ...args: unknown[]
  ) => CompiledRecordClass;
  return build(spec, runtime.Record, runtime.data, prepend, readLong, newLong);
}

const STRIP_CHROOT =
  "\n  if (this.chrootPath) this.path = this.path === this.chrootPath ? '/' : this.path.substring(this.chrootPath.length);";

/** The value as sent: a path (and each watched path) with the chroot in front. */
function outgoing(f: { name: string; ref: string }): string {
  if (f.name === 'path') return `prepend(this.chrootPath, ${f.ref})`;
  if (WATCH_LISTS.has(f.name))
    return `Array.isArray(${f.ref}) ? ${f.ref}.map((p) => prepend(this.chrootPath, p)) : ${f.ref}`;
  return f.ref;
}

function init(type: string, ref: string, arg: string): string {
  switch (type) {
    case 'int':
      return `${ref} = typeof ${arg} === 'number' ? ${arg} : 0;`;
    case 'long':
      return `${ref} = newLong(${arg});`;
    case 'buffer':
      return `if (Buffer.isBuffer(${arg})) { ${ref} = Buffer.alloc(${arg}.length); ${arg}.copy(${ref}); } else ${ref} = undefined;`;
    case 'ustring':
      return `${ref} = typeof ${arg} === 'string' ? ${arg} : undefined;`;
    case 'boolean':
      return `${ref} = typeof ${arg} === 'boolean' ? ${arg} : false;`;
  }
  if (VECTOR.test(type)) return `${ref} = Array.isArray(${arg}) ? ${arg} : undefined;`;
  const data = DATA.exec(type);
  if (data) return `${ref} = ${arg} instanceof Record ? ${arg} : new DATA.${checkName(data[1])}();`;
  throw new Error(`Unknown type: ${type}`);
}

function sizeOf(type: string, v: string): string {
  switch (type) {
    case 'int':
      return '4';
    case 'long':
      return '8';
    case 'buffer':
      return `(Buffer.isBuffer(${v}) ? 4 + ${v}.length : 4)`;
    case 'ustring':
      return `(typeof ${v} === 'string' ? 4 + Buffer.byteLength(${v}) : 4)`;
    case 'boolean':
      return '1';
  }
  const vector = VECTOR.exec(type);
  if (vector) return `(Array.isArray(${v}) ? ${v}.reduce((n, item) => n + ${sizeOf(vector[1], 'item')}, 4) : 4)`;
  if (DATA.test(type)) return `${v}.byteLength()`;
  throw new Error(`Unknown type: ${type}`);
}

function write(type: string, v: string): string {
  switch (type) {
    case 'int':
      return `o = buffer.writeInt32BE(${v}, o);`;
    case 'long':
      return `${v}.copy(buffer, o); o += 8;`;
    case 'buffer':
      return `if (Buffer.isBuffer(${v})) { o = buffer.writeInt32BE(${v}.length, o); ${v}.copy(buffer, o); o += ${v}.length; } else o = buffer.writeInt32BE(-1, o);`;
    case 'ustring':
      return `if (typeof ${v} === 'string') { const n = Buffer.byteLength(${v}); o = buffer.writeInt32BE(n, o); buffer.write(${v}, o, n, 'utf8'); o += n; } else o = buffer.writeInt32BE(-1, o);`;
    case 'boolean':
      return `o = buffer.writeUInt8(${v} ? 1 : 0, o);`;
  }
  const vector = VECTOR.exec(type);
  if (vector)
    return `if (Array.isArray(${v})) { o = buffer.writeInt32BE(${v}.length, o); for (const item of ${v}) { ${write(vector[1], 'item')} } } else o = buffer.writeInt32BE(-1, o);`;
  if (DATA.test(type)) return `o += ${v}.serialize(buffer, o);`;
  throw new Error(`Unknown type: ${type}`);
}

function read(type: string, v: string): string {
  switch (type) {
    case 'int':
      return `${v} = buffer.readInt32BE(o); o += 4;`;
    case 'long':
      return `${v} = readLong(buffer, o); o += 8;`;
    case 'buffer':
      return `{ const n = buffer.readInt32BE(o); o += 4; if (n === -1) ${v} = undefined; else { ${v} = Buffer.alloc(n); buffer.copy(${v}, 0, o, o + n); o += n; } }`;
    case 'ustring':
      return `{ const n = buffer.readInt32BE(o); o += 4; if (n === -1) ${v} = undefined; else { ${v} = buffer.toString('utf8', o, o + n); o += n; } }`;
    case 'boolean':
      return `${v} = buffer.readUInt8(o) === 1; o += 1;`;
  }
  const vector = VECTOR.exec(type);
  if (vector)
    return `{ let n = buffer.readInt32BE(o); o += 4; if (n === -1) ${v} = undefined; else { ${v} = []; for (; n > 0; n--) { let item; ${read(vector[1], 'item')} ${v}.push(item); } } }`;
  const data = DATA.exec(type);
  if (data) return `${v} = new DATA.${checkName(data[1])}(); o += ${v}.deserialize(buffer, o);`;
  throw new Error(`Unknown type: ${type}`);
}

/** The client's `prependChroot`. */
function prepend(chrootPath: string | undefined, path: string): string {
  if (!chrootPath) return path;
  return path === '/' ? chrootPath : chrootPath + path;
}

/** A long as the client keeps it: 8 bytes of its own (from Node's pool: no allocation per long). */
function readLong(buffer: Buffer, offset: number): Buffer {
  const long = Buffer.allocUnsafe(8);
  buffer.copy(long, 0, offset, offset + 8);
  return long;
}

function newLong(arg: unknown): Buffer {
  const long = Buffer.allocUnsafe(8).fill(0);
  if (Buffer.isBuffer(arg)) arg.copy(long);
  return long;
}

/** Names go into generated source: only plain identifiers are accepted. */
function checkName(name: string): string {
  if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new Error(`jute: unexpected name ${JSON.stringify(name)}`);
  return name;
}
