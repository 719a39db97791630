//! Config-store TLS (rustls, mutual authentication): certificates and revocation lists are
//! generated here with rcgen (never committed); an encrypted key is made with the openssl command.
//! Both forms of `tls_info` are used: this library's `ca=...;cert=...` and the original's
//! `tlsCaPath: ...; tlsCaFile: ...; tlsCert: ...` (key from aclshmemx_set_config_store_tls_key).

mod common;

use std::path::PathBuf;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, CertificateRevocationListParams, DnType, IsCa, Issuer, KeyIdMethod,
    KeyPair, RevocationReason, RevokedCertParams, SanType, SerialNumber,
};

struct Pki {
    dir: PathBuf,
}

fn ca(name: &str) -> (CertificateParams, KeyPair, String) {
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    let cert = p.self_signed(&key).unwrap();
    (p, key, cert.pem())
}

/// Serial number of the `revoked` certificate, listed in `revoked.crl`.
const REVOKED_SERIAL: u64 = 4;

fn leaf(issuer: &Issuer<'_, KeyPair>, serial: u64, expired: bool) -> (String, String) {
    let mut p = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    p.serial_number = Some(SerialNumber::from(serial));
    p.subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    p.distinguished_name.push(DnType::CommonName, "aclshmem PE");
    if expired {
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2021, 1, 1);
    }
    let key = KeyPair::generate().unwrap();
    let cert = p.signed_by(&key, issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

impl Pki {
    fn new(tag: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("aclshmem-tls-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let w = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        let (ca1_params, ca1_key, ca1_pem) = ca("aclshmem test CA");
        let (ca2_params, ca2_key, _) = ca("another CA");
        w("ca.pem", &ca1_pem);
        let issuer1 = Issuer::new(ca1_params, ca1_key);
        let issuer2 = Issuer::new(ca2_params, ca2_key);
        for (name, issuer, serial, expired) in [
            ("pe", &issuer1, 1, false),
            ("stranger", &issuer2, 2, false),
            ("expired", &issuer1, 3, true),
            ("revoked", &issuer1, REVOKED_SERIAL, false),
        ] {
            let (c, k) = leaf(issuer, serial, expired);
            w(&format!("{name}.pem"), &c);
            w(&format!("{name}.key"), &k);
        }
        // the CA's revocation list: `revoked` is revoked, the others are not
        let crl = CertificateRevocationListParams {
            this_update: rcgen::date_time_ymd(2024, 1, 1),
            next_update: rcgen::date_time_ymd(2049, 1, 1),
            crl_number: SerialNumber::from(1u64),
            issuing_distribution_point: None,
            revoked_certs: vec![RevokedCertParams {
                serial_number: SerialNumber::from(REVOKED_SERIAL),
                revocation_time: rcgen::date_time_ymd(2024, 1, 1),
                reason_code: Some(RevocationReason::KeyCompromise),
                invalidity_date: None,
            }],
            key_identifier_method: KeyIdMethod::Sha256,
        }
        .signed_by(&issuer1)
        .unwrap();
        w("revoked.crl", &crl.pem().unwrap());
        w("garbage.crl", "this is not a certificate revocation list\n");
        let status = std::process::Command::new("openssl")
            .args([
                "pkcs8",
                "-topk8",
                "-v2",
                "aes-256-cbc",
                "-passout",
                "pass:s3cret",
                "-in",
            ])
            .arg(dir.join("pe.key"))
            .arg("-out")
            .arg(dir.join("pe.enc.key"))
            .status()
            .expect("openssl (Debian package openssl) is needed to make an encrypted key");
        assert!(status.success());
        // the same key under DES-EDE3-CBC, the cipher OpenSSL 3's `req -newkey` writes
        let status = std::process::Command::new("openssl")
            .args(["pkcs8", "-topk8", "-v2", "des3", "-passout", "pass:s3cret", "-in"])
            .arg(dir.join("pe.key"))
            .arg("-out")
            .arg(dir.join("pe.des3.key"))
            .status()
            .expect("openssl");
        assert!(status.success());
        Pki { dir }
    }

    fn p(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }

    /// tls_info for certificate `cert` (key from `<cert>.key` unless `key` is false).
    fn info(&self, cert: &str, key: bool) -> String {
        let mut s = format!("ca={};cert={}", self.p("ca.pem"), self.p(&format!("{cert}.pem")));
        if key {
            s.push_str(&format!(";key={}", self.p(&format!("{cert}.key"))));
        }
        s
    }

    /// tls_info in the original's form for certificate `cert`, with revocation list `crl` (a file
    /// name in the directory) when given; the key goes through aclshmemx_set_config_store_tls_key.
    fn original(&self, cert: &str, crl: Option<&str>) -> String {
        let dir = self.dir.to_str().unwrap();
        let mut s = format!("tlsCaPath: {dir}; tlsCaFile: ca.pem; tlsCert: {dir}/{cert}.pem");
        if let Some(crl) = crl {
            s.push_str(&format!("; tlsCrlPath: {dir}; tlsCrlFile: {crl}"));
        }
        s
    }

    /// A symbolic link `link` to `target`, both in the directory.
    fn link(&self, target: &str, link: &str) {
        std::os::unix::fs::symlink(self.dir.join(target), self.dir.join(link)).unwrap();
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(n: usize, env: &[(&str, &str)]) -> common::Run {
    let prog = common::compile_c("tls_probe");
    let run = common::run_pes(n, &[prog.to_str().unwrap(), "0"], env, Duration::from_secs(90));
    run.assert_ok("tls");
    run
}

#[test]
fn mutual_tls_between_every_pe() {
    let pki = Pki::new("mutual");
    run(3, &[("TLS_INFO", &pki.info("pe", true))]);
}

#[test]
fn encrypted_key_with_password_and_with_decrypt_handler() {
    let pki = Pki::new("encrypted");
    let info = pki.info("pe", false);
    let enc = pki.p("pe.enc.key");
    let env = [
        ("TLS_INFO", info.as_str()),
        ("TLS_KEY_0", enc.as_str()),
        ("TLS_KEY_1", enc.as_str()),
        ("TLS_PW_0", "s3cret"),
        ("TLS_PW_1", "s3cret"),
    ];
    run(2, &env);
    let mut with_handler = env.to_vec();
    with_handler.push(("TLS_PW_VIA_HANDLER", "1"));
    run(2, &with_handler);
}

/// A key encrypted with DES-EDE3-CBC (PBES2), as OpenSSL 3 writes it by default: refused as an
/// "unsupported OID" before the pkcs5 `3des` feature.
#[test]
fn key_encrypted_with_3des_is_read() {
    let pki = Pki::new("des3");
    let info = pki.info("pe", false);
    let enc = pki.p("pe.des3.key");
    run(
        2,
        &[
            ("TLS_INFO", info.as_str()),
            ("TLS_KEY_0", enc.as_str()),
            ("TLS_KEY_1", enc.as_str()),
            ("TLS_PW_0", "s3cret"),
            ("TLS_PW_1", "s3cret"),
        ],
    );
}

#[test]
fn wrong_password_is_a_clear_error() {
    let pki = Pki::new("badpw");
    let enc = pki.p("pe.enc.key");
    let r = run(
        2,
        &[
            ("TLS_INFO", &pki.info("pe", true)),
            ("TLS_INFO_1", &pki.info("pe", false)),
            ("TLS_KEY_1", &enc),
            ("TLS_PW_1", "wrong"),
            ("FIRST_RC_1", "-1"),
        ],
    );
    assert!(r.stdout.contains("wrong password"), "{}", r.dump());
}

#[test]
fn certificate_of_another_ca_is_refused_and_the_job_goes_on() {
    let pki = Pki::new("stranger");
    let r = run(
        3,
        &[
            ("TLS_INFO", &pki.info("pe", true)),
            ("TLS_INFO_2", &pki.info("stranger", true)),
            ("FIRST_RC_2", "-4"),
        ],
    );
    assert!(
        r.stdout.contains("PE 2 first init: -4") && r.stdout.contains("UnknownCA"),
        "{}",
        r.dump()
    );
    assert!(
        r.elapsed < Duration::from_secs(15),
        "the refusal must be reported at once\n{}",
        r.dump()
    );
}

#[test]
fn expired_certificate_is_refused() {
    let pki = Pki::new("expired");
    let r = run(
        2,
        &[
            ("TLS_INFO", &pki.info("pe", true)),
            ("TLS_INFO_1", &pki.info("expired", true)),
            ("FIRST_RC_1", "-4"),
        ],
    );
    assert!(r.stdout.to_lowercase().contains("expired"), "{}", r.dump());
}

#[test]
fn plain_tcp_against_a_tls_store_is_a_clear_error() {
    let pki = Pki::new("plain");
    let r = run(
        2,
        &[
            ("TLS_INFO", &pki.info("pe", true)),
            ("TLS_INFO_1", "off"),
            ("FIRST_RC_1", "-4"),
        ],
    );
    assert!(r.stdout.contains("speaks TLS"), "{}", r.dump());
}

#[test]
fn malformed_settings_are_refused() {
    let pki = Pki::new("malformed");
    // syntax: the setter refuses it; a missing file: init refuses it
    let r = run(
        3,
        &[
            ("TLS_INFO", &pki.info("pe", true)),
            ("TLS_INFO_1", "ca=/x"),
            ("FIRST_RC_1", "-1"),
            (
                "TLS_INFO_2",
                "ca=/nonexistent/ca.pem;cert=/nonexistent/c.pem;key=/nonexistent/k.pem",
            ),
            ("FIRST_RC_2", "-1"),
        ],
    );
    assert!(
        r.stdout.contains("cert=<path> is missing") && r.stdout.contains("/nonexistent/ca.pem"),
        "{}",
        r.dump()
    );
}

/// Whether the job printed `needle` (the library logs to stdout in these runs).
fn has(r: &common::Run, needle: &str) -> bool {
    r.stdout.contains(needle)
}

#[test]
fn both_settings_forms_bring_a_job_up() {
    let pki = Pki::new("forms");
    // the original's form, with a revocation list (it revokes none of these PEs), unknown keys,
    // packagePath, empty pieces and a piece without ':', all ignored
    let info = format!(
        "{}; packagePath: /opt/none;colour : blue;; junk ;",
        pki.original("pe", Some("revoked.crl"))
    );
    let key = pki.p("pe.key");
    let r = run(
        2,
        &[
            ("TLS_INFO", &info),
            ("TLS_KEY", &key),
            ("SHMEM_LOG_LEVEL", "INFO"),
        ],
    );
    assert!(
        has(&r, "unknown key \"colour\" ignored") && has(&r, "packagePath \"/opt/none\" ignored"),
        "{}",
        r.dump()
    );
    // this library's form, with crl=
    let info = format!("{};crl={}", pki.info("pe", true), pki.p("revoked.crl"));
    run(2, &[("TLS_INFO", &info)]);
}

#[test]
fn revoked_client_certificate_is_refused_by_the_store_and_init_fails_in_bounded_time() {
    let pki = Pki::new("revoked-client");
    // PE 1 holds the revoked certificate; every PE has the list
    let r = run(
        3,
        &[
            ("TLS_INFO", &pki.original("pe", Some("revoked.crl"))),
            ("TLS_KEY", &pki.p("pe.key")),
            ("TLS_INFO_1", &pki.original("revoked", Some("revoked.crl"))),
            ("TLS_KEY_1", &pki.p("revoked.key")),
            // the store's warning about the refused PE
            ("SHMEM_LOG_LEVEL", "WARN"),
            ("TLS_INIT_TIMEOUT", "5"),
            ("TLS_OP_TIMEOUT", "5"),
            // PE 1 is refused (ACLSHMEM_BOOTSTRAP_ERROR); the others wait for it until the
            // operation timeout (ACLSHMEM_TIMEOUT_ERROR) naming it
            ("RC_0", "-7"),
            ("RC_1", "-4"),
            ("RC_2", "-7"),
        ],
    );
    assert!(
        has(&r, "invalid peer certificate: Revoked")
            && has(
                &r,
                "refused PE 1: TLS or protocol error: received fatal alert: CertificateRevoked"
            )
            && has(&r, "PE(s) [1] did not arrive within 5 s"),
        "{}",
        r.dump()
    );
    assert!(r.elapsed < Duration::from_secs(30), "{}", r.dump());
}

#[test]
fn revoked_store_certificate_is_refused_by_every_pe() {
    let pki = Pki::new("revoked-store");
    let crl = format!(";crl={}", pki.p("revoked.crl"));
    // PE 0, which runs the store, holds the revoked certificate
    let r = run(
        3,
        &[
            ("TLS_INFO", &(pki.info("pe", true) + &crl)),
            ("TLS_INFO_0", &(pki.info("revoked", true) + &crl)),
            ("TLS_INIT_TIMEOUT", "5"),
            ("TLS_OP_TIMEOUT", "5"),
            ("RC_0", "-4"),
            ("RC_1", "-4"),
            ("RC_2", "-4"),
        ],
    );
    // PE 0's own client refuses it at once; the others do too, or find the store gone (PE 0 failed)
    assert!(
        has(
            &r,
            "refused PE 0: TLS or protocol error: invalid peer certificate: Revoked"
        ),
        "{}",
        r.dump()
    );
    assert!(r.elapsed < Duration::from_secs(30), "{}", r.dump());
}

#[test]
fn revocation_list_that_does_not_parse_fails_init() {
    let pki = Pki::new("badcrl");
    let key = pki.p("pe.key");
    let r = run(
        3,
        &[
            ("TLS_INFO", &pki.original("pe", None)),
            ("TLS_KEY", &key),
            ("TLS_INFO_1", &pki.original("pe", Some("garbage.crl"))),
            ("FIRST_RC_1", "-1"),
            (
                "TLS_INFO_2",
                &format!("{};crl={}", pki.info("pe", true), pki.p("garbage.crl")),
            ),
            ("FIRST_RC_2", "-1"),
        ],
    );
    let garbage = pki.p("garbage.crl");
    assert!(
        has(
            &r,
            &format!("TLS tlsCrlFile {garbage}: not a valid certificate revocation list")
        ) && has(
            &r,
            &format!("TLS CRL file {garbage}: not a valid certificate revocation list")
        ),
        "{}",
        r.dump()
    );
}

#[test]
fn symbolic_links_are_refused_in_the_original_form() {
    let pki = Pki::new("links");
    pki.link("ca.pem", "ca-link.pem");
    pki.link("pe.pem", "pe-link.pem");
    pki.link("revoked.crl", "crl-link.crl");
    let dir = pki.dir.to_str().unwrap().to_string();
    let key = pki.p("pe.key");
    let r = run(
        4,
        &[
            ("TLS_INFO", &pki.original("pe", None)),
            ("TLS_KEY", &key),
            (
                "TLS_INFO_1",
                &format!("tlsCaPath: {dir}; tlsCaFile: ca-link.pem; tlsCert: {dir}/pe.pem"),
            ),
            ("FIRST_RC_1", "-1"),
            ("TLS_INFO_2", &pki.original("pe-link", None)),
            ("FIRST_RC_2", "-1"),
            ("TLS_INFO_3", &pki.original("pe", Some("crl-link.crl"))),
            ("FIRST_RC_3", "-1"),
        ],
    );
    for (key, file) in [
        ("tlsCaFile", "ca-link.pem"),
        ("tlsCert", "pe-link.pem"),
        ("tlsCrlFile", "crl-link.crl"),
    ] {
        let msg = format!("TLS {key} {dir}/{file}: is a symbolic link, refused");
        assert!(has(&r, &msg), "no `{msg}`\n{}", r.dump());
    }
}

#[test]
fn missing_entries_of_the_original_form_are_named() {
    let pki = Pki::new("missing");
    let dir = pki.dir.to_str().unwrap().to_string();
    let key = pki.p("pe.key");
    let r = run(
        4,
        &[
            ("TLS_INFO", &pki.original("pe", None)),
            ("TLS_KEY", &key),
            ("TLS_INFO_1", &format!("tlsCaFile: ca.pem; tlsCert: {dir}/pe.pem")),
            ("FIRST_RC_1", "-1"),
            (
                "TLS_INFO_2",
                &format!("tlsCaPath: {dir}; tlsCaFile: , ; tlsCert: {dir}/pe.pem"),
            ),
            ("FIRST_RC_2", "-1"),
            ("TLS_INFO_3", &format!("tlsCaPath: {dir}; tlsCaFile: ca.pem")),
            ("TLS_KEY_3", "-"),
            ("FIRST_RC_3", "-1"),
        ],
    );
    for missing in [
        "lack tlsCaPath (directory of the CA files)",
        "lack tlsCaFile (CA file names inside tlsCaPath)",
        "lack tlsCert (this PE's certificate file), the private key (the original's format takes it \
         from aclshmemx_set_config_store_tls_key)",
    ] {
        assert!(has(&r, missing), "no `{missing}`\n{}", r.dump());
    }
}
