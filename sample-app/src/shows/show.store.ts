import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Inject, Injectable } from '@nestjs/common';

import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import type { Show } from './show.model.js';

/**
 * The "remote" store every instance shares, standing in for a database: one JSON file per
 * show in STORE_DIR. Each read and write takes STORE_DELAY_MS more, like a network round
 * trip, which leaves room for concurrent read-modify-writes to overwrite each other.
 */
@Injectable()
export class ShowStore {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    mkdirSync(config.storeDir, { recursive: true });
  }

  async read(id: string): Promise<Show | undefined> {
    let text: string;
    try {
      text = await readFile(this.fileOf(id), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    await sleep(this.config.storeDelayMs); // the answer travelling back
    return JSON.parse(text) as Show;
  }

  async write(show: Show): Promise<void> {
    await sleep(this.config.storeDelayMs); // the request travelling there
    const file = this.fileOf(show.id);
    const temp = `${file}.${randomUUID()}.tmp`;
    await writeFile(temp, JSON.stringify(show));
    await rename(temp, file); // a reader sees the old row or the new one, never half of one
  }

  private fileOf(id: string): string {
    return join(this.config.storeDir, `${id}.json`); // ids are checked by ShowIdPipe
  }
}
