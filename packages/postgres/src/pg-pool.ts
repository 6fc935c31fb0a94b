/**
 * The part of a `pg` Pool (or Client) the store uses. Structural, so `new pg.Pool()` fits without a
 * cast, and so does anything else that speaks pg's `query(config)`.
 */
export interface PgPoolLike {
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<{
    rows: unknown[];
    rowCount: number | null;
  }>;
}
