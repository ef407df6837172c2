//! The files compiled in by build.rs: reproduction plans (`PLANS`) and server profiles
//! (`PROFILES_MARIADB`, `PROFILES_POSTGRES`), each a list of (name, text). It stands on the
//! ground beside `error`: it imports nothing, and `server::profile` and `suite` read it.

include!(concat!(env!("OUT_DIR"), "/files.rs"));
