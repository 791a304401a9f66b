-- place_seek: the same index as migrations/postgres/0020_seeks_by_rating.sql.
CREATE INDEX seeks_waiting_by_rating ON seeks (pool, rating) WHERE status = 'waiting';
