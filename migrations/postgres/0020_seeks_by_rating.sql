-- place_seek reads only the waiting seeks of a pool whose rating the new seek's range admits (and
-- whose range admits the new seek's rating): for a narrow range, this index finds them without
-- reading the pool's other seeks.
CREATE INDEX seeks_waiting_by_rating ON seeks (pool, rating) WHERE status = 'waiting';
