/**
 * The last `limit` items pushed, oldest first: a ring buffer, so a long run keeps a fixed number of
 * entries and dropping the oldest costs nothing.
 */
export function createRecentList<T>(limit: number) {
  const items: T[] = [];
  let oldest = 0;
  return {
    push(item: T): void {
      if (items.length < limit) {
        items.push(item);
        return;
      }
      items[oldest] = item;
      oldest = (oldest + 1) % limit;
    },
    /** The items kept, oldest first. */
    toArray(): T[] {
      return [...items.slice(oldest), ...items.slice(0, oldest)];
    },
  };
}
