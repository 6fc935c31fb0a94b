CREATE TABLE IF NOT EXISTS "hookline_idempotency" (
  key        text        PRIMARY KEY,
  state      "char"      NOT NULL CHECK (state IN ('l', 'r', 'c')),
  token      text,
  attempt    integer     NOT NULL,
  expires_at timestamptz NOT NULL,
  purge_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS "hookline_idempotency_purge_at_idx" ON "hookline_idempotency" (purge_at);
CREATE TABLE IF NOT EXISTS "hookline_idempotency_versions" (
  key        text        PRIMARY KEY,
  version    float8      NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS "hookline_idempotency_versions_expires_at_idx" ON "hookline_idempotency_versions" (expires_at);
