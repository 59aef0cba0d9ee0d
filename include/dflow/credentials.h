// Cluster credentials: what the tasks and clients of a dflow cluster prove themselves with, and
// what they trust. Every RPC carries the cluster secret, and servers check it before doing
// anything; TLS (certificates signed by the cluster's CA) encrypts the traffic and proves the
// servers' identity; calls that end or wipe the job (JobComplete, Reset) also need the chief's
// secret, which only the chief holds (the other tasks hold its SHA-256).
//
// On disk a credentials directory (mode 0700, files 0600) holds one file per field:
//   secret               the cluster secret (hex)
//   chief_secret         the chief's secret (the chief's copy only)
//   chief_secret.sha256  its SHA-256 (hex): every task's copy
//   ca.crt               the CA that signed the servers' certificates (PEM)
//   tls.crt, tls.key     this task's certificate and key (PEM): served by servers, shown by
//                        clients under mutual TLS
//   server_name          the name servers' certificates are checked for instead of the host
//   mutual_tls           present: servers require client certificates signed by ca.crt
// `dflow credentials create DIR` writes one; `dflow launch` makes a fresh one per cluster.
#pragma once

#include <string>
#include <vector>

#include "dflow/status.h"

namespace dflow {

struct ClusterCredentials {
  // Explicitly none: plaintext, no secret (`--insecure`). Nothing else may be set with it.
  bool insecure = false;
  std::string secret;
  std::string chief_secret;
  std::string chief_secret_sha256;  // hex, lower case
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;
  std::string server_name;
  bool mutual_tls = false;

  bool tls() const { return !ca_pem.empty(); }
  // Whether anything was chosen (a secret, TLS, or insecure on purpose).
  bool IsSet() const { return insecure || !secret.empty() || tls(); }
  // Whether these credentials may act as the chief (they hold the chief's secret).
  bool chief() const { return !chief_secret.empty(); }
  // InvalidArgument naming what is inconsistent (insecure with a secret, a certificate without its
  // key, mutual TLS without a certificate, a secret that is too short).
  Status Validate() const;
  // A copy without the chief's secret (its SHA-256 kept): what the other tasks are given.
  ClusterCredentials WithoutChief() const;
  // A copy without TLS (CA, certificate, key, server name, mutual TLS): the secrets are still
  // checked, but the traffic is plaintext.
  ClusterCredentials WithoutTls() const;
};

// The environment variable that names a credentials directory for servers and clients that are
// given none in code or flags (`dflow launch` sets it for every task).
inline constexpr char kCredentialsEnv[] = "DFLOW_CREDENTIALS";

// Reads a credentials directory. NotFound when it does not exist; PermissionDenied when it or a
// file in it can be read or written by other users (the secret would not be secret).
StatusOr<ClusterCredentials> LoadCredentials(const std::string& dir);
// Writes `creds` into `dir` (created with mode 0700; files 0600, written atomically).
Status WriteCredentials(const ClusterCredentials& creds, const std::string& dir);

// Fresh credentials for a cluster: a secret, a chief secret, a CA and one certificate for every
// task, valid for `hosts`, localhost, 127.0.0.1, ::1 and the name "dflow.cluster" (set as
// `server_name`, so the certificate holds whatever address a task has).
StatusOr<ClusterCredentials> GenerateClusterCredentials(const std::vector<std::string>& hosts, bool mutual_tls = false);

}  // namespace dflow
