import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

import { LockService } from './lock.service.js';
import { lockServiceRegistry } from './service-registry.js';
import { instanceSeenBy, type NestModuleLike } from './module-visibility.js';
import { hasDecoratedMethod } from './decorators/decorated-methods.js';

/** The parts of Nest's `InstanceWrapper` this file reads. */
interface WrapperLike {
  readonly instance: unknown;
  readonly metatype: unknown;
  readonly host?: NestModuleLike;
  readonly isTransient?: boolean;
  isDependencyTreeStatic(): boolean;
  getStaticTransientInstances?(): ReadonlyArray<{ readonly instance: unknown } | undefined>;
}

/**
 * Tells the registry which providers and controllers of this application use this
 * `LockService` (the one their module sees, as Nest would inject it), so that a decorated
 * method finds it at call time whatever the provider's scope, even with several
 * applications, or several `ZkLockModule`s, in one process. Registered from module init
 * (decorated methods work in `onModuleInit` hooks) until shutdown.
 */
@Injectable()
export class DecoratedMethodsExplorer implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly lockService: LockService,
  ) {}

  onModuleInit(): void {
    const instances: object[] = [];
    const classes: Function[] = [];
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()] as unknown as WrapperLike[];
    for (const wrapper of wrappers) {
      const type = wrapper.metatype;
      if (typeof type !== 'function' || !hasDecoratedMethod(type) || !this.isSeenBy(wrapper)) continue;
      classes.push(type);
      instances.push(...instancesOf(wrapper));
    }
    lockServiceRegistry.add(this.lockService, { instances, classes });
  }

  onApplicationBootstrap(): void {
    lockServiceRegistry.started(this.lockService);
  }

  onApplicationShutdown(): void {
    lockServiceRegistry.remove(this.lockService);
  }

  private isSeenBy(wrapper: WrapperLike): boolean {
    return wrapper.host !== undefined && instanceSeenBy(wrapper.host, LockService) === this.lockService;
  }
}

/** The instances made at start-up: a singleton, or the transient instances injected into singletons. */
function instancesOf(wrapper: WrapperLike): object[] {
  if (wrapper.isTransient) {
    const made = wrapper.getStaticTransientInstances?.() ?? [];
    return made
      .map((entry) => entry?.instance)
      .filter((instance): instance is object => typeof instance === 'object' && instance !== null);
  }
  const { instance } = wrapper;
  return wrapper.isDependencyTreeStatic() && typeof instance === 'object' && instance !== null ? [instance] : [];
}
