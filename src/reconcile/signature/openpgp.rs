//! The OpenPGP half of verification: keyrings (armored or binary public keys) and the check of
//! one signed message against one keyring, with the `pgp` crate.
//!
//! Upstream: `verifySignatureWithKeyring` and `loadArmoredOrUnarmoredGPGKeyRing` in
//! `pkg/verify/verify.go` and `pkg/verify/configmap.go` of openshift/library-go. As upstream,
//! the expiry of the *key* is not checked (CI keys that expired still verify the releases they
//! signed); an expired *signature* is rejected.

use std::{
    fmt,
    io::{BufReader, Read},
    panic::{AssertUnwindSafe, catch_unwind},
    time::{Duration, SystemTime},
};

use pgp::{
    composed::{Deserializable, Message, SignedPublicKey, SignedPublicSubKey},
    packet::{PublicKey, Signature, SignatureType},
    types::KeyDetails,
};

/// Largest literal-data payload read out of a signature (the JSON document is a few hundred
/// bytes; a store's body is capped at 50 KiB before it gets here).
const MAX_CONTENT: u64 = 64 * 1024;

/// How many nested compressed packets are unwrapped before giving up.
const MAX_DECOMPRESS: usize = 4;

/// A named set of OpenPGP public keys, e.g. the `verifier-public-key-redhat` entry of the
/// `release-verification` ConfigMap. Every keyring of a verifier must have signed a release.
#[derive(Clone)]
pub struct Keyring {
    name: String,
    keys: Vec<SignedPublicKey>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyring")
            .field("name", &self.name)
            .field("keys", &self.fingerprints())
            .finish()
    }
}

impl Keyring {
    /// Parses `data`, armored (`-----BEGIN PGP PUBLIC KEY BLOCK-----`) or binary, holding one
    /// or more public keys (upstream tries armored first, then binary).
    ///
    /// # Errors
    /// The parser's message when neither form yields at least one key.
    pub fn parse(name: &str, data: &[u8]) -> Result<Keyring, String> {
        let parsed = catch_unwind(AssertUnwindSafe(|| parse_keys(data)))
            .unwrap_or_else(|_| Err("malformed OpenPGP key data".to_string()))?;
        Ok(Keyring {
            name: name.to_string(),
            keys: parsed,
        })
    }

    /// Builds a keyring from keys already parsed (tests, generated keys).
    pub fn from_keys(name: &str, keys: Vec<SignedPublicKey>) -> Keyring {
        Keyring {
            name: name.to_string(),
            keys,
        }
    }

    /// The keyring's name (the ConfigMap data key, or the file name for the CLI).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Upper-case hex fingerprints of the primary keys, in keyring order.
    pub fn fingerprints(&self) -> Vec<String> {
        self.keys
            .iter()
            .map(|k| format!("{:X}", k.primary_key.fingerprint()))
            .collect()
    }

    /// `name (FINGERPRINT user-id, ...)`, how errors and the CLI name a keyring.
    pub fn describe(&self) -> String {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|k| {
                let fp = format!("{:X}", k.primary_key.fingerprint());
                match k.details.users.first() {
                    Some(u) => format!("{fp} {}", String::from_utf8_lossy(u.id.id())),
                    None => fp,
                }
            })
            .collect();
        format!("{} ({})", self.name, keys.join(", "))
    }

    /// The keys that may have made a signature claiming `issuers` (key ids, upper-case hex):
    /// primary keys, and subkeys whose binding signature allows signing.
    fn candidates(&self) -> Vec<Candidate<'_>> {
        let mut out = Vec::new();
        for k in &self.keys {
            out.push(Candidate {
                fingerprint: format!("{:X}", k.primary_key.fingerprint()),
                key_id: k.primary_key.legacy_key_id().to_string().to_uppercase(),
                key: CandidateKey::Primary(&k.primary_key),
            });
            for sub in &k.public_subkeys {
                if sub.signatures.iter().any(|s| s.key_flags().sign()) {
                    out.push(Candidate {
                        fingerprint: format!("{:X}", sub.key.fingerprint()),
                        key_id: sub.key.legacy_key_id().to_string().to_uppercase(),
                        key: CandidateKey::Sub(sub),
                    });
                }
            }
        }
        out
    }
}

/// One key that may have made a signature.
struct Candidate<'a> {
    fingerprint: String,
    key_id: String,
    key: CandidateKey<'a>,
}

enum CandidateKey<'a> {
    Primary(&'a PublicKey),
    Sub(&'a SignedPublicSubKey),
}

impl Candidate<'_> {
    /// Checks `sig` over `content` with this key. The signature is checked over the literal
    /// data as a detached one would be: `pgp`'s one-pass reader refuses the v3 signatures Red
    /// Hat still makes (a v3 one-pass packet before a v3 signature), the hash is the same.
    fn verify(&self, sig: &Signature, content: &[u8]) -> pgp::errors::Result<()> {
        match self.key {
            CandidateKey::Primary(k) => sig.verify(k, content),
            CandidateKey::Sub(k) => sig.verify(k, content),
        }
    }

    /// Whether the signature's claimed issuers name this key (no claim: any key may try).
    fn matches(&self, issuers: &[String]) -> bool {
        issuers.is_empty()
            || issuers
                .iter()
                .any(|i| *i == self.key_id || *i == self.fingerprint)
    }
}

fn parse_keys(data: &[u8]) -> Result<Vec<SignedPublicKey>, String> {
    let armored = SignedPublicKey::from_armor_many(data)
        .map_err(|e| e.to_string())
        .and_then(|(keys, _)| keys.collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string()));
    let err = match armored {
        Ok(keys) if !keys.is_empty() => return Ok(keys),
        Ok(_) => "no public key found".to_string(),
        Err(e) => e,
    };
    match SignedPublicKey::from_bytes_many(BufReader::new(data))
        .and_then(|keys| keys.collect::<Result<Vec<_>, _>>())
    {
        Ok(keys) if !keys.is_empty() => Ok(keys),
        // The armored attempt's error is the useful one for text input.
        _ if data.starts_with(b"-----") || data.is_ascii() => Err(err),
        Ok(_) => Err("no public key found".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Why one signature does not count for one keyring. The texts follow upstream's
/// (`pkg/verify/verify.go` in openshift/library-go) where it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignatureFailure {
    /// Not an OpenPGP message (garbage, truncated, encrypted, too large).
    Unreadable(String),
    /// An OpenPGP message without a signature.
    NotSigned,
    /// Signed by a key that is not in the keyring (upper-case hex key ids of the issuers).
    UnknownKey(Vec<String>),
    /// The issuer's key is in the keyring but the signature does not check out.
    BadSignature(String),
    /// The signature's own expiration time has passed (RFC 3339).
    Expired(String),
    /// The signed content is not the atomic container signature JSON.
    InvalidJson(String),
    /// `critical.type` is not `atomic container signature`.
    WrongType(String),
    /// `critical.identity.docker-reference` is empty.
    NoIdentity,
    /// `critical.image.docker-manifest-digest` names another image.
    DigestMismatch(String),
}

impl fmt::Display for SignatureFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignatureFailure::Unreadable(e) => write!(f, "could not read the message: {e}"),
            SignatureFailure::NotSigned => f.write_str("not signed"),
            SignatureFailure::UnknownKey(ids) if ids.is_empty() => {
                f.write_str("signed by an unknown key (no issuer recorded)")
            }
            SignatureFailure::UnknownKey(ids) => {
                write!(f, "signed by unknown key {}", ids.join(", "))
            }
            SignatureFailure::BadSignature(e) => write!(f, "signature error: {e}"),
            SignatureFailure::Expired(t) => write!(f, "signature expired on {t}"),
            SignatureFailure::InvalidJson(e) => write!(f, "the signature is not valid JSON: {e}"),
            SignatureFailure::WrongType(t) => {
                write!(f, "signature is not the correct type (type {t:?})")
            }
            SignatureFailure::NoIdentity => f.write_str("signature must have an identity"),
            SignatureFailure::DigestMismatch(d) => {
                write!(f, "signature digest does not match (it signs {d})")
            }
        }
    }
}

/// What a good signature says: the signed content and which key made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedContent {
    /// The literal data (the JSON document).
    pub content: Vec<u8>,
    /// Upper-case hex fingerprint of the key (or subkey) that made the signature.
    pub signer: String,
}

/// Checks that `data` is an OpenPGP message signed by a key of `keyring` and not expired at
/// `now`, and returns the signed content. A malformed message is an error, never a panic.
///
/// # Errors
/// The [`SignatureFailure`] for this keyring.
pub fn check_message(
    data: &[u8],
    keyring: &Keyring,
    now: SystemTime,
) -> Result<SignedContent, SignatureFailure> {
    catch_unwind(AssertUnwindSafe(|| check_message_inner(data, keyring, now)))
        .unwrap_or_else(|_| Err(SignatureFailure::Unreadable("malformed OpenPGP data".to_string())))
}

fn check_message_inner(
    data: &[u8],
    keyring: &Keyring,
    now: SystemTime,
) -> Result<SignedContent, SignatureFailure> {
    let unreadable = |e: &dyn fmt::Display| SignatureFailure::Unreadable(e.to_string());
    if data.is_empty() {
        return Err(SignatureFailure::Unreadable("empty".to_string()));
    }
    let (mut msg, _) = Message::from_reader(BufReader::new(data)).map_err(|e| unreadable(&e))?;
    for _ in 0..MAX_DECOMPRESS {
        if !msg.is_compressed() {
            break;
        }
        msg = msg.decompress().map_err(|e| unreadable(&e))?;
    }
    match &msg {
        Message::Signed { .. } => {}
        Message::Literal { .. } => return Err(SignatureFailure::NotSigned),
        Message::Compressed { .. } => {
            return Err(SignatureFailure::Unreadable(
                "too many nested compressed packets".to_string(),
            ));
        }
        Message::Encrypted { .. } => {
            return Err(SignatureFailure::Unreadable(
                "the message is encrypted".to_string(),
            ));
        }
    }
    let mut content = Vec::new();
    (&mut msg)
        .take(MAX_CONTENT + 1)
        .read_to_end(&mut content)
        .map_err(|e| unreadable(&e))?;
    if content.len() as u64 > MAX_CONTENT {
        return Err(SignatureFailure::Unreadable(format!(
            "signed content larger than {MAX_CONTENT} bytes"
        )));
    }
    let Message::Signed { reader, .. } = &msg else {
        return Err(SignatureFailure::NotSigned);
    };
    let count = reader.num_signatures();
    if count == 0 {
        return Err(SignatureFailure::NotSigned);
    }
    let candidates = keyring.candidates();
    let mut unknown = Vec::new();
    let mut last_error = None;
    for index in 0..count {
        let Some(sig) = reader.signature(index) else {
            last_error = Some(SignatureFailure::Unreadable(
                "the signature packet is missing".to_string(),
            ));
            continue;
        };
        let issuers = issuers(sig);
        let matching: Vec<&Candidate<'_>> = candidates.iter().filter(|c| c.matches(&issuers)).collect();
        if matching.is_empty() {
            unknown.extend(issuers);
            continue;
        }
        if !matches!(sig.typ(), Some(SignatureType::Binary | SignatureType::Text)) {
            last_error = Some(SignatureFailure::BadSignature(format!(
                "not a document signature (type {:?})",
                sig.typ()
            )));
            continue;
        }
        for c in matching {
            match c.verify(sig, &content) {
                Ok(()) => {
                    expiry_check(sig, now)?;
                    return Ok(SignedContent {
                        content,
                        signer: c.fingerprint.clone(),
                    });
                }
                Err(e) => last_error = Some(SignatureFailure::BadSignature(e.to_string())),
            }
        }
    }
    Err(last_error.unwrap_or(SignatureFailure::UnknownKey(unknown)))
}

/// The issuer key ids (upper-case hex, 16 digits) and fingerprints (40 or 64 digits) a
/// signature claims.
fn issuers(sig: &Signature) -> Vec<String> {
    let mut out: Vec<String> = sig
        .issuer_key_id()
        .iter()
        .map(|id| id.to_string().to_uppercase())
        .collect();
    let fingerprints: Vec<String> = sig
        .issuer_fingerprint()
        .iter()
        .map(|fp| format!("{fp:X}"))
        .collect();
    // A key id that is the tail of a claimed fingerprint says nothing more.
    out.retain(|id| !fingerprints.iter().any(|fp| fp.ends_with(id.as_str())));
    out.extend(fingerprints);
    out.sort();
    out.dedup();
    out
}

fn expiry_check(sig: &Signature, now: SystemTime) -> Result<(), SignatureFailure> {
    let (Some(created), Some(lifetime)) = (sig.created(), sig.signature_expiration_time()) else {
        return Ok(());
    };
    if lifetime.as_secs() == 0 {
        return Ok(());
    }
    let expiry = SystemTime::UNIX_EPOCH
        + Duration::from_secs(created.as_secs().into())
        + Duration::from_secs(lifetime.as_secs().into());
    if now > expiry {
        let when: chrono::DateTime<chrono::Utc> = expiry.into();
        return Err(SignatureFailure::Expired(when.to_rfc3339()));
    }
    Ok(())
}
