// The queue backend
export { bullmqQueue, type BullmqQueueOptions, type BullmqDeliveryQueue } from './bullmq-queue';
// How a deliveryId becomes a BullMQ jobId (for finding a delivery's job in a dashboard)
export { jobIdFor, deliveryIdOf } from './job-id';
