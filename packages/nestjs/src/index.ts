// The NestJS module and decorator
export { HooklineModule } from './hookline-module';
export { OnDelivery } from './on-delivery';
export {
  HOOKLINE_RECEIVER,
  type HooklineModuleOptions,
  type HooklineModuleAsyncOptions,
  type HooklineReceiver,
} from './options';
