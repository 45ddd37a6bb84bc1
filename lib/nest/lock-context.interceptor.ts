import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Observable } from 'rxjs';

import { LockService } from './lock.service.js';
import { lockServiceRegistry } from './service-registry.js';

/**
 * Runs every handler of the application (HTTP, RPC, WebSocket) as part of it, so that
 * decorated methods of request-scoped providers, which Nest makes per request and the
 * explorer never sees, find this application's `LockService`.
 */
@Injectable()
export class LockContextInterceptor implements NestInterceptor {
  constructor(private readonly lockService: LockService) {}

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return new Observable((subscriber) =>
      lockServiceRegistry.runFor(this.lockService, () => next.handle().subscribe(subscriber)),
    );
  }
}
