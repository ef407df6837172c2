//! Starting a private PostgreSQL: initdb (as the postgres user when run as root), its
//! configuration from the profile, a free port, and the wait until it accepts connections.

use super::*;

impl Server {
    /// The data folder, the log and the socket folder, owned by the server's user (`ids`);
    /// postgres must be able to reach its folders: every parent needs o+x.
    fn pg_folders(&self, data: &Path, log: &Path, ids: Option<(u32, u32)>) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.root, std::fs::Permissions::from_mode(0o755));
        let _ = std::fs::set_permissions(&self.socket_dir, std::fs::Permissions::from_mode(0o755));
        std::fs::create_dir_all(data)
            .map_err(|e| Error::usage(format!("{}: {e}", data.display())))?;
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log);
        for p in [data, log, &self.socket_dir] {
            chown(p, ids)?;
        }
        let _ = std::fs::set_permissions(data, std::fs::Permissions::from_mode(0o700));
        Ok(())
    }

    pub(super) fn start_postgres(&mut self, spec: &ServerSpec) -> Result<()> {
        let bin = pg_bindir()
            .ok_or_else(|| missing(Kind::Postgres, "/usr/lib/postgresql/*/bin/postgres"))?;
        // PostgreSQL refuses to run as root: as root, run it as the postgres user.
        let ids = if is_root() {
            Some(postgres_ids().ok_or_else(|| {
                Error::usage(
                    "no postgres user on this machine: install the Debian package postgresql",
                )
            })?)
        } else {
            None
        };
        let data = self.root.join("data");
        let log = self.root.join("server.log");
        self.pg_folders(&data, &log, ids)?;
        if let (Role::PgReplica { primary_port }, false) =
            (&spec.role, data.join("PG_VERSION").exists())
        {
            // A copy of the primary that follows it: -R writes primary_conninfo and
            // standby.signal; -X stream takes the WAL written meanwhile.
            let mut c = Command::new(bin.join("pg_basebackup"));
            c.arg("-D")
                .arg(&data)
                .args(["-h", "127.0.0.1", "-p", &primary_port.to_string()])
                .args(["-U", "postgres", "-R", "-X", "stream", "-c", "fast"])
                .current_dir("/");
            child_setup(&mut c, ids, None);
            let blog = self.root.join("install.log");
            if !run_logged(&mut c, &blog)? {
                return Err(Error::usage(format!(
                    "pg_basebackup from the primary on port {primary_port} failed into {}: {}",
                    data.display(),
                    log_tail(&blog)
                )));
            }
        }
        if !data.join("PG_VERSION").exists() {
            let mut c = Command::new(bin.join("initdb"));
            c.arg("-D")
                .arg(&data)
                .args([
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                ])
                .current_dir("/");
            child_setup(&mut c, ids, None);
            let ilog = self.root.join("install.log");
            if !run_logged(&mut c, &ilog)? {
                return Err(Error::usage(format!(
                    "initdb failed in {} (can user postgres reach every parent folder?): {}",
                    data.display(),
                    log_tail(&ilog)
                )));
            }
        }
        let mut conf = profile::text(Kind::Postgres, &spec.profile)?;
        if !spec.opts.is_empty() {
            conf.push_str("\n# --server-opt\n");
            for (k, v) in &spec.opts {
                conf.push_str(&format!("{k} = '{v}'\n"));
            }
        }
        let fit = profile::fitted(Kind::Postgres, &conf, &spec.opts, spec.fit_connections);
        if !fit.is_empty() {
            conf.push_str(&fit_header(spec.fit_connections, ""));
            for (k, v) in &fit {
                conf.push_str(&format!("{k} = '{v}'\n"));
            }
        }
        conf.push_str(&cluster::node_settings(&spec.role));
        let conf_path = data.join("enginebench.conf");
        std::fs::write(&conf_path, &conf)
            .map_err(|e| Error::usage(format!("{}: {e}", conf_path.display())))?;
        chown(&conf_path, ids)?;
        let main_conf = data.join("postgresql.conf");
        let mc = std::fs::read_to_string(&main_conf).unwrap_or_default();
        if !mc.contains("include 'enginebench.conf'") {
            std::fs::write(&main_conf, format!("{mc}\ninclude 'enginebench.conf'\n"))
                .map_err(|e| Error::usage(format!("{}: {e}", main_conf.display())))?;
        }
        self.options_text = conf;
        for attempt in 0..PORT_TRIES {
            let port = free_port(attempt);
            if port == 0 {
                return Err(Error::usage("no free TCP port on 127.0.0.1 in 20000-32767"));
            }
            let log_off = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
            let mut c = Command::new(bin.join("postgres"));
            c.arg("-D")
                .arg(&data)
                .arg("-p")
                .arg(port.to_string())
                .arg("-k")
                .arg(&self.socket_dir)
                .args([
                    "-c",
                    &format!(
                        "listen_addresses={}",
                        spec.bind.as_deref().unwrap_or("127.0.0.1")
                    ),
                ])
                .current_dir("/");
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(&log)
                .map_err(|e| Error::usage(format!("{}: {e}", log.display())))?;
            c.stdout(f.try_clone().map_err(|e| Error::usage(e.to_string()))?)
                .stderr(f);
            // SIGINT is PostgreSQL's fast shutdown.
            child_setup(&mut c, ids, spec.die_with_parent.then_some(libc::SIGINT));
            let child = c
                .spawn()
                .map_err(|e| Error::usage(format!("cannot start PostgreSQL: {e}")))?;
            self.pid = child.id();
            if spec.die_with_parent {
                crate::interrupt::watch_server(self.pid, quick_signal(Kind::Postgres));
            }
            self.port = port;
            self.child = Some(child);
            let sock = self.socket_dir.display().to_string();
            self.url = format!("postgres://postgres@localhost:{port}/{DATABASE}?host={sock}");
            let admin = format!("postgres://postgres@localhost:{port}/postgres?host={sock}");
            match self.wait_ready(&admin, &log, log_off)? {
                Ready::Yes => {
                    let exists = rt().block_on(async {
                        let mut c = Conn::connect(&spec_of(&admin)?)
                            .await
                            .map_err(|e| Error::usage(e.message))?;
                        c.query_one(&format!(
                            "SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"
                        ))
                        .await
                        .map_err(|e| Error::usage(e.message))
                    })?;
                    if exists.is_none() {
                        self.sql(&admin, &[&format!("CREATE DATABASE {DATABASE}")])?;
                    }
                    return Ok(());
                }
                Ready::PortTaken => continue,
            }
        }
        Err(Error::usage("PostgreSQL: no free port after 5 tries"))
    }
}
