//! TLS for the config store (rustls, ring provider), mutually authenticated.
//!
//! Settings come from `aclshmemx_set_conf_store_tls(enable, tls_info, len)` and
//! `aclshmemx_set_config_store_tls_key(key, len, password, len, decrypt_handler)` and apply to the
//! next init. `tls_info` is accepted in two forms, told apart by [`is_original_format`]:
//!
//! * the original's `key: value` form (spec 8.1): `tlsCaPath: <dir>; tlsCaFile: <names>;
//!   tlsCert: <file>[; tlsCrlPath: <dir>; tlsCrlFile: <names>][; packagePath: <ignored>]`, parsed by
//!   [`parse_original`] exactly as the original splits it. Pieces that do not fit are skipped and
//!   unknown keys ignored (info log); what is missing or wrong is reported by init, which checks
//!   every path: directories must be directories, files must be regular files of at most
//!   [`MAX_FILE`] bytes and not symbolic links. The private key always comes from
//!   `aclshmemx_set_config_store_tls_key`.
//! * this library's own `name=value` form, parsed by [`parse_named`] and checked by the setter:
//!   * `ca=<path>` — PEM file of the CA certificate(s) that sign every PE's certificate (required);
//!   * `cert=<path>` — PEM file of this PE's certificate chain (required);
//!   * `key=<path>` — PEM file of this PE's private key (PKCS#8, PKCS#1 or SEC1; or an encrypted
//!     PKCS#8 key, "ENCRYPTED PRIVATE KEY"), unless the key was given by
//!     `aclshmemx_set_config_store_tls_key`, which takes the PEM text itself;
//!   * `server_name=<name>` — name checked in PE 0's certificate (default: the host of the
//!     rendezvous address, an IP address or a DNS name).
//!
//! Every PE presents its certificate and checks the other side's against the CA and the revocation
//! lists, if any; PE 0's store refuses clients without a valid certificate. Only TLS 1.3 is
//! negotiated, on both sides, as by the original. An encrypted key is decrypted with the password,
//! after passing it through the decrypt handler when one is set.
//!
//! `unsafe`: the decrypt handler is a C callback.

use crate::util::Locked;
use std::ffi::{c_char, c_int};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName,
};

use crate::error::{Error, Result};
use aclshmem_abi::DecryptHandler;

/// Longest tls_info, key or password accepted (as the original's store).
pub const MAX_LEN: usize = 10 * 1024;

/// Largest CA, certificate, key or CRL file read. The original bounds them too; its bound is not
/// recorded, this one is generous for PEM bundles and revocation lists.
pub const MAX_FILE: u64 = 10 * 1024 * 1024;

#[derive(Default)]
struct Settings {
    enabled: bool,
    info: Option<Info>,
    key_pem: Option<Vec<u8>>,
    password: Option<Vec<u8>>,
    decrypt: DecryptHandler,
}

/// A parsed `tls_info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Info {
    /// This library's `name=value` form.
    Named(Named),
    /// The original's `key: value` form.
    Original(Original),
}

/// A `tls_info` in this library's `name=value` form.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Named {
    pub ca: String,
    pub cert: String,
    pub key: Option<String>,
    pub server_name: Option<String>,
    /// `crl=<path>`, repeatable: certificate revocation lists (PEM or DER).
    pub crl: Vec<String>,
}

/// A `tls_info` in the original's `key: value` form, as given (checked by init, not by the setter).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Original {
    /// `tlsCaPath`: directory of the CA files.
    pub ca_path: Option<String>,
    /// `tlsCaFile`: names of the CA files inside `ca_path`.
    pub ca_files: Vec<String>,
    /// `tlsCert`: this side's certificate (chain).
    pub cert: Option<String>,
    /// `tlsCrlPath`: directory of the revocation lists.
    pub crl_path: Option<String>,
    /// `tlsCrlFile`: names of the revocation lists inside `crl_path`.
    pub crl_files: Vec<String>,
    /// `packagePath`: the original's security plug-in; recorded, never used.
    pub package_path: Option<String>,
    /// Keys this library does not know, in order of appearance (ignored).
    pub unknown: Vec<String>,
}

static SETTINGS: Mutex<Settings> = Mutex::new(Settings {
    enabled: false,
    info: None,
    key_pem: None,
    password: None,
    decrypt: None,
});

/// The original's keys.
const ORIGINAL_KEYS: [&str; 6] = [
    "tlsCaPath",
    "tlsCaFile",
    "tlsCert",
    "tlsCrlPath",
    "tlsCrlFile",
    "packagePath",
];

/// True when `text` is in the original's `key: value` form: a piece starts with one of its keys
/// followed by `:`, or the first `:` of the text comes before its first `=` (or there is no `=`).
/// A valid `name=value` string matches neither: each of its pieces starts with one of `ca`,
/// `cert`, `key`, `server_name`, `crl` and `=`, so its first `=` precedes any `:`.
pub fn is_original_format(text: &str) -> bool {
    let colon_first = match (text.find(':'), text.find('=')) {
        (Some(colon), Some(eq)) => colon < eq,
        (Some(_), None) => true,
        (None, _) => false,
    };
    colon_first
        || text
            .split(';')
            .filter_map(|piece| piece.split_once(':'))
            .any(|(key, _)| ORIGINAL_KEYS.contains(&key.trim()))
}

/// A comma-separated list of file names: trimmed, empty names dropped.
fn name_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect()
}

/// Splits a `tls_info` in the original's form as the original does: pieces separated by `;`
/// (empty ones skipped), each `key:value` with both trimmed; a piece without `:` or with an empty
/// key or value is skipped; the value ends at a second `:`. A repeated key: the last one counts.
/// Never fails: the checks happen at init ([`Original::resolve`]).
pub fn parse_original(text: &str) -> Original {
    let mut info = Original::default();
    for piece in text.split(';').filter(|p| !p.is_empty()) {
        let Some((key, rest)) = piece.split_once(':') else {
            continue;
        };
        let value = rest.split(':').next().unwrap_or_default();
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() || value.is_empty() {
            continue;
        }
        match key {
            "tlsCaPath" => info.ca_path = Some(value.to_string()),
            "tlsCaFile" => info.ca_files = name_list(value),
            "tlsCert" => info.cert = Some(value.to_string()),
            "tlsCrlPath" => info.crl_path = Some(value.to_string()),
            "tlsCrlFile" => info.crl_files = name_list(value),
            "packagePath" => info.package_path = Some(value.to_string()),
            other => info.unknown.push(other.to_string()),
        }
    }
    info
}

/// Parses and checks a `tls_info` string in this library's `name=value` form.
pub fn parse_named(text: &str) -> Result<Named> {
    let bad = |why: String| Error::InvalidParam(format!("tls_info \"{text}\": {why}"));
    let mut info = Named::default();
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
            "crl" => info.crl.push(value.to_string()),
            other => {
                return Err(bad(format!(
                    "unknown field \"{other}\" (expected ca, cert, key, server_name, crl; or the original's \
                     tlsCaPath: ...; tlsCaFile: ...; tlsCert: ... form)"
                )));
            }
        }
    }
    info.ca = ca.ok_or_else(|| bad("ca=<path> is missing".into()))?;
    info.cert = cert.ok_or_else(|| bad("cert=<path> is missing".into()))?;
    Ok(info)
}

/// Parses a `tls_info` in either form. The original's form is only split here (it never fails);
/// its unknown keys and `packagePath` are logged at info level.
pub fn parse_info(text: &str) -> Result<Info> {
    if !is_original_format(text) {
        return parse_named(text).map(Info::Named);
    }
    let info = parse_original(text);
    for key in &info.unknown {
        log::info!("tls_info: unknown key \"{key}\" ignored");
    }
    if let Some(p) = &info.package_path {
        log::info!("tls_info: packagePath \"{p}\" ignored (the original's security plug-in is not used)");
    }
    Ok(Info::Original(info))
}

/// The files one side reads at init, with the way they are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Files {
    /// (description, path) of each CA file.
    ca: Vec<(String, PathBuf)>,
    cert: (String, PathBuf),
    key: Option<PathBuf>,
    /// (description, path) of each certificate revocation list.
    crls: Vec<(String, PathBuf)>,
    server_name: Option<String>,
    /// The original's rule: a symbolic link where a file is expected is refused.
    no_symlinks: bool,
}

impl Named {
    fn resolve(&self) -> Files {
        Files {
            ca: vec![("CA file".into(), PathBuf::from(&self.ca))],
            cert: ("certificate file".into(), PathBuf::from(&self.cert)),
            key: self.key.as_ref().map(PathBuf::from),
            crls: self
                .crl
                .iter()
                .map(|c| ("CRL file".into(), PathBuf::from(c)))
                .collect(),
            server_name: self.server_name.clone(),
            no_symlinks: false,
        }
    }
}

/// A directory of the original's form: it must exist and be a directory.
fn check_dir(key: &str, dir: &str) -> Result<()> {
    let bad = |why: String| Error::InvalidParam(format!("TLS {key} {dir}: {why}"));
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(bad("is not a directory".into())),
        Err(e) => Err(bad(e.to_string())),
    }
}

impl Original {
    /// Checks the required entries and the directories, and names the files to read.
    /// `key_given`: whether `aclshmemx_set_config_store_tls_key` gave a key.
    fn resolve(&self, key_given: bool) -> Result<Files> {
        let mut missing = Vec::new();
        if self.ca_path.is_none() {
            missing.push("tlsCaPath (directory of the CA files)");
        }
        if self.ca_files.is_empty() {
            missing.push("tlsCaFile (CA file names inside tlsCaPath)");
        }
        if self.cert.is_none() {
            missing.push("tlsCert (this PE's certificate file)");
        }
        if !self.crl_files.is_empty() && self.crl_path.is_none() {
            missing.push("tlsCrlPath (directory of the tlsCrlFile files)");
        }
        if !key_given {
            missing.push(
                "the private key (the original's format takes it from aclshmemx_set_config_store_tls_key)",
            );
        }
        if !missing.is_empty() {
            return Err(Error::InvalidParam(format!(
                "TLS settings (tls_info in the original's key: value form) lack {}",
                missing.join(", ")
            )));
        }
        let (ca_path, cert) = (self.ca_path.as_deref().unwrap_or_default(), self.cert.as_deref());
        check_dir("tlsCaPath", ca_path)?;
        let crl_path = self.crl_path.as_deref().unwrap_or_default();
        if self.crl_path.is_some() {
            check_dir("tlsCrlPath", crl_path)?;
            if self.crl_files.is_empty() {
                log::info!("TLS: tlsCrlPath {crl_path} without tlsCrlFile: no revocation list loaded");
            }
        }
        let inside = |dir: &str, name: &str| PathBuf::from(format!("{}/{name}", dir.trim_end_matches('/')));
        Ok(Files {
            ca: self
                .ca_files
                .iter()
                .map(|n| ("tlsCaFile".to_string(), inside(ca_path, n)))
                .collect(),
            cert: ("tlsCert".into(), PathBuf::from(cert.unwrap_or_default())),
            key: None,
            crls: self
                .crl_files
                .iter()
                .map(|n| ("tlsCrlFile".to_string(), inside(crl_path, n)))
                .collect(),
            server_name: None,
            no_symlinks: true,
        })
    }
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

/// Reads a file that must be a regular file of at most [`MAX_FILE`] bytes; with `no_symlinks`, a
/// symbolic link is refused (checked, then opened with `O_NOFOLLOW` so a link swapped in meanwhile
/// is refused too).
fn read_file(path: &Path, what: &str, no_symlinks: bool) -> Result<Vec<u8>> {
    let bad = |why: String| Error::InvalidParam(format!("TLS {what} {}: {why}", path.display()));
    let link = || bad("is a symbolic link, refused: give the file itself".into());
    if no_symlinks {
        let meta = std::fs::symlink_metadata(path).map_err(|e| bad(e.to_string()))?;
        if meta.file_type().is_symlink() {
            return Err(link());
        }
    }
    // O_NONBLOCK: opening a FIFO put where a file is expected must not block init
    let flags = libc::O_NONBLOCK | if no_symlinks { libc::O_NOFOLLOW } else { 0 };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) if no_symlinks => link(),
            _ => bad(e.to_string()),
        })?;
    let meta = file.metadata().map_err(|e| bad(e.to_string()))?;
    if !meta.is_file() {
        return Err(bad("is not a regular file".into()));
    }
    if meta.len() > MAX_FILE {
        return Err(bad(format!("is {} bytes, more than {MAX_FILE}", meta.len())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(bad(format!("is more than {MAX_FILE} bytes")));
    }
    Ok(bytes)
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

/// The revocation lists of one file: PEM ("X509 CRL" sections) or a single DER list. Each one is
/// parsed now (by a throwaway verifier), so a file that is not a CRL fails init naming it.
fn crls(
    bytes: &[u8],
    what: &str,
    roots: &Arc<rustls::RootCertStore>,
    provider: &Arc<rustls::crypto::CryptoProvider>,
) -> Result<Vec<CertificateRevocationListDer<'static>>> {
    let bad = |why: String| Error::InvalidParam(format!("TLS {what}: {why}"));
    let list: Vec<_> = if bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        CertificateRevocationListDer::pem_slice_iter(bytes)
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| bad(format!("not a PEM revocation list ({e})")))?
    } else {
        vec![CertificateRevocationListDer::from(bytes.to_vec())]
    };
    if list.is_empty() {
        return Err(bad("no revocation list (\"X509 CRL\" PEM section) found".into()));
    }
    for crl in &list {
        rustls::server::WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
            .with_crls([crl.clone()])
            .build()
            .map_err(|e| bad(format!("not a valid certificate revocation list ({e})")))?;
    }
    Ok(list)
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
    let files = match &info {
        Info::Named(n) => n.resolve(),
        Info::Original(o) => o.resolve(s.key_pem.is_some())?,
    };
    let mut ca = Vec::new();
    for (what, path) in &files.ca {
        let pem = read_file(path, what, files.no_symlinks)?;
        ca.extend(certs(&pem, &format!("{what} {}", path.display()))?);
    }
    let (what, path) = &files.cert;
    let chain = certs(
        &read_file(path, what, files.no_symlinks)?,
        &format!("{what} {}", path.display()),
    )?;
    let key_pem = match (&s.key_pem, &files.key) {
        (Some(k), _) => k.clone(),
        (None, Some(path)) => read_file(path, "key file", files.no_symlinks)?,
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
    let mut revoked = Vec::new();
    for (what, path) in &files.crls {
        let bytes = read_file(path, what, files.no_symlinks)?;
        revoked.extend(crls(
            &bytes,
            &format!("{what} {}", path.display()),
            &roots,
            &provider,
        )?);
    }
    let (server, client) = configs(roots, revoked, chain, key, provider)?;
    Ok(Some(Tls {
        server,
        client,
        server_name: files.server_name,
    }))
}

/// Both sides' configurations: this PE presents `chain` and `key` and checks the other side
/// against `roots` and, when there are some, the revocation lists `crls`. Only TLS 1.3 is
/// negotiated, as by the original.
///
/// With CRLs, only the peer's own certificate is checked, like OpenSSL's `X509_V_FLAG_CRL_CHECK`
/// (the intermediate CAs of its chain are not): a revoked one is refused, and so is one whose
/// issuer has no list among `crls` (its status is unknown). A list's expiry (`nextUpdate`) is not
/// enforced.
fn configs(
    roots: Arc<rustls::RootCertStore>,
    crls: Vec<CertificateRevocationListDer<'static>>,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<(Arc<rustls::ServerConfig>, Arc<rustls::ClientConfig>)> {
    let tls_err = |e: rustls::Error| Error::InvalidParam(format!("TLS configuration: {e}"));
    let client_verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
            .with_crls(crls.clone())
            .only_check_end_entity_revocation()
            .build()
            .map_err(|e| Error::InvalidParam(format!("TLS client verifier: {e}")))?;
    let server_verifier =
        rustls::client::WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .with_crls(crls)
            .only_check_end_entity_revocation()
            .build()
            .map_err(|e| Error::InvalidParam(format!("TLS server verifier: {e}")))?;
    let server = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_err)?
        .with_client_cert_verifier(client_verifier)
        .with_single_cert(chain.clone(), key.clone_key())
        .map_err(tls_err)?;
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_err)?
        .with_webpki_verifier(server_verifier)
        .with_client_auth_cert(chain, key)
        .map_err(tls_err)?;
    Ok((Arc::new(server), Arc::new(client)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_format() {
        let Ok(Info::Named(i)) = parse_info("ca=/a/ca.pem; cert=/a/c.pem;key=/a/k.pem;server_name=node0")
        else {
            panic!("not the name=value form")
        };
        assert_eq!(i.ca, "/a/ca.pem");
        assert_eq!(i.key.as_deref(), Some("/a/k.pem"));
        assert_eq!(i.server_name.as_deref(), Some("node0"));
        assert!(parse_info("cert=/c").is_err());
        assert!(parse_info("ca=/a").is_err());
        assert!(parse_info("ca=/a;cert=/c;colour=blue").is_err());
        assert!(parse_info("ca=/a;cert=").is_err());
        assert!(parse_info("ca=/a;cert=/c;junk").is_err());
        assert!(parse_info("ca=/a;cert=/c;").is_ok());
        // crl= is optional and repeatable
        let n = parse_named("ca=/a;crl=/r1.pem;cert=/c; crl = /r2.der").unwrap();
        assert_eq!(n.crl, strs(&["/r1.pem", "/r2.der"]));
        assert_eq!(n.resolve().crls.len(), 2);
        assert!(parse_named("ca=/a;cert=/c").unwrap().crl.is_empty());
        assert!(parse_named("ca=/a;cert=/c;crl=").is_err());
    }

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn original_format_is_split_as_the_original_does() {
        // the spec's example
        let o = parse_original(
            "tlsCaPath: /etc/shmem/ca; tlsCaFile: root.pem, inter.pem; tlsCert: /etc/shmem/node.pem;\n\
             tlsCrlPath: /etc/shmem/crl; tlsCrlFile: revoked.crl",
        );
        assert_eq!(o.ca_path.as_deref(), Some("/etc/shmem/ca"));
        assert_eq!(o.ca_files, strs(&["root.pem", "inter.pem"]));
        assert_eq!(o.cert.as_deref(), Some("/etc/shmem/node.pem"));
        assert_eq!(o.crl_path.as_deref(), Some("/etc/shmem/crl"));
        assert_eq!(o.crl_files, strs(&["revoked.crl"]));
        assert!(o.unknown.is_empty() && o.package_path.is_none());

        // empty pieces skipped, key and value trimmed (blanks, tabs)
        let o = parse_original(";;  tlsCaPath\t:\t /ca \t;;;tlsCert:/c.pem;");
        assert_eq!(o.ca_path.as_deref(), Some("/ca"));
        assert_eq!(o.cert.as_deref(), Some("/c.pem"));
        // a piece without ':' is skipped, so are an empty key and an empty value
        let o = parse_original("tlsCaPath /x; : /y; tlsCert:   ; tlsCert: /c; tlsCaFile:");
        assert_eq!(
            o,
            Original {
                cert: Some("/c".into()),
                ..Original::default()
            }
        );
        // the value ends at a second ':'
        let o = parse_original("tlsCert: /a/b.pem: trailing; tlsCaPath: /ca:");
        assert_eq!(o.cert.as_deref(), Some("/a/b.pem"));
        assert_eq!(o.ca_path.as_deref(), Some("/ca"));
        // a value that is empty up to the second ':' is an empty value: skipped
        assert_eq!(parse_original("tlsCert: : /c"), Original::default());
        // file lists: trimmed, empty names dropped
        let o = parse_original("tlsCaFile: , a.pem ,,b.pem , ; tlsCrlFile: x.crl,");
        assert_eq!(o.ca_files, strs(&["a.pem", "b.pem"]));
        assert_eq!(o.crl_files, strs(&["x.crl"]));
        assert!(parse_original("tlsCaFile: , ,").ca_files.is_empty());
        // unknown keys are kept for the log and otherwise ignored; packagePath is recorded
        let o = parse_original("colour: blue; packagePath: /opt/plugin; tlsCert: /c; TLSCERT: /d");
        assert_eq!(o.unknown, strs(&["colour", "TLSCERT"]));
        assert_eq!(o.package_path.as_deref(), Some("/opt/plugin"));
        assert_eq!(o.cert.as_deref(), Some("/c"));
        // a repeated key: the last one counts
        assert_eq!(
            parse_original("tlsCert: /a; tlsCert: /b").cert.as_deref(),
            Some("/b")
        );
        // '=' is an ordinary character of a value
        assert_eq!(parse_original("tlsCert: /a=b").cert.as_deref(), Some("/a=b"));
        // nothing usable at all: nothing recorded (init names what is missing)
        assert_eq!(parse_original(""), Original::default());
        assert_eq!(parse_original(" ; junk ;"), Original::default());
    }

    #[test]
    fn the_two_forms_are_told_apart() {
        for named in [
            "ca=/a/ca.pem;cert=/a/c.pem",
            " ca = /a/ca.pem ; cert=/c",
            "ca=/mnt/c:/ca.pem;cert=/x:y.pem;key=/k;server_name=[::1]",
            "cert=/c;ca=/a",
            "",
            "colour=blue: red",
        ] {
            assert!(!is_original_format(named), "{named}");
        }
        for original in [
            "tlsCaPath: /ca; tlsCaFile: a.pem; tlsCert: /c.pem",
            "tlsCert:/c=1.pem; tlsCaPath:/ca",
            "junk=1; tlsCaPath: /ca",
            "  packagePath : /p",
            "foo: bar",
        ] {
            assert!(is_original_format(original), "{original}");
        }
        // no separator at all: the name=value form, refused by the setter
        assert!(!is_original_format("tlsCert"));
        assert!(parse_info("tlsCert").is_err());
        assert!(matches!(
            parse_info("tlsCaPath: /ca; colour: blue"),
            Ok(Info::Original(_))
        ));
        // the original's form never fails in the setter; the name=value form is checked there
        assert!(matches!(parse_info("colour: blue"), Ok(Info::Original(_))));
        let e = parse_info("ca=/a;cert=/c;colour=blue").unwrap_err().to_string();
        assert!(e.contains("colour") && e.contains("tlsCaPath"), "{e}");
    }

    /// A scratch directory removed on drop.
    struct Dir(PathBuf);
    impl Dir {
        fn new(tag: &str) -> Dir {
            let d = std::env::temp_dir().join(format!("aclshmem-tls-unit-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Dir(d)
        }
        fn p(&self, name: &str) -> String {
            self.0.join(name).to_str().unwrap().to_string()
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn original_form_names_missing_entries() {
        let err = |text: &str, key: bool| parse_original(text).resolve(key).unwrap_err().to_string();
        let e = err("", false);
        for what in [
            "tlsCaPath",
            "tlsCaFile",
            "tlsCert",
            "aclshmemx_set_config_store_tls_key",
        ] {
            assert!(e.contains(what), "{e}");
        }
        let e = err("tlsCaPath: /ca; tlsCaFile: a.pem", true);
        assert!(e.contains("lack tlsCert") && !e.contains("tlsCaPath ("), "{e}");
        let e = err("tlsCaPath: /ca; tlsCert: /c; tlsCaFile: ,", true);
        assert!(e.contains("lack tlsCaFile"), "{e}");
        let e = err(
            "tlsCaPath: /ca; tlsCaFile: a.pem; tlsCert: /c; tlsCrlFile: r.crl",
            true,
        );
        assert!(e.contains("lack tlsCrlPath"), "{e}");
        let e = err("tlsCaPath: /ca; tlsCaFile: a.pem; tlsCert: /c", false);
        assert!(e.contains("lack the private key"), "{e}");
    }

    #[test]
    fn original_form_checks_directories_and_names_files_inside_them() {
        let d = Dir::new("dirs");
        std::fs::write(d.p("file"), "x").unwrap();
        std::fs::create_dir(d.p("ca")).unwrap();
        let resolve = |text: String| parse_original(&text).resolve(true);
        let e = resolve(format!("tlsCaPath: {}; tlsCaFile: a; tlsCert: /c", d.p("none")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("tlsCaPath") && e.contains("No such file"), "{e}");
        let e = resolve(format!("tlsCaPath: {}; tlsCaFile: a; tlsCert: /c", d.p("file")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("tlsCaPath") && e.contains("is not a directory"), "{e}");
        let f = resolve(format!(
            "tlsCaPath: {}/; tlsCaFile: a.pem, /b.pem; tlsCert: /c",
            d.p("ca")
        ))
        .unwrap();
        let ca: Vec<_> =
            f.ca.iter()
                .map(|(_, p)| p.to_str().unwrap().to_string())
                .collect();
        assert_eq!(
            ca,
            [format!("{}/a.pem", d.p("ca")), format!("{}//b.pem", d.p("ca"))]
        );
        assert!(f.no_symlinks && f.key.is_none());
        assert!(f.crls.is_empty());
        let text = format!("tlsCaPath: {}; tlsCaFile: a.pem; tlsCert: /c", d.p("ca"));
        let e = resolve(format!("{text}; tlsCrlPath: {}; tlsCrlFile: r.crl", d.p("file")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tlsCrlPath") && e.contains("is not a directory"),
            "{e}"
        );
        let f = resolve(format!(
            "{text}; tlsCrlPath: {}; tlsCrlFile: r.crl, s.crl",
            d.p("ca")
        ))
        .unwrap();
        let crls: Vec<_> = f
            .crls
            .iter()
            .map(|(w, p)| (w.as_str(), p.to_str().unwrap().to_string()))
            .collect();
        assert_eq!(
            crls,
            [
                ("tlsCrlFile", format!("{}/r.crl", d.p("ca"))),
                ("tlsCrlFile", format!("{}/s.crl", d.p("ca")))
            ]
        );
        // a CRL directory without file names loads nothing, and is still checked
        assert!(
            resolve(format!("{text}; tlsCrlPath: {}", d.p("ca")))
                .unwrap()
                .crls
                .is_empty()
        );
        assert!(resolve(format!("{text}; tlsCrlPath: {}", d.p("none"))).is_err());
    }

    #[test]
    fn files_must_be_regular_bounded_and_in_the_original_form_not_links() {
        let d = Dir::new("files");
        std::fs::write(d.p("ok.pem"), "text").unwrap();
        std::os::unix::fs::symlink(d.p("ok.pem"), d.p("link.pem")).unwrap();
        std::os::unix::fs::symlink(d.p("none.pem"), d.p("dangling.pem")).unwrap();
        std::fs::File::create(d.p("big.pem"))
            .unwrap()
            .set_len(MAX_FILE + 1)
            .unwrap();
        std::fs::create_dir(d.p("dir.pem")).unwrap();
        let read = |name: &str, strict: bool| read_file(Path::new(&d.p(name)), "tlsCert", strict);
        assert_eq!(read("ok.pem", true).unwrap(), b"text");
        for name in ["link.pem", "dangling.pem"] {
            let e = read(name, true).unwrap_err().to_string();
            assert!(e.contains("tlsCert") && e.contains("is a symbolic link"), "{e}");
        }
        // the name=value form follows links
        assert_eq!(read("link.pem", false).unwrap(), b"text");
        for strict in [true, false] {
            let e = read("big.pem", strict).unwrap_err().to_string();
            assert!(e.contains("more than"), "{e}");
            let e = read("dir.pem", strict).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
            let e = read("none.pem", strict).unwrap_err().to_string();
            assert!(e.contains("No such file"), "{e}");
        }
        // a FIFO is not a regular file, and opening it does not block
        let fifo = std::ffi::CString::new(d.p("fifo.pem")).unwrap();
        // SAFETY: mkfifo reads a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let e = read("fifo.pem", true).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    /// A CA, leaves it signed, and revocation lists, made with rcgen.
    struct Pki {
        issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
        roots: Arc<rustls::RootCertStore>,
    }

    impl Pki {
        fn new(name: &str) -> Pki {
            let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
            p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            p.distinguished_name.push(rcgen::DnType::CommonName, name);
            let key = rcgen::KeyPair::generate().unwrap();
            let cert = p.self_signed(&key).unwrap();
            let mut roots = rustls::RootCertStore::empty();
            roots.add(cert.der().clone()).unwrap();
            Pki {
                issuer: rcgen::Issuer::new(p, key),
                roots: Arc::new(roots),
            }
        }

        /// A leaf for "localhost" with serial number `serial`: (chain, key).
        fn leaf(&self, serial: u64) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
            let mut p = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
            p.serial_number = Some(rcgen::SerialNumber::from(serial));
            let key = rcgen::KeyPair::generate().unwrap();
            let cert = p.signed_by(&key, &self.issuer).unwrap();
            let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
            (vec![cert.der().clone()], key)
        }

        /// A revocation list of this CA revoking `serials`.
        fn crl(&self, serials: &[u64]) -> rcgen::CertificateRevocationList {
            rcgen::CertificateRevocationListParams {
                this_update: rcgen::date_time_ymd(2024, 1, 1),
                next_update: rcgen::date_time_ymd(2049, 1, 1),
                crl_number: rcgen::SerialNumber::from(1u64),
                issuing_distribution_point: None,
                revoked_certs: serials
                    .iter()
                    .map(|&s| rcgen::RevokedCertParams {
                        serial_number: rcgen::SerialNumber::from(s),
                        revocation_time: rcgen::date_time_ymd(2024, 1, 1),
                        reason_code: Some(rcgen::RevocationReason::KeyCompromise),
                        invalidity_date: None,
                    })
                    .collect(),
                key_identifier_method: rcgen::KeyIdMethod::Sha256,
            }
            .signed_by(&self.issuer)
            .unwrap()
        }

        /// Both configurations of a PE holding leaf `serial`, checking peers against `crls`.
        fn side(
            &self,
            serial: u64,
            crls: &[&rcgen::CertificateRevocationList],
        ) -> (Arc<rustls::ServerConfig>, Arc<rustls::ClientConfig>) {
            let (chain, key) = self.leaf(serial);
            let crls = crls.iter().map(|c| c.der().clone()).collect();
            configs(self.roots.clone(), crls, chain, key, provider()).unwrap()
        }
    }

    fn provider() -> Arc<rustls::crypto::CryptoProvider> {
        Arc::new(rustls::crypto::ring::default_provider())
    }

    /// A handshake in memory; the first error of either side.
    fn handshake(
        client: Arc<rustls::ClientConfig>,
        server: Arc<rustls::ServerConfig>,
    ) -> std::result::Result<rustls::ProtocolVersion, rustls::Error> {
        let name = ServerName::try_from("localhost").unwrap();
        let mut c = rustls::ClientConnection::new(client, name)?;
        let mut s = rustls::ServerConnection::new(server)?;
        fn pass(
            from: &mut impl std::ops::DerefMut<Target = rustls::ConnectionCommon<impl Sized>>,
            to: &mut impl std::ops::DerefMut<Target = rustls::ConnectionCommon<impl Sized>>,
        ) -> std::result::Result<(), rustls::Error> {
            let mut bytes = Vec::new();
            while from.wants_write() {
                from.write_tls(&mut bytes).unwrap();
            }
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                to.read_tls(&mut rest).unwrap();
                to.process_new_packets()?;
            }
            Ok(())
        }
        for _ in 0..10 {
            pass(&mut c, &mut s)?;
            pass(&mut s, &mut c)?;
            if !c.is_handshaking() && !s.is_handshaking() {
                // in TLS 1.3 the server judges the client's certificate after the client is done
                pass(&mut c, &mut s)?;
                return Ok(c.protocol_version().unwrap());
            }
        }
        panic!("the handshake does not end");
    }

    #[test]
    fn revocation_lists_are_parsed_at_init() {
        let pki = Pki::new("crl parse CA");
        let crl = pki.crl(&[7]);
        let check = |bytes: &[u8]| crls(bytes, "tlsCrlFile /x.crl", &pki.roots, &provider());
        assert_eq!(check(crl.pem().unwrap().as_bytes()).unwrap().len(), 1);
        assert_eq!(check(crl.der()).unwrap().len(), 1);
        let two = format!("{}{}", crl.pem().unwrap(), pki.crl(&[8]).pem().unwrap());
        assert_eq!(check(two.as_bytes()).unwrap().len(), 2);
        let e = check(b"this is not a revocation list\n").unwrap_err().to_string();
        assert!(
            e.contains("tlsCrlFile /x.crl") && e.contains("not a valid certificate revocation list"),
            "{e}"
        );
        let mut cut = crl.der().to_vec();
        cut.truncate(cut.len() / 2);
        assert!(check(&cut).is_err());
        let garbled = "-----BEGIN X509 CRL-----\nnot base64 at all!\n-----END X509 CRL-----\n";
        assert!(check(garbled.as_bytes()).is_err());
        let e = check(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no revocation list"), "{e}");
    }

    #[test]
    fn a_revoked_peer_is_refused_on_both_sides() {
        let pki = Pki::new("crl CA");
        let crl = pki.crl(&[2]);
        let (good_server, good_client) = pki.side(1, &[&crl]);
        let (revoked_server, revoked_client) = pki.side(2, &[&crl]);
        assert!(handshake(good_client.clone(), good_server.clone()).is_ok());
        // the store refuses a revoked client; a client refuses a revoked store
        for (client, server) in [(revoked_client, good_server), (good_client, revoked_server)] {
            let e = handshake(client, server).unwrap_err();
            assert_eq!(
                e,
                rustls::Error::InvalidCertificate(rustls::CertificateError::Revoked),
                "{e}"
            );
        }
        // without the list, the same certificate is accepted
        let (server, _) = pki.side(2, &[]);
        let (_, client) = pki.side(1, &[]);
        assert!(handshake(client, server).is_ok());
        // a peer whose issuer has no list among those given is refused: its status is unknown
        let other = Pki::new("another CA");
        let (server, _) = pki.side(1, &[&other.crl(&[])]);
        let (_, client) = pki.side(3, &[&other.crl(&[])]);
        let e = handshake(client, server).unwrap_err();
        assert!(format!("{e:?}").contains("UnknownRevocationStatus"), "{e:?}");
    }

    #[test]
    fn only_tls_1_3_is_negotiated() {
        let pki = Pki::new("version CA");
        let (server, client) = pki.side(1, &[]);
        assert_eq!(
            handshake(client.clone(), server.clone()).unwrap(),
            rustls::ProtocolVersion::TLSv1_3
        );
        let tls12 = [&rustls::version::TLS12];
        let (chain, key) = pki.leaf(2);
        let old_client = rustls::ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(&tls12)
            .unwrap()
            .with_root_certificates(pki.roots.clone())
            .with_client_auth_cert(chain.clone(), key.clone_key())
            .unwrap();
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(pki.roots.clone(), provider())
                .build()
                .unwrap();
        let old_server = rustls::ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&tls12)
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, key)
            .unwrap();
        // the store refuses a TLS 1.2 client; a PE refuses a TLS 1.2 store
        for (client, server) in [(Arc::new(old_client), server), (client, Arc::new(old_server))] {
            let e = handshake(client, server).unwrap_err();
            assert!(matches!(e, rustls::Error::PeerIncompatible(_)), "{e:?}");
        }
    }
}
