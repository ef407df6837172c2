-- LinkBench's MySQL schema (its README), without the 16 key partitions of linktable.
-- latin1 as in LinkBench; payloads are 7-bit text (docs/linkbench.md).
CREATE TABLE linktable (
  id1 bigint unsigned NOT NULL DEFAULT 0,
  id2 bigint unsigned NOT NULL DEFAULT 0,
  link_type bigint unsigned NOT NULL DEFAULT 0,
  visibility tinyint NOT NULL DEFAULT 0,
  data varchar(255) NOT NULL DEFAULT '',
  time bigint unsigned NOT NULL DEFAULT 0,
  version int unsigned NOT NULL DEFAULT 0,
  PRIMARY KEY (link_type, id1, id2)
) {engine} DEFAULT CHARSET=latin1;
CREATE TABLE counttable (
  id bigint unsigned NOT NULL DEFAULT 0,
  link_type bigint unsigned NOT NULL DEFAULT 0,
  count int unsigned NOT NULL DEFAULT 0,
  time bigint unsigned NOT NULL DEFAULT 0,
  version bigint unsigned NOT NULL DEFAULT 0,
  PRIMARY KEY (id, link_type)
) {engine} DEFAULT CHARSET=latin1;
CREATE TABLE nodetable (
  id bigint unsigned NOT NULL AUTO_INCREMENT,
  type int unsigned NOT NULL,
  version bigint unsigned NOT NULL,
  time int unsigned NOT NULL,
  data mediumtext NOT NULL,
  PRIMARY KEY (id)
) {engine} DEFAULT CHARSET=latin1;
-- indexes
CREATE INDEX id1_type ON linktable (id1, link_type, visibility, time, id2, version, data);
