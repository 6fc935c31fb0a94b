#!/usr/bin/env bash
# Starts the shared Redis, PostgreSQL and MariaDB the tests use, when they are not already answering.
set -u
if ! (redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG); then
  echo "starting redis-server on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no || true
fi
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  echo "starting postgresql"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start || true
fi
mariadb_up() { mariadb-admin -h 127.0.0.1 -P 3306 -u root ping --silent >/dev/null 2>&1; }
if ! mariadb_up; then
  echo "starting mariadb"
  install -d -o mysql -g mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec "$(command -v mariadbd)" || true
fi
for _ in $(seq 1 30); do
  if (redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG) && pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && mariadb_up; then
    echo "redis, postgresql and mariadb are answering"
    exit 0
  fi
  sleep 1
done
echo "warning: redis, postgresql or mariadb is not answering; their tests will fail in CI" >&2
