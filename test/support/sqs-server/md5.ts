// The digests SQS returns so that a client can check what it received: the MD5 of the body's UTF-8
// bytes, and the MD5 of the message attributes as the developer guide's "Calculating the MD5 message
// digest for message attributes" describes it: the attributes sorted by name, each encoded as its
// name, its data type (each a 4-byte big-endian length and the UTF-8 bytes), one transport byte
// (1 for String and Number, 2 for Binary), then its value (length and bytes).
import { createHash } from 'node:crypto';

/** One message attribute as the JSON protocol carries it (BinaryValue base64-encoded). */
export interface AttributeValue {
  DataType: string;
  StringValue?: string;
  BinaryValue?: string;
}

export function md5Hex(bytes: Buffer | string): string {
  return createHash('md5').update(bytes).digest('hex');
}

function lengthAndBytes(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** MD5OfMessageAttributes over `attributes`; undefined when there are none (SQS leaves it out). */
export function md5OfAttributes(attributes: Record<string, AttributeValue> | undefined): string | undefined {
  const names = Object.keys(attributes ?? {}).sort();
  if (attributes === undefined || names.length === 0) return undefined;
  const parts: Buffer[] = [];
  for (const name of names) {
    const value = attributes[name] as AttributeValue;
    const binary = value.DataType.startsWith('Binary');
    parts.push(lengthAndBytes(Buffer.from(name, 'utf8')), lengthAndBytes(Buffer.from(value.DataType, 'utf8')));
    parts.push(Buffer.from([binary ? 2 : 1]));
    parts.push(lengthAndBytes(binary ? Buffer.from(value.BinaryValue ?? '', 'base64') : Buffer.from(value.StringValue ?? '', 'utf8')));
  }
  return md5Hex(Buffer.concat(parts));
}
