//! Connecting: the socket, the server's greeting and the authentication
//! (`mysql_native_password`, or none), and the session's first settings.

use super::*;

impl WireConn {
    pub async fn connect(spec: &TargetSpec) -> Result<Self, ConnectError> {
        let stream = match &spec.socket {
            Some(sock) => sock::connect_unix(sock)
                .await
                .map_err(|e| sock::connect_error(&format!("socket {sock}"), &e))?,
            None => sock::connect_tcp(&spec.host, spec.port)
                .await
                .map_err(|e| sock::connect_error(&format!("{}:{}", spec.host, spec.port), &e))?,
        };
        let mut c = WireConn {
            stream,
            r: sock::ReadBuf::new(),
            wbuf: Vec::with_capacity(4096),
            seq: 0,
            stmts: Vec::new(),
            cols: Vec::new(),
            deferred: Vec::new(),
            owed: 0,
            pipeline_begin: spec.pipeline_begin,
            cache_metadata: false,
            server_version: String::new(),
            pipeline_statements: spec.pipeline_statements,
            autocommit: true,
            mode: spec.statements,
            texts: Vec::new(),
            no_backslash_escapes: false,
        };
        c.handshake(spec).await?;
        Ok(c)
    }

    async fn handshake(&mut self, spec: &TargetSpec) -> Result<(), ConnectError> {
        let p = self.packet().await?;
        let hs = self.r.buf[p.clone()].to_vec();
        if hs.first() == Some(&0xFF) {
            return Err(server_error(&hs).into());
        }
        let mut r = Reader::new(&hs);
        if r.u8() != 10 {
            return Err(ConnectError::Unsupported(
                "handshake protocol is not v10".into(),
            ));
        }
        self.server_version = String::from_utf8_lossy(r.nul_str()).into_owned();
        r.skip(4); // connection id
        let mut scramble = r.take(8).to_vec();
        r.skip(1);
        let mut server_caps = r.u16() as u32;
        let mut server_ext = 0u32;
        let mut plugin = Vec::new();
        if !r.is_empty() {
            r.skip(1); // charset
            r.skip(2); // status
            server_caps |= (r.u16() as u32) << 16;
            let auth_len = r.u8() as usize;
            if server_caps & CLIENT_LONG_PASSWORD == 0 {
                // MariaDB (no CLIENT_MYSQL): 6 bytes of filler, then its extended capabilities.
                r.skip(6);
                server_ext = r.u32();
            } else {
                r.skip(10);
            }
            if server_caps & CLIENT_SECURE_CONNECTION != 0 {
                let n = (auth_len.saturating_sub(8)).max(13);
                let part2 = r.take(n);
                // The scramble is 20 bytes; part 2 ends with a NUL.
                scramble.extend_from_slice(&part2[..n.min(12)]);
            }
            if server_caps & CLIENT_PLUGIN_AUTH != 0 {
                plugin = r.nul_str().to_vec();
            }
        }
        if server_caps & CLIENT_PROTOCOL_41 == 0 {
            return Err(ConnectError::Unsupported(
                "server without protocol 4.1".into(),
            ));
        }
        let password = spec.password.as_deref().unwrap_or("").as_bytes().to_vec();
        let auth = if plugin.is_empty() || plugin == b"mysql_native_password" {
            native_password(&password, &scramble)
        } else if password.is_empty() {
            Vec::new()
        } else {
            return Err(ConnectError::Unsupported(format!(
                "authentication plugin {}",
                String::from_utf8_lossy(&plugin)
            )));
        };
        // Extended capabilities are only read by a MariaDB server, and only when the client
        // clears CLIENT_MYSQL.
        let ext = server_ext & MARIADB_CACHE_METADATA;
        let mut caps = (CLIENT_LONG_PASSWORD
            | CLIENT_LONG_FLAG
            | CLIENT_CONNECT_WITH_DB
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_STATEMENTS
            | CLIENT_MULTI_RESULTS
            | CLIENT_PS_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH)
            & (server_caps | CLIENT_LONG_PASSWORD)
            & !CLIENT_SSL;
        if ext != 0 {
            caps &= !CLIENT_LONG_PASSWORD;
        }
        self.cache_metadata = ext & MARIADB_CACHE_METADATA != 0;
        let w = self.begin(1);
        w.extend_from_slice(&caps.to_le_bytes());
        w.extend_from_slice(&(MAX_PAYLOAD as u32).to_le_bytes());
        w.push(CHARSET_UTF8MB4);
        w.extend_from_slice(&[0; 19]);
        w.extend_from_slice(&ext.to_le_bytes());
        w.extend_from_slice(spec.user.as_bytes());
        w.push(0);
        w.push(auth.len() as u8);
        w.extend_from_slice(&auth);
        w.extend_from_slice(spec.database.as_bytes());
        w.push(0);
        if caps & CLIENT_PLUGIN_AUTH != 0 {
            w.extend_from_slice(b"mysql_native_password\0");
        }
        self.send().await?;
        loop {
            let p = self.packet().await?;
            let pk = &self.r.buf[p];
            match pk.first() {
                Some(0x00) => {
                    self.no_backslash_escapes =
                        ok_status(pk) & SERVER_STATUS_NO_BACKSLASH_ESCAPES != 0;
                    return Ok(());
                }
                Some(0xFF) => {
                    let mut e = server_error(pk);
                    if e.class == ErrorClass::AccessDenied {
                        e.message
                            .push_str(" (check the user and the password: set it with MYSQL_PWD)");
                    }
                    return Err(e.into());
                }
                Some(0xFE) => {
                    // AuthSwitchRequest: plugin name, then new scramble data.
                    let mut r = Reader::new(pk);
                    r.skip(1);
                    let name = r.nul_str().to_vec();
                    let data = r.rest();
                    let data = data.strip_suffix(&[0]).unwrap_or(data).to_vec();
                    if name != b"mysql_native_password" {
                        return Err(ConnectError::Unsupported(format!(
                            "authentication plugin {}",
                            String::from_utf8_lossy(&name)
                        )));
                    }
                    let resp = native_password(&password, &data);
                    let seq = self.seq;
                    let w = self.begin(seq);
                    w.extend_from_slice(&resp);
                    self.send().await?;
                }
                _ => {
                    return Err(ConnectError::Unsupported(
                        "extra authentication round trips".into(),
                    ))
                }
            }
        }
    }
}

/// mysql_native_password: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))).
pub(super) fn native_password(password: &[u8], scramble: &[u8]) -> Vec<u8> {
    use sha1::{Digest, Sha1};
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = Sha1::digest(password);
    let h2 = Sha1::digest(h1);
    let mut h = Sha1::new();
    h.update(scramble);
    h.update(h2);
    let h3 = h.finalize();
    h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect()
}
