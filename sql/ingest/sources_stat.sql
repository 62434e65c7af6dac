-- Stores made before sources recorded each file's size and time gain the two columns (NULL for
-- the files already recorded: those are recognised by their content hash, as before).
ALTER TABLE sources ADD COLUMN IF NOT EXISTS file_size BIGINT;
ALTER TABLE sources ADD COLUMN IF NOT EXISTS file_mtime_ns BIGINT;
