//! Integration tests: drive the real binary (and the library) against real SQLite, MariaDB and
//! PostgreSQL. The server URLs come from scripts/test.sh (EB_TEST_MYSQL_URL, EB_TEST_PG_URL);
//! with EB_REQUIRE_SERVERS=1 a missing URL fails the test instead of skipping it.

mod catalog;
mod cli;
mod client_io;
mod cluster;
mod common;
mod compression;
mod connections;
mod custom;
mod faults;
mod fleet;
mod gate;
mod hostile;
mod house;
mod iibench;
mod linkbench;
mod live;
mod micro_read;
mod mysqlwire;
mod oltp;
mod open_loop;
mod pgwire;
mod profile;
mod registry;
mod report;
mod reproduce;
mod runner_stop;
mod schema_change;
mod secrets;
mod server_cpu;
mod servers;
mod spider;
mod sqlbench;
mod textgen;
mod tls;
mod tpcc;
