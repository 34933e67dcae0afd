-- The one-time setup token of an install without administrators (decision 115), kept as its
-- SHA-256 in the database so the server and `parley admin` (another process) agree on it.
-- Any administrator coming to exist spends it, however made: web setup, `parley admin create`.
-- Setup reopening (the last administrator removed) makes a new one.
CREATE TABLE setup_token (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  token_hash TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TRIGGER admins_spend_setup_token AFTER INSERT ON admins BEGIN
  DELETE FROM setup_token;
END;
