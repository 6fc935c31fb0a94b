// The local service emulator: the webhook API, deliveries on the service's schedule, the inspector page
export { startServiceEmulator, type ServiceEmulator, type ServiceEmulatorOptions, type EmulatorRequest } from './start-service-emulator';
export type { EmulatorFault } from './faults';
export type { EmittedDelivery } from './webhook-registry';
export type { EmulatedWebhook, EmulatedAttempt, EmulatedDelivery, EmulatedDeliveryStatus } from './delivery-view';
