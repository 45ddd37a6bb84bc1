/** `Class.method` for messages: `target` is a prototype, or the class itself for a static method. */
export function methodLabel(target: object, key: string | symbol): string {
  const type = typeof target === 'function' ? target : (target as { constructor?: Function }).constructor;
  return `${type?.name || 'object'}.${String(key)}`;
}
