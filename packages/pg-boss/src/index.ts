// The queue backend
export { pgBossQueue, type PgBossQueueOptions, type PgBossDeliveryQueue, type PgTextQueryable } from './pg-boss-queue';
// How a deliveryId becomes a pg-boss job id (UUID v5), for finding a delivery's job in the table
export { jobIdFor, uuidV5, DELIVERY_NAMESPACE } from './job-id';
