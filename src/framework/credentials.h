// Cluster credentials (the public part: include/dflow/credentials.h) and the helpers only dflow
// itself uses: secrets, hashes and the per-user credential store.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "dflow/credentials.h"

namespace dflow {

// 32 random bytes from the kernel, as 64 hex digits.
StatusOr<std::string> NewSecret();
// SHA-256 of `data`, as 64 lower-case hex digits.
std::string Sha256Hex(const std::string& data);
// Whether `a` equals `b`, in time that depends only on their lengths' hashes: both are hashed and
// the digests compared without an early exit.
bool ConstantTimeEquals(const std::string& a, const std::string& b);

// The per-user store that makes a hand-started local cluster secure with no user action:
// $DFLOW_CONFIG_DIR, else $XDG_CONFIG_HOME/dflow, else $HOME/.config/dflow (mode 0700, owned by
// this user). A server started without credentials keeps its cluster's credentials there, under
// a key of the cluster, and records which cluster each of its addresses serves; a client of the
// same user that is given none finds them by its target's address. Other users cannot read them.
std::string CredentialStoreRoot();
// The credentials of cluster `key`, made (and stored) when there are none yet. Safe when several
// tasks of one cluster start at once: one writes, the others read what it wrote. `created` (may
// be null) tells which.
StatusOr<ClusterCredentials> LoadOrCreateStoredCredentials(const std::string& key, bool* created);
// Records that host:port serves cluster `key` (a loopback host is recorded as any loopback name).
Status PublishStoredTarget(const std::string& host, int port, const std::string& key);
// Removes that record, when it still names `key`; and the cluster's credentials when
// `remove_cluster` (an ephemeral cluster, made for one server).
void UnpublishStoredTarget(const std::string& host, int port, const std::string& key, bool remove_cluster);
// The stored credentials for a client of host:port. NotFound when none are recorded.
StatusOr<ClusterCredentials> FindStoredCredentials(const std::string& host, int port);

}  // namespace dflow
