/** Metadata keys of this library's method decorators (a method wrapped by one carries its key). */
export const WITH_LOCK_METADATA = Symbol.for('nestjs-zk-lock.with-lock');
export const WHEN_LEADER_METADATA = Symbol.for('nestjs-zk-lock.when-leader');
export const WITH_LEASE_METADATA = Symbol.for('nestjs-zk-lock.with-lease');

const KEYS = [WITH_LOCK_METADATA, WHEN_LEADER_METADATA, WITH_LEASE_METADATA];

/** Whether `type` has a method (own or inherited, instance or static) wrapped by one of this library's decorators. */
export function hasDecoratedMethod(type: Function): boolean {
  return hasIn(type.prototype) || hasIn(type);
}

function hasIn(start: object | null | undefined): boolean {
  for (
    let proto = start;
    proto && proto !== Object.prototype && proto !== Function.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      const value = Object.getOwnPropertyDescriptor(proto, key)?.value;
      if (typeof value === 'function' && KEYS.some((meta) => Reflect.hasOwnMetadata?.(meta, value))) return true;
    }
  }
  return false;
}

/** `Class.method` for messages: `target` is a prototype, or the class itself for a static method. */
export function methodLabel(target: object, key: string | symbol): string {
  const type = typeof target === 'function' ? target : (target as { constructor?: Function }).constructor;
  return `${type?.name || 'object'}.${String(key)}`;
}

/**
 * Copies the Reflect metadata that other decorators stored on a method (`@Get`, guards,
 * pipes, Swagger…) onto its wrapper, and keeps the method's name, so that whichever order
 * the decorators are written in, the wrapper looks like the method to Nest.
 */
export function copyMethodMetadata(from: Function, to: Function): void {
  Object.defineProperty(to, 'name', { value: from.name, configurable: true });
  if (typeof Reflect.getOwnMetadataKeys !== 'function') return; // reflect-metadata not loaded
  for (const key of Reflect.getOwnMetadataKeys(from)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, from), to);
  }
}
