import { Inject, Optional } from '@nestjs/common';

import { LockService } from '../lock.service.js';
import { INJECTED_LOCK_SERVICE } from '../service-registry.js';

/** Metadata keys of this library's method decorators (a method wrapped by one carries its key). */
export const WITH_LOCK_METADATA = Symbol.for('nestjs-zk-lock.with-lock');
export const WHEN_LEADER_METADATA = Symbol.for('nestjs-zk-lock.when-leader');
export const WITH_LEASE_METADATA = Symbol.for('nestjs-zk-lock.with-lease');

const KEYS = [WITH_LOCK_METADATA, WHEN_LEADER_METADATA, WITH_LEASE_METADATA];

/** Every method of `type`, own or inherited, instance or static (a method overridden in a subclass comes twice). */
export function* methodsOf(type: Function): Generator<Function> {
  for (const start of [type.prototype as object | undefined, type]) {
    for (
      let proto = start;
      proto && proto !== Object.prototype && proto !== Function.prototype;
      proto = Object.getPrototypeOf(proto)
    ) {
      for (const key of Object.getOwnPropertyNames(proto)) {
        const value: unknown = Object.getOwnPropertyDescriptor(proto, key)?.value;
        if (typeof value === 'function') yield value;
      }
    }
  }
}

/** Whether `type` has a method (own or inherited, instance or static) wrapped by one of this library's decorators. */
export function hasDecoratedMethod(type: Function): boolean {
  for (const method of methodsOf(type)) {
    if (KEYS.some((meta) => Reflect.hasOwnMetadata?.(meta, method))) return true;
  }
  return false;
}

/**
 * What each decorator of this library does to a method when the class is defined: checks
 * it is one (`notAMethod` builds the error otherwise), replaces it with `wrap(original,
 * label)`, and keeps on the wrapper the method's name, every other decorator's metadata
 * (`@Get`, guards, Swagger…, whichever order the decorators are written in) and its own
 * `metadata`, so that the wrapper looks like the method to Nest.
 */
export function wrapMethod(
  target: object,
  key: string | symbol,
  descriptor: PropertyDescriptor | undefined,
  metadata: { readonly key: symbol; readonly value: unknown },
  notAMethod: (method: string) => Error,
  wrap: (original: Function, method: string) => Function,
): void {
  const method = methodLabel(target, key);
  const original: unknown = descriptor?.value;
  if (typeof original !== 'function') throw notAMethod(method);
  const wrapped = wrap(original, method);
  copyMethodMetadata(original, wrapped);
  Reflect.defineMetadata?.(metadata.key, metadata.value, wrapped);
  descriptor!.value = wrapped;
  if (typeof target === 'object') injectLockService(target);
}

// @nestjs/common's metadata key for property injection (the same in Nest 11 and 12), read without a deep import.
const PROPERTY_DEPS_METADATA = 'self:properties_metadata';

/**
 * Has Nest inject, into every instance of `prototype`'s class, the `LockService` the
 * class's module resolves (`INJECTED_LOCK_SERVICE`, optional: a module without one still
 * builds the class): a mock provided beside the class then serves its decorated methods,
 * with or without ZkLockModule. Once per class; a subclass inherits it.
 */
function injectLockService(prototype: object): void {
  if (typeof Reflect.getMetadata !== 'function') return; // reflect-metadata not loaded: no Nest to inject
  const declared = Reflect.getMetadata(PROPERTY_DEPS_METADATA, prototype.constructor) as
    ReadonlyArray<{ readonly key: unknown }> | undefined;
  if (declared?.some(({ key }) => key === INJECTED_LOCK_SERVICE)) return;
  Inject(LockService)(prototype, INJECTED_LOCK_SERVICE);
  Optional()(prototype, INJECTED_LOCK_SERVICE);
}

/** `Class.method` for messages: `target` is a prototype, or the class itself for a static method. */
function methodLabel(target: object, key: string | symbol): string {
  const type = typeof target === 'function' ? target : (target as { constructor?: Function }).constructor;
  return `${type?.name || 'object'}.${String(key)}`;
}

function copyMethodMetadata(from: Function, to: Function): void {
  Object.defineProperty(to, 'name', { value: from.name, configurable: true });
  if (typeof Reflect.getOwnMetadataKeys !== 'function') return; // reflect-metadata not loaded
  for (const key of Reflect.getOwnMetadataKeys(from)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, from), to);
  }
}
