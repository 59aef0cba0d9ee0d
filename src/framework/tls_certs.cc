// GenerateClusterCredentials: a secret, a chief secret and a private CA with one certificate for
// every task of a cluster (OpenSSL; ECDSA P-256).
#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/credentials.h"

namespace dflow {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Free>;

// Validity of generated certificates.
constexpr long kValiditySeconds = 10L * 365 * 24 * 3600;

Status OpenSslError(const char* what) {
  char buf[256] = "unknown error";
  unsigned long e = ERR_get_error();
  if (e != 0) ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return errors::Internal("Cannot generate TLS credentials (", what, "): ", buf);
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) return OpenSslError("extension");
  return absl::OkStatus();
}

// A certificate for `key`'s public half named `cn`, signed by `issuer_key` (`issuer` null: by
// itself).
StatusOr<Owned<X509>> MakeCert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key) {
  Owned<X509> cert(X509_new());
  if (cert == nullptr || X509_set_version(cert.get(), 2) != 1) return OpenSslError("certificate");
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) return OpenSslError("serial");
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  ASN1_INTEGER* sn = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  if (sn == nullptr) return OpenSslError("serial");
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // clocks a little behind
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValiditySeconds);
  if (X509_set_pubkey(cert.get(), key) != 1) return OpenSslError("public key");
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("dflow"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) != 1) return OpenSslError("issuer");
  return cert;
}

StatusOr<std::string> ToPem(X509* cert) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), cert) != 1) return OpenSslError("PEM");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

StatusOr<std::string> ToPem(EVP_PKEY* key) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslError("PEM");
  }
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

// "DNS:name" or "IP:address" for a task's host ("[::1]" unbracketed).
std::string AltName(std::string host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned char buf[16];
  if (inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1) {
    return "IP:" + host;
  }
  return "DNS:" + host;
}

bool UsableHost(const std::string& host) {
  if (host.empty() || host.size() > 253) return false;
  for (char c : host) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']' ||
          c == '_')) {
      return false;
    }
  }
  return true;
}

}  // namespace

StatusOr<ClusterCredentials> GenerateClusterCredentials(const std::vector<std::string>& hosts, bool mutual_tls) {
  ClusterCredentials c;
  ASSIGN_OR_RETURN(c.secret, NewSecret());
  ASSIGN_OR_RETURN(c.chief_secret, NewSecret());
  c.chief_secret_sha256 = Sha256Hex(c.chief_secret);
  c.server_name = "dflow.cluster";
  c.mutual_tls = mutual_tls;

  Owned<EVP_PKEY> ca_key(EVP_EC_gen("P-256"));
  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (ca_key == nullptr || key == nullptr) return OpenSslError("key");
  ASSIGN_OR_RETURN(Owned<X509> ca, MakeCert(ca_key.get(), "dflow cluster CA", nullptr, nullptr));
  RETURN_IF_ERROR(AddExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  RETURN_IF_ERROR(AddExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign"));
  RETURN_IF_ERROR(AddExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(ca.get(), ca_key.get(), EVP_sha256()) == 0) return OpenSslError("signing the CA");

  ASSIGN_OR_RETURN(Owned<X509> cert, MakeCert(key.get(), c.server_name, ca.get(), ca_key.get()));
  std::set<std::string> names = {"DNS:" + c.server_name, "DNS:localhost", "IP:127.0.0.1", "IP:::1"};
  for (const std::string& h : hosts) {
    if (!UsableHost(h)) return errors::InvalidArgument("Host '", h, "' cannot be named in a certificate");
    names.insert(AltName(h));
  }
  RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE"));
  RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_key_usage, "critical,digitalSignature,keyAgreement"));
  RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_ext_key_usage, "serverAuth,clientAuth"));
  RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_subject_alt_name, absl::StrJoin(names, ",")));
  RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_authority_key_identifier, "keyid:always"));
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) return OpenSslError("signing the certificate");

  ASSIGN_OR_RETURN(c.ca_pem, ToPem(ca.get()));
  ASSIGN_OR_RETURN(c.cert_pem, ToPem(cert.get()));
  ASSIGN_OR_RETURN(c.key_pem, ToPem(key.get()));
  return c;
}

}  // namespace dflow
