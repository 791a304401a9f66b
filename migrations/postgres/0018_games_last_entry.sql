-- The time of each game's last entry on its row, written by every append with the head it
-- describes (`last_entry_seq`, the version it was written at), so that an account's page times its
-- games in progress from their rows alone instead of one lookup in `events` each.
--
-- Nullable and not filled in: a row whose `last_entry_seq` is not its `version` (written before
-- this migration, or by an earlier release during a rolling upgrade) is timed by its last entry
-- as before, so readers never trust a stale time.
ALTER TABLE games ADD COLUMN last_entry_at text, ADD COLUMN last_entry_seq bigint;
