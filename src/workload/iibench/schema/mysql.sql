-- iiBench (iibench.py v0 as in mdcallag/mytools, after Tokutek's original): purchases_index
-- with an auto-increment primary key and three secondary indexes, created before the inserts.
CREATE TABLE purchases_index (
  transactionid bigint NOT NULL AUTO_INCREMENT,
  dateandtime datetime,
  cashregisterid int NOT NULL,
  customerid int NOT NULL,
  productid int NOT NULL,
  price float NOT NULL,
  data varchar(4000),
  PRIMARY KEY (transactionid)
) {engine};
-- indexes
CREATE INDEX purchases_index_marketsegment ON purchases_index (price, customerid);
CREATE INDEX purchases_index_registersegment ON purchases_index (cashregisterid, price, customerid);
CREATE INDEX purchases_index_pdc ON purchases_index (price, dateandtime, customerid);
