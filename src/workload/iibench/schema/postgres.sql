-- iiBench: purchases_index (iibench.py's PostgreSQL DDL: bigserial key, real price).
CREATE TABLE purchases_index (
  transactionid bigserial PRIMARY KEY,
  dateandtime timestamp without time zone,
  cashregisterid int NOT NULL,
  customerid int NOT NULL,
  productid int NOT NULL,
  price real NOT NULL,
  data varchar(4000)
);
-- iibench.py: a sequence cache of 1000 values spares a sequence update per row.
ALTER SEQUENCE purchases_index_transactionid_seq CACHE 1000;
-- indexes
CREATE INDEX purchases_index_marketsegment ON purchases_index (price, customerid);
CREATE INDEX purchases_index_registersegment ON purchases_index (cashregisterid, price, customerid);
CREATE INDEX purchases_index_pdc ON purchases_index (price, dateandtime, customerid);
