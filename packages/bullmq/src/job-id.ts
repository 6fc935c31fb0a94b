// BullMQ refuses a custom jobId that contains ':' (its key separator) and one made only of digits
// (those are its own auto-increment ids), and a deliveryId is an opaque string from the service: we
// cannot promise it never holds either. A fixed prefix plus base64url of the UTF-8 bytes avoids both
// and is reversible, so a dead letter whose payload is corrupt still names its deliveryId.

const PREFIX = 'd_';

/** The BullMQ jobId of a delivery: `d_` + base64url(deliveryId). Never contains ':' or is all digits. */
export function jobIdFor(deliveryId: string): string {
  return PREFIX + Buffer.from(deliveryId, 'utf8').toString('base64url');
}

/** The deliveryId a jobId was made from, or undefined for a job this package did not name. */
export function deliveryIdOf(jobId: string | undefined): string | undefined {
  if (jobId === undefined || !jobId.startsWith(PREFIX)) return undefined;
  const encoded = jobId.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]*$/.test(encoded)) return undefined;
  return Buffer.from(encoded, 'base64url').toString('utf8');
}
