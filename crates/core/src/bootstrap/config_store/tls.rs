//! TLS for the config store (rustls, ring provider), mutually authenticated.
//!
//! Settings come from `aclshmemx_set_conf_store_tls(enable, tls_info, len)` and
//! `aclshmemx_set_config_store_tls_key(key, len, password, len, decrypt_handler)` and apply to the
//! next init. The original's `tls_info` format is not public; ours is a `;`-separated list of
//! `name=value` pairs:
//!
//! * `ca=<path>` — PEM file of the CA certificate(s) that sign every PE's certificate (required);
//! * `cert=<path>` — PEM file of this PE's certificate chain (required);
//! * `key=<path>` — PEM file of this PE's private key (PKCS#8, PKCS#1 or SEC1; or an encrypted
//!   PKCS#8 key, "ENCRYPTED PRIVATE KEY"), unless the key was given by
//!   `aclshmemx_set_config_store_tls_key`, which takes the PEM text itself;
//! * `server_name=<name>` — name checked in PE 0's certificate (default: the host of the rendezvous
//!   address, an IP address or a DNS name).
//!
//! Every PE presents its certificate and checks the other side's against the CA; PE 0's store
//! refuses clients without a valid certificate. An encrypted key is decrypted with the password,
//! after passing it through the decrypt handler when one is set.
//!
//! `unsafe`: the decrypt handler is a C callback.

use crate::util::Locked;
use std::ffi::{c_char, c_int};
use std::sync::{Arc, Mutex};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

use crate::error::{Error, Result};
use aclshmem_abi::DecryptHandler;

/// Longest tls_info, key or password accepted (as the original's store).
pub const MAX_LEN: usize = 10 * 1024;

#[derive(Default)]
struct Settings {
    enabled: bool,
    info: Option<Info>,
    key_pem: Option<Vec<u8>>,
    password: Option<Vec<u8>>,
    decrypt: DecryptHandler,
}

/// A parsed `tls_info`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Info {
    pub ca: String,
    pub cert: String,
    pub key: Option<String>,
    pub server_name: Option<String>,
}

static SETTINGS: Mutex<Settings> = Mutex::new(Settings {
    enabled: false,
    info: None,
    key_pem: None,
    password: None,
    decrypt: None,
});

/// Parses and checks a `tls_info` string.
pub fn parse_info(text: &str) -> Result<Info> {
    let bad = |why: String| Error::InvalidParam(format!("tls_info \"{text}\": {why}"));
    let mut info = Info::default();
    let (mut ca, mut cert) = (None, None);
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("\"{part}\" is not name=value")))?;
        let value = value.trim();
        if value.is_empty() {
            return Err(bad(format!("{name} is empty")));
        }
        match name.trim() {
            "ca" => ca = Some(value.to_string()),
            "cert" => cert = Some(value.to_string()),
            "key" => info.key = Some(value.to_string()),
            "server_name" => info.server_name = Some(value.to_string()),
            other => {
                return Err(bad(format!(
                    "unknown field \"{other}\" (expected ca, cert, key, server_name)"
                )));
            }
        }
    }
    info.ca = ca.ok_or_else(|| bad("ca=<path> is missing".into()))?;
    info.cert = cert.ok_or_else(|| bad("cert=<path> is missing".into()))?;
    Ok(info)
}

/// `aclshmemx_set_conf_store_tls`.
pub fn configure(enable: bool, info: Option<&[u8]>) -> Result<()> {
    let mut s = SETTINGS.locked();
    if !enable {
        s.enabled = false;
        s.info = None;
        return Ok(());
    }
    let info = info.ok_or_else(|| Error::InvalidParam("TLS enabled without tls_info".into()))?;
    if info.len() > MAX_LEN {
        return Err(Error::InvalidParam(format!(
            "tls_info is {} bytes, more than {MAX_LEN}",
            info.len()
        )));
    }
    let text = std::str::from_utf8(info).map_err(|_| Error::InvalidParam("tls_info is not UTF-8".into()))?;
    s.info = Some(parse_info(text.trim_end_matches('\0'))?);
    s.enabled = true;
    Ok(())
}

/// `aclshmemx_set_config_store_tls_key`.
pub fn set_key(key: &[u8], password: Option<&[u8]>, decrypt: DecryptHandler) -> Result<()> {
    if key.len() > MAX_LEN || password.is_some_and(|p| p.len() > MAX_LEN) {
        return Err(Error::InvalidParam(format!(
            "TLS key or password longer than {MAX_LEN} bytes"
        )));
    }
    let mut s = SETTINGS.locked();
    s.key_pem = (!key.is_empty()).then(|| key.to_vec());
    s.password = password.map(<[u8]>::to_vec);
    s.decrypt = decrypt;
    Ok(())
}

/// Ready-to-use TLS configurations of one bootstrap.
#[derive(Clone)]
pub struct Tls {
    pub server: Arc<rustls::ServerConfig>,
    pub client: Arc<rustls::ClientConfig>,
    pub server_name: Option<String>,
}

impl Tls {
    /// The name PE 0's certificate must carry, for a store at `host`.
    pub fn name_for(&self, host: &str) -> Result<ServerName<'static>> {
        let name = self.server_name.as_deref().unwrap_or(host).to_string();
        ServerName::try_from(name.clone())
            .map_err(|e| Error::InvalidParam(format!("TLS server name \"{name}\": {e}")))
    }
}

fn read_file(path: &str, what: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::InvalidParam(format!("TLS {what} file {path}: {e}")))
}

fn certs(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs: Vec<_> = CertificateDer::pem_slice_iter(pem)
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::InvalidParam(format!("TLS {what}: not PEM certificates ({e})")))?;
    if certs.is_empty() {
        return Err(Error::InvalidParam(format!("TLS {what}: no certificate found")));
    }
    Ok(certs)
}

/// Runs the program's decrypt handler on the stored password.
fn decrypt_password(
    handler: unsafe extern "C" fn(*const c_char, usize, *mut c_char, *mut usize) -> c_int,
    cipher: &[u8],
) -> Result<Vec<u8>> {
    let mut out = vec![0u8; (cipher.len() * 2).max(1024)];
    let mut len = out.len();
    // SAFETY: the handler was installed by the program with the documented signature; we pass a
    // valid input buffer, an output buffer of `len` bytes and a valid length pointer.
    let rc = unsafe {
        handler(
            cipher.as_ptr().cast(),
            cipher.len(),
            out.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(Error::InvalidParam(format!(
            "the TLS key password decrypt handler failed ({rc})"
        )));
    }
    out.truncate(len.min(out.len()));
    if let Some(nul) = out.iter().position(|&b| b == 0) {
        out.truncate(nul);
    }
    Ok(out)
}

fn private_key(pem: &[u8], password: Option<Vec<u8>>) -> Result<PrivateKeyDer<'static>> {
    let text = String::from_utf8_lossy(pem);
    if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
        let password = password.ok_or_else(|| {
            Error::InvalidParam("the TLS private key is encrypted but no password was given (aclshmemx_set_config_store_tls_key)".into())
        })?;
        let (_, doc) = pkcs8::SecretDocument::from_pem(&text)
            .map_err(|e| Error::InvalidParam(format!("encrypted TLS key: bad PEM ({e})")))?;
        let enc = pkcs8::EncryptedPrivateKeyInfoRef::try_from(doc.as_bytes())
            .map_err(|e| Error::InvalidParam(format!("encrypted TLS key: not PKCS#8 ({e})")))?;
        let plain = enc.decrypt(&password).map_err(|_| {
            Error::InvalidParam("encrypted TLS key: wrong password or unsupported cipher".into())
        })?;
        return Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            plain.as_bytes().to_vec(),
        )));
    }
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| Error::InvalidParam(format!("TLS private key: {e}")))
}

/// Builds the TLS configurations when TLS is enabled; `None` when it is not.
pub fn load() -> Result<Option<Tls>> {
    let s = SETTINGS.locked();
    if !s.enabled {
        return Ok(None);
    }
    let info = s
        .info
        .clone()
        .ok_or_else(|| Error::InvalidParam("TLS enabled without tls_info".into()))?;
    let ca = certs(&read_file(&info.ca, "CA")?, &format!("CA file {}", info.ca))?;
    let chain = certs(
        &read_file(&info.cert, "certificate")?,
        &format!("certificate file {}", info.cert),
    )?;
    let key_pem = match (&s.key_pem, &info.key) {
        (Some(k), _) => k.clone(),
        (None, Some(path)) => read_file(path, "key")?,
        (None, None) => {
            return Err(Error::InvalidParam(
                "no TLS private key: give key=<path> or call aclshmemx_set_config_store_tls_key".into(),
            ));
        }
    };
    let password = match (&s.password, s.decrypt) {
        (Some(p), Some(h)) => Some(decrypt_password(h, p)?),
        (Some(p), None) => Some(p.clone()),
        (None, _) => None,
    };
    let key = private_key(&key_pem, password)?;
    let mut roots = rustls::RootCertStore::empty();
    for c in ca {
        roots
            .add(c)
            .map_err(|e| Error::InvalidParam(format!("TLS CA certificate rejected: {e}")))?;
    }
    let roots = Arc::new(roots);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls_err = |e: rustls::Error| Error::InvalidParam(format!("TLS configuration: {e}"));
    let verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
            .build()
            .map_err(|e| Error::InvalidParam(format!("TLS client verifier: {e}")))?;
    let server = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(tls_err)?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain.clone(), key.clone_key())
        .map_err(tls_err)?;
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_err)?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .map_err(tls_err)?;
    Ok(Some(Tls {
        server: Arc::new(server),
        client: Arc::new(client),
        server_name: info.server_name,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_format() {
        let i = parse_info("ca=/a/ca.pem; cert=/a/c.pem;key=/a/k.pem;server_name=node0").unwrap();
        assert_eq!(i.ca, "/a/ca.pem");
        assert_eq!(i.key.as_deref(), Some("/a/k.pem"));
        assert_eq!(i.server_name.as_deref(), Some("node0"));
        assert!(parse_info("cert=/c").is_err());
        assert!(parse_info("ca=/a").is_err());
        assert!(parse_info("ca=/a;cert=/c;colour=blue").is_err());
        assert!(parse_info("ca=/a;cert=").is_err());
        assert!(parse_info("ca=/a;cert=/c;junk").is_err());
        assert!(parse_info("ca=/a;cert=/c;").is_ok());
    }
}
