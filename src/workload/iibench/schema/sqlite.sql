-- iiBench: purchases_index. INTEGER PRIMARY KEY is the rowid: assigned in increasing order.
CREATE TABLE purchases_index (
  transactionid INTEGER PRIMARY KEY,
  dateandtime TEXT,
  cashregisterid INTEGER NOT NULL,
  customerid INTEGER NOT NULL,
  productid INTEGER NOT NULL,
  price REAL NOT NULL,
  data TEXT
);
-- indexes
CREATE INDEX purchases_index_marketsegment ON purchases_index (price, customerid);
CREATE INDEX purchases_index_registersegment ON purchases_index (cashregisterid, price, customerid);
CREATE INDEX purchases_index_pdc ON purchases_index (price, dateandtime, customerid);
