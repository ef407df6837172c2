-- The "normal" table of the 2007 read micro-benchmark (PHPTestSuite), MySQL/MariaDB form.
-- {engine} is replaced by ENGINE=<name> when --engine is given, else by nothing (server default).
CREATE TABLE normal (
  id int unsigned NOT NULL AUTO_INCREMENT,
  name varchar(64) NOT NULL,
  email varchar(64) NOT NULL,
  password varchar(64) NOT NULL,
  dob date NULL,
  address varchar(128) NOT NULL,
  city varchar(64) NOT NULL,
  state_id tinyint unsigned NOT NULL,
  zip varchar(8) NOT NULL,
  country_id smallint unsigned NOT NULL,
  PRIMARY KEY (id)
) {engine} DEFAULT CHARSET=latin1;
-- indexes
ALTER TABLE normal ADD UNIQUE KEY email (email), ADD KEY country_id (country_id, state_id, city);
