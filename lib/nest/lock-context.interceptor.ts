import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Observable } from 'rxjs';

import { LockService } from './lock.service.js';
import { lockServiceRegistry } from './service-registry.js';

/**
 * Runs every handler of the application (HTTP, RPC, WebSocket) as part of it, so that
 * decorated methods of request-scoped providers, which Nest makes per request and the
 * explorer never sees, find this application's `LockService`. Once the application is
 * shutting down, an HTTP answer (success or error) carries `Connection: close`: a
 * keep-alive client then opens its next connection elsewhere, and the server can close
 * (Node's `server.close()` waits for busy keep-alive connections, which a client that
 * always has a request in flight never leaves).
 */
@Injectable()
export class LockContextInterceptor implements NestInterceptor {
  constructor(
    private readonly lockService: LockService,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const answering = context.getType() === 'http' ? () => this.closeIfShuttingDown(context) : () => undefined;
    return new Observable((subscriber) =>
      lockServiceRegistry.runFor(this.lockService, () =>
        next.handle().subscribe({
          next: (value) => (answering(), subscriber.next(value)),
          error: (error: unknown) => (answering(), subscriber.error(error)),
          complete: () => subscriber.complete(),
        }),
      ),
    );
  }

  /** Read when the answer is made, not when the request came: shutdown may begin meanwhile. */
  private closeIfShuttingDown(context: ExecutionContext): void {
    // `shuttingDown` is not read off a mock given for LockService (`createLockServiceMock`).
    if (this.lockService.shuttingDown !== true) return;
    const response = context.switchToHttp().getResponse<{ headersSent?: boolean; raw?: { headersSent?: boolean } }>();
    if ((response.raw ?? response).headersSent) return; // a handler that answered by itself (`@Res()`)
    this.adapterHost.httpAdapter.setHeader(response, 'Connection', 'close');
  }
}
