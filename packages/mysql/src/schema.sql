CREATE TABLE IF NOT EXISTS `hookline_idempotency` (
  k          VARBINARY(3072) NOT NULL,
  state      CHAR(1) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  token      VARBINARY(255) NULL,
  attempt    INT UNSIGNED NOT NULL,
  expires_at BIGINT NOT NULL,
  purge_at   BIGINT NOT NULL,
  PRIMARY KEY (k),
  KEY `hookline_idempotency_purge_at` (purge_at)
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;
