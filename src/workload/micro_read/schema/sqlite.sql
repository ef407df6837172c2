-- The "normal" table, SQLite form: INTEGER PRIMARY KEY is the rowid (auto-increment);
-- dates are ISO-8601 text, which sorts and compares like a date.
CREATE TABLE normal (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL,
  password TEXT NOT NULL,
  dob TEXT NULL,
  address TEXT NOT NULL,
  city TEXT NOT NULL,
  state_id INTEGER NOT NULL,
  zip TEXT NOT NULL,
  country_id INTEGER NOT NULL
);
-- indexes
CREATE UNIQUE INDEX normal_email ON normal (email);
CREATE INDEX normal_country_id ON normal (country_id, state_id, city);
