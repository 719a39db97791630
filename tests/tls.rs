//! Config-store TLS (rustls, mutual authentication): certificates are generated here with rcgen
//! (never committed); an encrypted key is made with the openssl command.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};

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

fn leaf(issuer: &Issuer<'_, KeyPair>, expired: bool) -> (String, String) {
    let mut p = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
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
        let (c, k) = leaf(&issuer1, false);
        w("pe.pem", &c);
        w("pe.key", &k);
        let (c, k) = leaf(&issuer2, false);
        w("stranger.pem", &c);
        w("stranger.key", &k);
        let (c, k) = leaf(&issuer1, true);
        w("expired.pem", &c);
        w("expired.key", &k);
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
