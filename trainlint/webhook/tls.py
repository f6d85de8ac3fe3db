"""TLS for the webhook: strict server contexts, the service-name check, hot reload, and a
self-signed CA for local use."""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: TLS 1.2 suites allowed when 1.2 is opted in: forward-secret and AEAD only.
TLS12_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"


class CertificateError(ValueError):
    """The certificate cannot serve the webhook (unreadable, or for another name)."""


def service_names(service: str, namespace: str) -> list[str]:
    """The names the API server may dial: it verifies `<service>.<namespace>.svc`."""
    return [service, f"{service}.{namespace}", f"{service}.{namespace}.svc",
            f"{service}.{namespace}.svc.cluster.local"]


def server_context(cert: Path, key: Path, *, allow_tls12: bool = False) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2 if allow_tls12 else ssl.TLSVersion.TLSv1_3
    context.set_ciphers(TLS12_CIPHERS)
    context.options |= ssl.OP_NO_COMPRESSION | ssl.OP_NO_RENEGOTIATION
    context.set_alpn_protocols(["http/1.1"])
    try:
        context.load_cert_chain(cert, key)  # also checks that the key is the certificate's
    except (OSError, ssl.SSLError) as error:
        raise CertificateError(f"cannot load {cert} and {key}: {error}") from None
    return context


def read_certificate(path: Path) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError) as error:
        raise CertificateError(f"cannot read the certificate {path}: {error}") from None


def require_name(certificate: x509.Certificate, name: str) -> None:
    """Refuse a certificate the API server would reject for `name`."""
    try:
        san = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        raise CertificateError("the certificate has no subjectAltName extension") from None
    names = san.value.get_values_for_type(x509.DNSName)
    if name not in names:
        raise CertificateError(
            f"the certificate is for {', '.join(names) or 'no DNS name'}, not {name}: "
            "the API server would refuse every call"
        )


def expiry(certificate: x509.Certificate) -> float:
    return certificate.not_valid_after_utc.timestamp()


def serves(context: ssl.SSLContext, certificate: x509.Certificate) -> None:
    """Refuse a context that cannot complete a handshake serving `certificate`: one is
    made in memory, as a client would make it."""
    client_side = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client_side.check_hostname = False
    client_side.verify_mode = ssl.CERT_NONE
    client_side.set_alpn_protocols(["http/1.1"])
    wires = [ssl.MemoryBIO(), ssl.MemoryBIO()]  # client → server, server → client
    client = client_side.wrap_bio(wires[1], wires[0], server_side=False)
    server = context.wrap_bio(wires[0], wires[1], server_side=True)
    pending = [client, server]
    try:
        for _ in range(8):  # a TLS 1.3 handshake takes two round trips; 1.2 takes three
            for side in list(pending):
                try:
                    side.do_handshake()
                    pending.remove(side)
                except ssl.SSLWantReadError:
                    pass
            if not pending:
                break
    except ssl.SSLError as error:
        raise CertificateError(f"no handshake can be made with the new pair: {error}") from None
    served = client.getpeercert(binary_form=True)
    if pending or served != certificate.public_bytes(serialization.Encoding.DER):
        raise CertificateError("the files changed while they were read; retrying")


class Reloader:
    """The serving context, and the mounted files it comes from, polled for changes.

    A changed pair is built into a context of its own and proven (its name, its key, a
    handshake) before it serves; until then the last good one goes on serving. A Secret
    update can land the certificate a moment before its key: that half-written pair is
    refused and retried when the files change again. The listening context picks the
    current one for every new handshake (its SNI callback, called with or without a
    server name); open connections keep theirs, none is dropped."""

    def __init__(self, cert: Path, key: Path, name: str, *, allow_tls12: bool = False) -> None:
        self.cert = cert
        self.key = key
        self.name = name
        self.allow_tls12 = allow_tls12
        self._digest = self._read_digest()
        self._refused = b""
        self.current, self.expires = self._build()
        #: What the server listens with; it hands each handshake to `current`.
        self.context = self.current
        self.context.sni_callback = self._select

    def _select(self, connection: ssl.SSLObject, _name: str | None,
                context: ssl.SSLContext) -> None:
        if context is not self.current:
            connection.context = self.current

    def _read_digest(self) -> bytes:
        try:
            return hashlib.sha256(self.cert.read_bytes() + self.key.read_bytes()).digest()
        except OSError:
            return b""

    def _build(self) -> tuple[ssl.SSLContext, float]:
        certificate = read_certificate(self.cert)
        require_name(certificate, self.name)
        context = server_context(self.cert, self.key, allow_tls12=self.allow_tls12)
        serves(context, certificate)
        return context, expiry(certificate)

    def poll(self) -> bool:
        """Serve the files if they changed and make a complete pair for the name; True if
        they now serve. CertificateError says why a changed pair was refused (once per
        change: the same bytes would be refused again)."""
        digest = self._read_digest()
        if not digest or digest in (self._digest, self._refused):
            return False
        try:
            self.current, self.expires = self._build()
        except CertificateError:
            self._refused = digest
            raise
        self._digest = digest
        return True


@dataclass(frozen=True)
class SelfSigned:
    """Files written by `generate`: the CA to trust, and the serving pair."""

    ca: Path
    cert: Path
    key: Path


def generate(folder: Path, names: list[str], *, days: int = 30) -> SelfSigned:
    """A throwaway CA and a leaf for `names` (plus localhost, 127.0.0.1 and ::1)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    # A unique name per CA: clients trusting an old and a new CA pick the right one.
    unique = f"trainlint local CA {x509.random_serial_number():x}"[:64]
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, unique)])
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key(), now, days)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                       critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alt: list[x509.GeneralName] = [x509.DNSName(name) for name in [*names, "localhost"]]
    alt += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ("127.0.0.1", "::1")]
    leaf = (
        _builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]), ca_name,
                 key.public_key(), now, days)
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    files = SelfSigned(folder / "ca.crt", folder / "tls.crt", folder / "tls.key")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files.key.touch(mode=0o600)
    files.key.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ))
    return files


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey,
    now: datetime.datetime, days: int,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
    )
