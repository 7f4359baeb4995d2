// The running oidc-provider of the auth host: built on first use, rebuilt when a key rotation period
// begins, and run as Koa middleware inside our own app (as koa-mount would).
import type { Context, Middleware, Next } from 'koa';
import type Provider from 'oidc-provider';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { resolveDataKey, SecretBox } from '../partner/secretBox.js';
import type { WorkspaceStore } from '../family/records.js';
import type { Db } from 'mongodb';
import { OAuthKeys } from './keys.js';
import type * as ProviderModule from './provider.js';
import type { OAuthStore } from './store.js';

export interface Running {
  period: number;
  provider: Provider;
  run: (ctx: Context, next: Next) => Promise<unknown>;
}

/** Koa's compose, for running the provider's middleware inside our app. */
function compose(middleware: Middleware[]): (ctx: Context, next: Next) => Promise<unknown> {
  return (ctx, next) => {
    const dispatch = async (i: number): Promise<unknown> => (i === middleware.length ? next() : middleware[i]!(ctx, () => dispatch(i + 1) as Promise<void>));
    return dispatch(0);
  };
}

export interface ProviderRuntime {
  /** The provider for the current rotation period (one build at a time; requests wait for it). */
  current(): Promise<Running>;
  /** The provider module, once `current()` has loaded it. */
  lib(): typeof ProviderModule | undefined;
  /** The keys the provider's cookies are signed with, once `current()` has loaded them. */
  cookieKeys(): string[] | undefined;
}

export function providerRuntime(parts: { config: Config; log: Logger; db: Db; store: OAuthStore; users: WorkspaceStore }): ProviderRuntime {
  const { config, log, db, store, users } = parts;
  let keys: OAuthKeys | undefined;
  let cookieKeys: string[] | undefined;
  let running: Running | undefined;
  let lib: typeof ProviderModule | undefined;
  let building: Promise<Running> | undefined;

  async function build(): Promise<Running> {
    // The data key is resolved on first use: it may create DATA_DIR/data.key in a development run.
    keys ??= new OAuthKeys(db, config.oauthKeyRotation, new SecretBox(resolveDataKey(config, log)));
    cookieKeys ??= await keys.cookieKeys();
    const signing = await keys.signingKeys();
    // Loaded on first use: a process that never serves OAuth never loads oidc-provider.
    lib ??= await import('./provider.js');
    const provider = lib.createProvider({ config, log, store, users, signingKeys: signing.keys, signingKid: signing.kid, cookieKeys });
    log.info({ period: signing.period, kid: signing.kid }, 'oauth signing key in use');
    return { period: signing.period, provider, run: compose(provider.middleware as Middleware[]) };
  }

  return {
    async current() {
      if (running && keys && running.period === keys.period()) return running;
      building ??= build()
        .then((r) => (running = r))
        .finally(() => (building = undefined));
      return building;
    },
    lib: () => lib,
    cookieKeys: () => cookieKeys,
  };
}
