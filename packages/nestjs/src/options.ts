import type { HandlerContext, ReceiverEndpoint } from '@hookline/core';
import type { AdapterOptions } from '@hookline/core/adapter';
import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from '@nestjs/common';

/** A receiver from `createReceiver()`: what the route serves and where `@OnDelivery` methods register. */
export type HooklineReceiver = ReceiverEndpoint & {
  on(name: never, handler: (delivery: never, context: HandlerContext) => unknown): unknown;
};

/**
 * Options of `HooklineModule.forRoot()`, and what the `forRootAsync()` factory resolves. The route reads
 * the body on node's socket on both platforms, so `linger` and `bodyTimeoutMs` apply as in every adapter.
 */
export interface HooklineModuleOptions extends Pick<AdapterOptions, 'path' | 'linger' | 'bodyTimeoutMs'> {
  /** The receiver from `createReceiver()`. */
  receiver: HooklineReceiver;
  /**
   * The full path of the webhook route (Nest's global prefix is not applied to it).
   * @default '/webhooks'
   */
  path?: string;
}

/** Options of `HooklineModule.forRootAsync()`: a factory, for a secret from `ConfigService`. */
export interface HooklineModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Providers handed to `useFactory`, in order. */
  inject?: (InjectionToken | OptionalFactoryDependency)[];
  /** Builds the options (the receiver and its path) once the injected providers exist. */
  useFactory: (...args: never[]) => HooklineModuleOptions | Promise<HooklineModuleOptions>;
}

/** Injection token of the resolved `HooklineModuleOptions`. */
export const HOOKLINE_OPTIONS = Symbol('HOOKLINE_OPTIONS');

/** Injection token of the module's receiver: `@Inject(HOOKLINE_RECEIVER) receiver: Receiver`. */
export const HOOKLINE_RECEIVER = Symbol('HOOKLINE_RECEIVER');
