CREATE TABLE IF NOT EXISTS "hookline_idempotency" (
  key        text        PRIMARY KEY,
  state      "char"      NOT NULL CHECK (state IN ('l', 'r', 'c')),
  token      text,
  attempt    integer     NOT NULL,
  expires_at timestamptz NOT NULL,
  purge_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS "hookline_idempotency_purge_at_idx" ON "hookline_idempotency" (purge_at);
