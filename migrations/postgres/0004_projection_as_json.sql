-- A game's projection is rewritten by every append and its snapshots by every deal, and both are
-- only ever read back whole: as json their text is stored as the server wrote it, checked but not
-- rebuilt into jsonb (which was a quarter of PostgreSQL's work per move), and a state's text stays
-- under the size at which PostgreSQL compresses a row (it compressed every rewrite as jsonb).
-- Instances of the previous release keep working meanwhile: jsonb is assigned to json.
-- Rewrites both tables under an exclusive lock: on a large database, migrate in a release step.
ALTER TABLE games ALTER COLUMN projection TYPE json USING projection::json;
ALTER TABLE snapshots ALTER COLUMN state TYPE json USING state::json;
