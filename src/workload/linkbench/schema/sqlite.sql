-- LinkBench's schema in SQLite: nodetable.id is the rowid (INTEGER PRIMARY KEY takes the
-- next id on insert, like AUTO_INCREMENT without its never-reuse guarantee).
CREATE TABLE linktable (
  id1 INTEGER NOT NULL DEFAULT 0,
  id2 INTEGER NOT NULL DEFAULT 0,
  link_type INTEGER NOT NULL DEFAULT 0,
  visibility INTEGER NOT NULL DEFAULT 0,
  data TEXT NOT NULL DEFAULT '',
  time INTEGER NOT NULL DEFAULT 0,
  version INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (link_type, id1, id2)
) WITHOUT ROWID;
CREATE TABLE counttable (
  id INTEGER NOT NULL DEFAULT 0,
  link_type INTEGER NOT NULL DEFAULT 0,
  count INTEGER NOT NULL DEFAULT 0,
  time INTEGER NOT NULL DEFAULT 0,
  version INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (id, link_type)
) WITHOUT ROWID;
CREATE TABLE nodetable (
  id INTEGER PRIMARY KEY,
  type INTEGER NOT NULL,
  version INTEGER NOT NULL,
  time INTEGER NOT NULL,
  data TEXT NOT NULL
);
-- indexes
CREATE INDEX id1_type ON linktable (id1, link_type, visibility, time, id2, version, data);
