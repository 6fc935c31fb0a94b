CREATE TABLE IF NOT EXISTS "hookline_idempotency" (
  key        TEXT    NOT NULL PRIMARY KEY,
  state      TEXT    NOT NULL CHECK (state IN ('l', 'r', 'c')),
  token      TEXT,
  attempt    INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  purge_at   INTEGER NOT NULL
) WITHOUT ROWID;
