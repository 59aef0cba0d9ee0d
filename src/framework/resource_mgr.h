// ResourceMgr: the state of one device that outlives steps and sessions — variables, and later
// queues, iterators and mutexes — looked up by (container, name). Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <vector>

#include "base/status.h"

namespace dflow {

class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  virtual std::string DebugString() const = 0;
};

class ResourceMgr {
 public:
  // The container used when a node names none.
  static constexpr const char* kDefaultContainer = "";

  template <typename T>
  StatusOr<std::shared_ptr<T>> Lookup(const std::string& container, const std::string& name) const;

  // Returns the existing resource, or stores the one `create` makes. `create` runs under the
  // manager's lock, so two concurrent callers get the same resource.
  template <typename T>
  StatusOr<std::shared_ptr<T>> LookupOrCreate(const std::string& container, const std::string& name,
                                              const std::function<StatusOr<std::shared_ptr<T>>()>& create);

  Status Delete(const std::string& container, const std::string& name);
  // Drops every resource of `container` (users still holding one keep it alive).
  void Cleanup(const std::string& container);
  std::vector<std::string> Containers() const;

 private:
  struct Entry {
    std::type_index type;
    std::shared_ptr<ResourceBase> resource;
  };
  using Key = std::pair<std::string, std::string>;
  Status TypeError(const Key& key, const Entry& e, const char* wanted) const;

  mutable std::mutex mu_;
  std::map<Key, Entry> resources_;
};

template <typename T>
StatusOr<std::shared_ptr<T>> ResourceMgr::Lookup(const std::string& container, const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = resources_.find({container, name});
  if (it == resources_.end()) {
    return errors::NotFound("Resource ", container.empty() ? "localhost" : container, "/", name, " does not exist");
  }
  if (it->second.type != std::type_index(typeid(T))) return TypeError(it->first, it->second, typeid(T).name());
  return std::static_pointer_cast<T>(it->second.resource);
}

template <typename T>
StatusOr<std::shared_ptr<T>> ResourceMgr::LookupOrCreate(const std::string& container, const std::string& name,
                                                         const std::function<StatusOr<std::shared_ptr<T>>()>& create) {
  std::lock_guard<std::mutex> l(mu_);
  Key key{container, name};
  auto it = resources_.find(key);
  if (it != resources_.end()) {
    if (it->second.type != std::type_index(typeid(T))) return TypeError(it->first, it->second, typeid(T).name());
    return std::static_pointer_cast<T>(it->second.resource);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<T> r, create());
  resources_.emplace(std::move(key), Entry{std::type_index(typeid(T)), r});
  return r;
}

}  // namespace dflow
