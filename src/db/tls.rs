//! TLS to MariaDB/MySQL and PostgreSQL targets: `?ssl-mode=disable|prefer|require|verify-ca|
//! verify-full` and `&ssl-ca=FILE` in the target URL (docs/security.md).
//!
//! PostgreSQL: tokio-postgres over rustls (ring), with the certificate check chosen here.
//! MySQL: TLS connections go through mysql_async's rustls support (src/db/mysql.rs); the
//! lean wire client, the hot path of plain connections, is not involved.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

use super::{DbError, ErrorClass};

/// What the client asks of the connection's encryption (libpq's `sslmode` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SslMode {
    /// Plain connection (the default: benchmarks on one machine measure the server, not TLS).
    #[default]
    Disable,
    /// TLS when the server offers it, plain otherwise; the certificate is not checked.
    Prefer,
    /// TLS or fail; the certificate is not checked (encryption without authentication).
    Require,
    /// TLS, and the server's certificate must chain to the CA of `ssl-ca` (host name not checked).
    VerifyCa,
    /// As verify-ca, and the certificate must name the host of the URL.
    VerifyFull,
}

impl SslMode {
    pub fn parse(s: &str) -> Option<SslMode> {
        Some(match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "disable" | "disabled" => SslMode::Disable,
            "prefer" | "preferred" => SslMode::Prefer,
            "require" | "required" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" | "verify-identity" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// True when the mode checks the certificate against a CA (and so needs `ssl-ca`).
    pub fn verifies(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyFull)
    }
}

fn tls_error(msg: String) -> DbError {
    DbError::new(ErrorClass::Other, msg)
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of a PEM file (a CA bundle), or a one-line error naming the file.
pub fn load_ca(path: &Path) -> Result<Vec<CertificateDer<'static>>, DbError> {
    let data = std::fs::read(path)
        .map_err(|e| tls_error(format!("ssl-ca: cannot read {}: {e}", path.display())))?;
    let certs: Vec<_> = CertificateDer::pem_slice_iter(&data)
        .collect::<Result<_, _>>()
        .map_err(|e| {
            tls_error(format!(
                "ssl-ca: {} is not a PEM file: {e:?}",
                path.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(tls_error(format!(
            "ssl-ca: no certificate (BEGIN CERTIFICATE) in {}",
            path.display()
        )));
    }
    Ok(certs)
}

/// A rustls client configuration for `mode` (not `Disable`).
pub fn client_config(mode: SslMode, ca: Option<&PathBuf>) -> Result<ClientConfig, DbError> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(format!("TLS set-up: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let path =
                ca.ok_or_else(|| tls_error(format!("ssl-mode={} needs ssl-ca=FILE", mode.name())))?;
            let mut roots = RootCertStore::empty();
            for c in load_ca(path)? {
                roots.add(c).map_err(|e| {
                    tls_error(format!(
                        "ssl-ca: {}: unusable certificate: {e}",
                        path.display()
                    ))
                })?;
            }
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| tls_error(format!("ssl-ca: {}: {e}", path.display())))?;
            Arc::new(Verifier {
                webpki: Some(webpki),
                check_name: mode == SslMode::VerifyFull,
                algs: provider_algs(),
            })
        }
        _ => Arc::new(Verifier {
            webpki: None,
            check_name: false,
            algs: provider_algs(),
        }),
    };
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

fn provider_algs() -> rustls::crypto::WebPkiSupportedAlgorithms {
    rustls::crypto::ring::default_provider().signature_verification_algorithms
}

/// The certificate check of each mode. The handshake signatures are always verified (so the
/// peer holds the key of the certificate it shows); the chain only with a CA, the name only
/// for verify-full.
#[derive(Debug)]
struct Verifier {
    webpki: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    algs: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Ok(v) => Ok(v),
            // webpki checks the chain before the name: a name error means the chain is good.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            Err(e) => Err(e),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// The tokio-postgres connector for `mode` (not `Disable`).
pub fn pg_connector(
    mode: SslMode,
    ca: Option<&PathBuf>,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, DbError> {
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(
        client_config(mode, ca)?,
    ))
}

/// mysql_async's TLS options for `mode` (not `Disable`). mysql_async 0.37 builds its own rustls
/// verifier; its "skip the name" switch compares error texts that rustls 0.23 no longer
/// prints, so verify-ca also checks the host name on MySQL targets (docs/security.md).
pub fn mysql_ssl_opts(
    mode: SslMode,
    ca: Option<&PathBuf>,
) -> Result<mysql_async::SslOpts, DbError> {
    let opts = mysql_async::SslOpts::default();
    Ok(match mode {
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let path =
                ca.ok_or_else(|| tls_error(format!("ssl-mode={} needs ssl-ca=FILE", mode.name())))?;
            // Read it here for a clear error naming the file (mysql_async reads it again).
            load_ca(path)?;
            opts.with_root_certs(vec![path.clone().into()])
                .with_disable_built_in_roots(true)
                .with_danger_skip_domain_validation(mode == SslMode::VerifyCa)
        }
        _ => opts.with_danger_accept_invalid_certs(true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_names_round_trip() {
        for m in [
            SslMode::Disable,
            SslMode::Prefer,
            SslMode::Require,
            SslMode::VerifyCa,
            SslMode::VerifyFull,
        ] {
            assert_eq!(SslMode::parse(m.name()), Some(m));
        }
        assert_eq!(SslMode::parse("REQUIRED"), Some(SslMode::Require));
        assert_eq!(SslMode::parse("VERIFY_IDENTITY"), Some(SslMode::VerifyFull));
        assert_eq!(SslMode::parse("sometimes"), None);
    }

    #[test]
    fn bad_ca_files_are_one_line_errors() {
        let dir = std::env::temp_dir().join(format!("eb-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.pem");
        let e = client_config(SslMode::VerifyCa, Some(&missing)).unwrap_err();
        assert!(
            e.message.contains("cannot read") && !e.message.contains('\n'),
            "{e}"
        );
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let e = client_config(SslMode::VerifyCa, Some(&junk)).unwrap_err();
        assert!(e.message.contains("no certificate"), "{e}");
        let e = client_config(SslMode::VerifyFull, None).unwrap_err();
        assert!(e.message.contains("needs ssl-ca"), "{e}");
        assert!(client_config(SslMode::Require, None).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
