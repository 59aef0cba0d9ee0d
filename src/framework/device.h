// Device: a place where kernels run and state lives (one per task and device type).
#pragma once

#include <memory>
#include <string>

#include "framework/device_name.h"
#include "framework/resource_mgr.h"

namespace dflow {

class Env;
class FilePolicy;

class Device {
 public:
  // `name` is a full name: "/job:localhost/replica:0/task:0/device:CPU:0".
  Device(std::string name, std::string device_type);
  virtual ~Device() = default;

  const std::string& name() const { return name_; }
  const DeviceName& parsed_name() const { return parsed_; }
  const std::string& device_type() const { return type_; }
  ResourceMgr* resource_manager() { return &resources_; }

  // The directories under which kernels on this device may touch files (framework/file_policy.h).
  // Null (the default) allows everything: in-process sessions run the user's own program. A
  // server sets its policy once, before the device runs any kernel (not thread-safe against
  // running kernels).
  void set_file_policy(std::shared_ptr<const FilePolicy> policy);
  const FilePolicy* file_policy() const { return file_policy_.get(); }
  const std::shared_ptr<const FilePolicy>& shared_file_policy() const { return file_policy_; }
  // The Env through which kernels do their file operations: a PolicyEnv over Env::Default() (as
  // it is at each call) that checks every path against the policy, and passes every call
  // through unchanged without one. Datasets keep it for their iterators.
  const std::shared_ptr<Env>& file_env() const { return file_env_; }

 private:
  std::string name_;
  std::string type_;
  DeviceName parsed_;
  ResourceMgr resources_;
  std::shared_ptr<const FilePolicy> file_policy_;
  std::shared_ptr<Env> file_env_;
};

}  // namespace dflow
