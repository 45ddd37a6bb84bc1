import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

import { LockService } from './lock.service.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { WITH_LOCK_METADATA } from './with-lock.decorator.js';

/**
 * Binds every provider and controller instance that has `@WithLock` methods to this
 * application's `LockService`, so that a decorated method finds the right service at call
 * time even when several applications run in one process (as in tests).
 */
@Injectable()
export class WithLockExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly lockService: LockService,
  ) {}

  onModuleInit(): void {
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance: unknown = wrapper.instance;
      if (instance && typeof instance === 'object' && hasWithLockMethod(instance)) {
        lockServiceRegistry.bind(instance, this.lockService);
      }
    }
  }
}

function hasWithLockMethod(instance: object): boolean {
  for (let proto = Object.getPrototypeOf(instance); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      const value = Object.getOwnPropertyDescriptor(proto, key)?.value;
      if (typeof value === 'function' && Reflect.hasOwnMetadata(WITH_LOCK_METADATA, value)) return true;
    }
  }
  return false;
}
