-- Nothing to change: on SQLite the projection and the snapshots' states were always stored as the
-- server wrote them (TEXT checked by json_valid); PostgreSQL's migration 0004 does the same there.
SELECT 1;
