// Every worker handler of the public site, for workerHandlers() in src/service.ts.
import type { Db } from 'mongodb';
import { communityHandler } from '../community/handler.js';
import type { Config } from '../config.js';
import { loadDirectory } from '../directory/handler.js';
import { newsletterHandler } from '../newsletter/handler.js';
import type { HttpHandler } from '../worker/runtime.js';
import { discoveryHandler } from './discoveryHandler.js';
import { pagesHandler } from './pagesHandler.js';

export function siteHandlers(config: Config, db: Db): HttpHandler[] {
  const directory = loadDirectory(config.siteUrl);
  return [discoveryHandler(config, directory), pagesHandler(config, db, directory), newsletterHandler(config, db), communityHandler(config, db)];
}
