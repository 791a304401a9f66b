-- The time of each game's last entry on its row, as migrations/postgres/0018 (whose comment says
-- why, and why a row whose `last_entry_seq` is not its `version` is timed by its last entry).
ALTER TABLE games ADD COLUMN last_entry_at TEXT;
ALTER TABLE games ADD COLUMN last_entry_seq INTEGER;
