-- Room in the pages of games for the new versions of its rows.

-- Every append rewrites its game's row (about 1.7 KB with its projection). With pages filled to
-- the brim, most new versions found no room in their page: they went elsewhere, with an entry
-- in every index, and the table swelled faster than autovacuum shrank it. Room in each page
-- keeps the updates heap-only, reclaimed by pruning the page as it is read.
ALTER TABLE games SET (fillfactor = 40);
