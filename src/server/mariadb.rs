//! Starting a private MariaDB: its data folder initialised, its configuration from the
//! profile, a free port, and the wait until it accepts connections.

use super::*;

impl Server {
    pub(super) fn start_mariadb(&mut self, spec: &ServerSpec) -> Result<()> {
        let sbin = ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"];
        let install = find_bin(&["mariadb-install-db", "mysql_install_db"], &sbin)
            .ok_or_else(|| missing(Kind::Mariadb, "mariadb-install-db"))?;
        let mariadbd = find_bin(&["mariadbd", "mysqld"], &sbin)
            .ok_or_else(|| missing(Kind::Mariadb, "mariadbd"))?;
        let data = self.root.join("data");
        let tmp = self.root.join("tmp");
        std::fs::create_dir_all(&tmp)
            .map_err(|e| Error::usage(format!("{}: {e}", tmp.display())))?;
        let root_user = is_root();
        let galera = matches!(spec.role, Role::Galera { .. });
        let run_as = mariadb_user(root_user, galera)?;
        let joiner = matches!(
            spec.role,
            Role::Galera {
                bootstrap: false,
                ..
            }
        );
        if joiner {
            // Its data comes from the cluster (state transfer into an empty folder).
            std::fs::create_dir_all(&data)
                .map_err(|e| Error::usage(format!("{}: {e}", data.display())))?;
        } else if !data.join("mysql").is_dir() {
            if let (true, Some((_, ids))) = (galera, run_as) {
                // The bootstrap runs as that user and writes its temporary tables there.
                chown(&tmp, Some(ids))?;
            }
            let mut c = Command::new(&install);
            c.arg("--no-defaults");
            if let Some((user, _)) = run_as {
                c.arg(format!("--user={user}"));
            }
            // Its own tmpdir: bootstraps running at once in the shared /tmp collide on their
            // temporary tables ("Unknown table 'mysql.tmp_user_sys'", the install aborts).
            c.arg(format!("--datadir={}", data.display()))
                .arg(format!("--tmpdir={}", tmp.display()))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db");
            let log = self.root.join("install.log");
            let out = run_logged(&mut c, &log)?;
            if !out {
                return Err(Error::usage(format!(
                    "mariadb-install-db failed in {}: {} (log: {})",
                    data.display(),
                    log_errors(&log),
                    log.display()
                )));
            }
        }
        // The effective option file: the profile, then each --server-opt (later lines win).
        let mut cnf = profile::text(Kind::Mariadb, &spec.profile)?;
        if !spec.opts.is_empty() {
            cnf.push_str("\n[mariadbd]\n# --server-opt\n");
            for (k, v) in &spec.opts {
                cnf.push_str(&format!("{k} = {v}\n"));
            }
        }
        let fit = profile::fitted(Kind::Mariadb, &cnf, &spec.opts, spec.fit_connections);
        if !fit.is_empty() {
            cnf.push_str(&fit_header(spec.fit_connections, "[mariadbd]\n"));
            for (k, v) in &fit {
                cnf.push_str(&format!("{k} = {v}\n"));
            }
        }
        cnf.push_str(&cluster::node_settings(&spec.role));
        let cnf_path = self.root.join("server.cnf");
        std::fs::write(&cnf_path, &cnf)
            .map_err(|e| Error::usage(format!("{}: {e}", cnf_path.display())))?;
        self.options_text = cnf;
        let log = self.root.join("server.log");
        let sock = self.socket_dir.join("mdb.sock");
        if let (true, Some((_, ids))) = (galera, run_as) {
            chown_tree(&self.root, Some(ids))?;
            chown(&self.socket_dir, Some(ids))?;
        }
        for attempt in 0..PORT_TRIES {
            let port = free_port(attempt);
            if port == 0 {
                return Err(Error::usage("no free TCP port on 127.0.0.1 in 20000-32767"));
            }
            let log_off = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
            let mut c = Command::new(&mariadbd);
            // --defaults-file must come first; it replaces --no-defaults (no /etc/mysql files).
            c.arg(format!("--defaults-file={}", cnf_path.display()));
            if let Some((user, _)) = run_as {
                c.arg(format!("--user={user}"));
            }
            c.arg(format!("--datadir={}", data.display()))
                .arg(format!("--tmpdir={}", tmp.display()))
                .arg(format!("--socket={}", sock.display()))
                .arg(format!("--port={port}"))
                .arg(format!(
                    "--bind-address={}",
                    spec.bind.as_deref().unwrap_or("127.0.0.1")
                ))
                .arg(format!(
                    "--pid-file={}",
                    self.root.join("server.pid").display()
                ))
                .arg(format!("--log-error={}", log.display()));
            if galera {
                // Clients (and the other nodes' view of this one) reach it on this port.
                c.arg(format!("--wsrep-node-incoming-address=127.0.0.1:{port}"));
                if !joiner {
                    c.arg("--wsrep-new-cluster");
                }
            } else {
                // MyRocks next to InnoDB (Galera replicates InnoDB only: not on its nodes).
                c.arg("--plugin-load-add=ha_rocksdb");
            }
            let out = std::fs::File::create(self.root.join("server.out"))
                .map_err(|e| Error::usage(format!("{}: {e}", self.root.display())))?;
            c.stdout(out.try_clone().map_err(|e| Error::usage(e.to_string()))?)
                .stderr(out);
            child_setup(&mut c, None, spec.die_with_parent.then_some(libc::SIGTERM));
            let child = c
                .spawn()
                .map_err(|e| Error::usage(format!("cannot start {}: {e}", mariadbd.display())))?;
            self.pid = child.id();
            if spec.die_with_parent {
                crate::interrupt::watch_server(self.pid, quick_signal(Kind::Mariadb));
            }
            self.port = port;
            self.child = Some(child);
            self.url = format!(
                "mysql://root@localhost/{DATABASE}?socket={}",
                sock.display()
            );
            let admin = format!("mysql://root@localhost/mysql?socket={}", sock.display());
            match self.wait_ready(&admin, &log, log_off)? {
                // A Galera node takes no statement until it is part of a primary component
                // (ERROR 1047 under load): the cluster creates the database once node 1 is
                // Synced, and the joiners get it by state transfer.
                Ready::Yes if galera => return Ok(()),
                Ready::Yes => {
                    self.sql(
                        &admin,
                        &[&format!("CREATE DATABASE IF NOT EXISTS {DATABASE}")],
                    )?;
                    return Ok(());
                }
                Ready::PortTaken => continue,
            }
        }
        Err(Error::usage("MariaDB: no free port after 5 tries"))
    }
}

/// Who the server runs as (None: this user, not root); as root, a Galera node runs as user
/// mysql (the rsync daemon of a state transfer started by root drops to nobody and could not
/// write the joiner's data), any other as root.
fn mariadb_user(root_user: bool, galera: bool) -> Result<Option<(&'static str, (u32, u32))>> {
    Ok(if root_user && galera {
        let ids = user_ids("mysql").ok_or_else(|| {
            Error::usage("no mysql user on this machine: install the Debian package mariadb-server")
        })?;
        Some(("mysql", ids))
    } else if root_user {
        Some(("root", (0, 0)))
    } else {
        None
    })
}
