import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

import { methodsOf, WHEN_LEADER_METADATA } from './decorators/decorated-methods.js';
import { LeadershipService } from './leadership.service.js';
import { LockService } from './lock.service.js';
import { instanceSeenBy, type NestModuleLike } from './module-visibility.js';

/** The parts of Nest's `InstanceWrapper` this file reads. */
interface WrapperLike {
  readonly metatype: unknown;
  readonly host?: NestModuleLike;
}

/**
 * Joins, at bootstrap, the group of every `@WhenLeader` method (once each) of the
 * providers and controllers that use this module's `LockService` (the one their module
 * sees, which is where `@WhenLeader` looks at call time), whatever their scope.
 */
@Injectable()
export class LeadershipExplorer implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly lockService: LockService,
    private readonly leadership: LeadershipService,
  ) {}

  onApplicationBootstrap(): void {
    const groups = new Set<string>();
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()] as unknown as WrapperLike[];
    for (const { metatype, host } of wrappers) {
      if (typeof metatype !== 'function' || !host || instanceSeenBy(host, LockService) !== this.lockService) continue;
      for (const group of groupsOf(metatype)) groups.add(group);
    }
    for (const group of groups) this.leadership.join(group);
  }
}

/** Groups of the `@WhenLeader` methods of `type` (own or inherited, instance or static). */
function groupsOf(type: Function): string[] {
  const groups: string[] = [];
  for (const method of methodsOf(type)) {
    const group: unknown = Reflect.getOwnMetadata?.(WHEN_LEADER_METADATA, method);
    if (typeof group === 'string') groups.push(group);
  }
  return groups;
}
